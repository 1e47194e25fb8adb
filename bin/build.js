#!/usr/bin/env node
// Bundles the TypeScript sources into dist/tollgate.js, the CSV export's worker thread into
// dist/logs-export-worker.js, the large-body JSON parser's into dist/json-parse-worker.js and the price dataset's child process into dist/price-dataset-process.js
// (dependencies stay external), so the gateway runs without a TypeScript loader: about 50 MB less
// memory and no transpiling at start-up.
// Runs on `npm install` / `npm ci` (prepare), before `npm start` and before `npm test`.
import { readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

await build({
  entryPoints: {
    tollgate: new URL('../tollgate.ts', import.meta.url).pathname,
    'logs-export-worker': new URL('../core/admin/logs-export-worker.ts', import.meta.url).pathname,
    'json-parse-worker': new URL('../core/http/json-parse-worker.ts', import.meta.url).pathname,
    'price-dataset-process': new URL('../core/money/price-dataset-process.ts', import.meta.url).pathname,
  },
  outdir: new URL('../dist', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.18',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});

// esbuild escapes non-ASCII characters in strings and regexes but keeps the comments it retains
// (those inside object literals) as written. One such character makes V8 hold the whole bundle's
// source as a two-byte string: twice the memory, for as long as the process runs. Those comments
// get \u escapes instead (no code follows a retained `//` comment on its line, so the source map's
// columns stay right).
for (const name of ['tollgate.js', 'logs-export-worker.js', 'json-parse-worker.js', 'price-dataset-process.js']) {
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
