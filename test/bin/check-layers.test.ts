/** `bin/check-layers.js` (run by .ci/run): planted violations in a scratch tree, and the repository itself. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/tmp.ts';

const SCRIPT = fileURLToPath(new URL('../../bin/check-layers.js', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

function checkLayers(root: string) {
  const result = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function plant(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

test('reports every import that crosses a layer, with file, line and rule, and exits 1', () => {
  const root = tempDir();
  plant(root, {
    'core/money/money.ts': "// import { x } from '../plugins/pricing/index.ts' is only a comment\nexport const usd = 1;\n",
    'core/admin/routes.ts': "import { usd } from '../money.ts';\nimport { book } from '../../plugins/pricing/price-book.ts';\nexport const a = usd + book;\n",
    'cli/serve.ts': "import type { Registry } from '../plugins/index.ts';\nexport type R = Registry;\n",
    'plugins/index.ts': "export * from './pricing/index.ts';\nexport * from './budget/index.ts';\n",
    'plugins/pricing/index.ts': "import { usd } from '../../core/money/money.ts';\nimport { book } from './price-book.ts';\nexport const pricing = usd + book;\n",
    'plugins/pricing/price-book.ts': 'export const book = 2;\n',
    'plugins/budget/index.ts': "const text = \"from '../pricing/index.ts'\";\nexport const budget = async () => (await import('../pricing/price-book.ts')).book + text.length;\n",
    'plugins/budget/service.ts': "declare module '../account/service.ts' {\n  interface Services { budget: number }\n}\nexport {};\n",
  });
  const { code, stdout, stderr } = checkLayers(root);
  assert.equal(code, 1);
  assert.equal(stdout, '');
  assert.equal(stderr, [
    'Layer check failed: 4 imports cross a layer (rules: the top of bin/check-layers.js):',
    "  core/admin/routes.ts:2: imports '../../plugins/pricing/price-book.ts': core/ knows no plugin",
    "  cli/serve.ts:1: imports '../plugins/index.ts': cli/ imports no plugin (it is handed the registry)",
    "  plugins/budget/index.ts:2: imports '../pricing/price-book.ts': plugin \"budget\" imports plugin \"pricing\" (plugins talk through core/services.ts)",
    "  plugins/budget/service.ts:1: imports '../account/service.ts': plugin \"budget\" imports plugin \"account\" (plugins talk through core/services.ts)",
    'Move shared code into core/ (a domain module, or a service interface in core/services.ts), or pass it in from the composition root.',
    '',
  ].join('\n'));
});

test('passes on a tree whose imports stay in their layers', () => {
  const root = tempDir();
  plant(root, {
    'tollgate.ts': "import { registry } from './plugins/index.ts';\nimport { run } from './cli/main.ts';\nrun(registry);\n",
    'cli/main.ts': "import { usd } from '../core/money/money.ts';\nexport const run = (r: unknown) => [r, usd];\n",
    'core/money/money.ts': "import { readFileSync } from 'node:fs';\nexport const usd = readFileSync;\n",
    'plugins/index.ts': "import { pricing } from './pricing/index.ts';\nexport const registry = [pricing];\n",
    'plugins/pricing/index.ts': "import { usd } from '../../core/money/money.ts';\nexport const pricing = usd;\n",
  });
  const { code, stderr } = checkLayers(root);
  assert.equal(stderr, '');
  assert.equal(code, 0);
});

test('passes on this repository', () => {
  const { code, stdout, stderr } = checkLayers(REPO);
  assert.equal(stderr, '');
  assert.equal(code, 0);
  assert.match(stdout, /^Layer check passed/);
});

test('reports imports that cross a room of core/, and import cycles; a type-only cycle of contracts passes', () => {
  const root = tempDir();
  plant(root, {
    'core/runtime/clock.ts': "import { usd } from '../money/money.ts';\nexport const now = usd;\n",
    'core/money/money.ts': "import { relay } from '../proxy/relay.ts';\nexport const usd = relay;\n",
    'core/proxy/relay.ts': "import type { Exchange } from '../exchange.ts';\nexport const relay = 1 as unknown as Exchange;\n",
    'core/exchange.ts': "import type { Dialect } from './dialects/dialect.ts';\nexport type Exchange = { dialect: Dialect };\n",
    'core/dialects/dialect.ts': "import type { Exchange } from '../exchange.ts';\nexport type Dialect = { render(ex: Exchange): string };\n",
    'core/tokens/a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
    'core/tokens/b.ts': "import type { a } from './a.ts';\nexport const b = 1 as typeof a;\n",
  });
  const { code, stderr } = checkLayers(root);
  assert.equal(code, 1);
  const lines = stderr.split('\n');
  assert.ok(lines.includes("  core/money/money.ts:1: imports '../proxy/relay.ts': money/ is domain code the CLI, the admin API and plugins share: it does not pull in the request path (proxy)"), stderr);
  assert.ok(lines.includes("  core/runtime/clock.ts:1: imports '../money/money.ts': runtime/ is the base every room stands on (clock, log, metrics): it imports nothing else of core/"), stderr);
  assert.ok(lines.some((l) => l.startsWith("  core/tokens/a.ts:1: imports './b.ts': import cycle between core/tokens/a.ts, core/tokens/b.ts")), stderr);
  assert.ok(!stderr.includes('core/exchange.ts'), 'the contracts may name each other through import type');
  assert.match(lines[0] ?? '', /^Layer check failed: 3 imports/);
});

test('a plugin built on the public SDK (cache, guardrails) may import only core/sdk/index.ts and its own folder', () => {
  const root = tempDir();
  plant(root, {
    'core/sdk/index.ts': 'export const definePlugin = (x: unknown) => x;\n',
    'core/errors.ts': 'export const e = 1;\n',
    'plugins/guardrails/index.ts': "import { definePlugin } from '../../core/sdk/index.ts';\nimport { find } from './detectors.ts';\nexport default definePlugin(find);\n",
    'plugins/guardrails/detectors.ts': "import { e } from '../../core/errors.ts';\nexport const find = e;\n",
    'plugins/pricing/index.ts': "import { e } from '../../core/errors.ts';\nexport const pricing = e;\n",
  });
  const { code, stderr } = checkLayers(root);
  assert.equal(code, 1);
  assert.match(stderr, /plugins\/guardrails\/detectors\.ts:1: imports '\.\.\/\.\.\/core\/errors\.ts': plugin "guardrails" is built on the public plugin SDK alone/);
  assert.doesNotMatch(stderr, /guardrails\/index\.ts|pricing/);
});
