#!/usr/bin/env node
// Checks who imports whom (the architecture's "Layers" rule). Run by .ci/run before the tests;
// `node bin/check-layers.js [root]` checks another tree (the tests plant violations in one).
//
//   core/      imports neither a plugin, nor the CLI, nor the composition root (tollgate.ts);
//   cli/       imports no plugin and not the composition root: it is handed the plugin registry;
//   plugins/X/ imports core/ and its own folder only: no other plugin (plugins talk through the
//              services declared in core/services.ts), not the registry, not the CLI.
// The registry (plugins/index.ts) and the composition root may import any plugin.
//
// Imports are read with TypeScript's own pre-processor (already a dev dependency, used by
// `tsc --noEmit`), so static, type-only, re-exports, dynamic `import()` and `declare module`
// augmentations all count, and nothing in a comment or a string does.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SOURCE_FILE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const CHECKED_DIRS = ['core', 'cli', 'plugins'];
const COMPOSITION_ROOT = 'tollgate.ts';

/** A repo-relative path with `/` separators. */
function toPosix(path) {
  return path.split(sep).join('/');
}

/** Which part of the tree a repo-relative path is in. */
function partOf(path) {
  if (path === COMPOSITION_ROOT) return { layer: 'root' };
  const [top, second, third] = path.split('/');
  if (top === 'core' || top === 'cli') return { layer: top };
  if (top === 'plugins') return third === undefined ? { layer: 'registry' } : { layer: 'plugin', plugin: second };
  return { layer: 'other' };
}

/** Why `from` may not import `to` (both repo-relative), or null when it may. */
export function ruleBroken(from, to) {
  const source = partOf(from);
  const target = partOf(to);
  const forbiddenEverywhere = target.layer === 'root' ? 'nothing imports the composition root (tollgate.ts)' : null;
  switch (source.layer) {
    case 'core':
      if (target.layer === 'plugin' || target.layer === 'registry') return 'core/ knows no plugin';
      if (target.layer === 'cli') return 'core/ does not import the CLI';
      return forbiddenEverywhere;
    case 'cli':
      if (target.layer === 'plugin' || target.layer === 'registry') return 'cli/ imports no plugin (it is handed the registry)';
      return forbiddenEverywhere;
    case 'plugin':
      if (target.layer === 'plugin' && target.plugin !== source.plugin) {
        return `plugin "${source.plugin}" imports plugin "${target.plugin}" (plugins talk through core/services.ts)`;
      }
      if (target.layer === 'registry') return 'a plugin does not import the plugin registry';
      if (target.layer === 'cli') return 'a plugin does not import the CLI';
      return forbiddenEverywhere;
    default:
      return null;
  }
}

function sourceFiles(root) {
  const files = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // a tree without this folder has nothing to check there
    }
    for (const entry of entries.sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else if (SOURCE_FILE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push(path);
      }
    }
  };
  for (const dir of CHECKED_DIRS) walk(join(root, dir));
  return files;
}

function lineOf(text, pos) {
  let line = 1;
  for (let i = 0; i < pos; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Every import under core/, cli/ and plugins/ of `root` that breaks a layer rule, as
 * `{ file, line, specifier, reason }` (file repo-relative, line 1-based), in file order.
 * Bare specifiers (packages, `node:`) are never checked.
 */
export function findLayerViolations(root) {
  const violations = [];
  for (const path of sourceFiles(root)) {
    const text = readFileSync(path, 'utf8');
    const file = toPosix(relative(root, path));
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const specifier = ref.fileName;
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) continue;
      const target = toPosix(relative(root, resolve(dirname(path), specifier)));
      const reason = ruleBroken(file, target);
      if (reason) violations.push({ file, line: lineOf(text, ref.pos), specifier, reason });
    }
  }
  return violations;
}

/** The report for people: one line per violation, then what to do. */
export function formatViolations(violations) {
  const lines = violations.map((v) => `${v.file}:${v.line}: imports '${v.specifier}': ${v.reason}`);
  return [
    `Layer check failed: ${violations.length} import${violations.length === 1 ? '' : 's'} cross a layer (rules: the top of bin/check-layers.js):`,
    ...lines.map((l) => `  ${l}`),
    'Move shared code into core/ (a domain module, or a service interface in core/services.ts), or pass it in from the composition root.',
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
  const violations = findLayerViolations(root);
  if (violations.length > 0) {
    process.stderr.write(formatViolations(violations) + '\n');
    process.exit(1);
  }
  process.stdout.write(`Layer check passed: core/, cli/ and plugins/ import only what their layer may (${root}).\n`);
}
