#!/usr/bin/env node
// Bundles the TypeScript sources into dist/tollgate.js, the CSV export's worker thread into
// dist/logs-export-worker.js, the large-body JSON parser's into dist/json-parse-worker.js and the price dataset's child process into dist/price-dataset-process.js
// (dependencies stay external), so the gateway runs without a TypeScript loader: about 50 MB less
// memory and no transpiling at start-up.
// Runs on `npm install` / `npm ci` (prepare), before `npm start` and before `npm test`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

await build({
  entryPoints: {
    tollgate: new URL('../tollgate.ts', import.meta.url).pathname,
    'logs-export-worker': new URL('../core/admin/logs-export-worker.ts', import.meta.url).pathname,
    'json-parse-worker': new URL('../core/http/json-parse-worker.ts', import.meta.url).pathname,
    'price-dataset-process': new URL('../core/money/price-dataset-process.ts', import.meta.url).pathname,
    // `tollgate/plugin` (package.json "exports"): the plugin SDK an operator's plugin imports.
    plugin: new URL('../core/sdk/index.ts', import.meta.url).pathname,
  },
  outdir: new URL('../dist', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.18',
  packages: 'external',
  sourcemap: 'linked',
  // The map names the sources without their text (which is beside it in the package): every process
  // run under NODE_V8_COVERAGE (the tests' children) writes the whole map into its coverage file.
  sourcesContent: false,
  logLevel: 'warning',
});

// esbuild escapes non-ASCII characters in strings and regexes but keeps the comments it retains
// (those inside object literals) as written. One such character makes V8 hold the whole bundle's
// source as a two-byte string: twice the memory, for as long as the process runs. Those comments
// get \u escapes instead (no code follows a retained `//` comment on its line, so the source map's
// columns stay right).
for (const name of ['tollgate.js', 'logs-export-worker.js', 'json-parse-worker.js', 'price-dataset-process.js', 'plugin.js']) {
  const path = new URL(`../dist/${name}`, import.meta.url).pathname;
  const source = readFileSync(path, 'utf8');
  // eslint-disable-next-line no-control-regex
  const ascii = source.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== source) writeFileSync(path, ascii);
}

// gpt-tokenizer's o200k_base rank table as JSON beside the bundle (core/tokens/o200k-tokenizer.ts): parsing
// JSON leaves ~14 MB less resident than compiling the library's array-literal module.
const { default: o200kRanks } = await import('gpt-tokenizer/bpeRanks/o200k_base');
writeFileSync(new URL('../dist/o200k_base.json', import.meta.url), JSON.stringify(o200kRanks));

// The module-resolution hooks that point `tollgate/plugin` at this build (core/sdk/load-modules.ts looks
// for them beside the bundle), copied as they are: they run on Node's loader thread, plain JavaScript.
copyFileSync(new URL('../core/sdk/plugin-resolve-hooks.mjs', import.meta.url), new URL('../dist/plugin-resolve-hooks.mjs', import.meta.url));

// The SDK's type declarations (dist/types/core/sdk/index.d.ts, package.json "exports" types), for plugin
// authors who write TypeScript or want their editor's help. TypeScript is a development dependency: an
// install without it (npm ci --omit=dev) runs plugins all the same, without the declarations.
const require = createRequire(import.meta.url);
let tsc = null;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  process.stderr.write('build: typescript is not installed, so the plugin SDK\'s type declarations (dist/types/) are not written\n');
}
if (tsc) {
  const result = spawnSync(process.execPath, [tsc, '-p', new URL('../tsconfig.sdk.json', import.meta.url).pathname], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
