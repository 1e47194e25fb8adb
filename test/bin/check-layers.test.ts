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
    'core/money.ts': "// import { x } from '../plugins/pricing/index.ts' is only a comment\nexport const usd = 1;\n",
    'core/admin/routes.ts': "import { usd } from '../money.ts';\nimport { book } from '../../plugins/pricing/price-book.ts';\nexport const a = usd + book;\n",
    'cli/serve.ts': "import type { Registry } from '../plugins/index.ts';\nexport type R = Registry;\n",
    'plugins/index.ts': "export * from './pricing/index.ts';\nexport * from './budget/index.ts';\n",
    'plugins/pricing/index.ts': "import { usd } from '../../core/money.ts';\nimport { book } from './price-book.ts';\nexport const pricing = usd + book;\n",
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
    'cli/main.ts': "import { usd } from '../core/money.ts';\nexport const run = (r: unknown) => [r, usd];\n",
    'core/money.ts': "import { readFileSync } from 'node:fs';\nexport const usd = readFileSync;\n",
    'plugins/index.ts': "import { pricing } from './pricing/index.ts';\nexport const registry = [pricing];\n",
    'plugins/pricing/index.ts': "import { usd } from '../../core/money.ts';\nexport const pricing = usd;\n",
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
