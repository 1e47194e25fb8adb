#!/usr/bin/env node
// Entry point for `npx tollgate` / `npm start`. Runs the bundle in dist/ (built by `npm install`,
// `npm start` and `npm test`) when it is newer than every source file; otherwise runs the
// TypeScript sources through tsx, so an edited checkout never runs stale code.
// TOLLGATE_FROM_SOURCE=1 always runs the sources (TOLLGATE_FROM_SOURCE=0 only ever runs the bundle check
// above, like unset). The tests' child processes run the bundle: c8 maps its coverage to the sources.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'tollgate.js');

function newestSourceMs() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of ['core', 'plugins', 'cli']) walk(join(root, dir));
  return Math.max(newest, statSync(join(root, 'tollgate.ts')).mtimeMs);
}

function bundleIsFresh() {
  try {
    return statSync(bundle).mtimeMs >= newestSourceMs();
  } catch {
    return false;
  }
}

if (process.env.TOLLGATE_FROM_SOURCE !== '1' && bundleIsFresh()) {
  process.env.TOLLGATE_RUNNING_FROM = 'bundle dist/tollgate.js';
  await import(bundle);
} else {
  process.env.TOLLGATE_RUNNING_FROM = 'TypeScript sources (tsx)';
  const { register } = await import('tsx/esm/api');
  register();
  await import('../tollgate.ts');
}
