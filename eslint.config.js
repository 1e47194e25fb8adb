// ESLint (flat config), run by `npm run lint` and .ci/run. TypeScript is linted with type information
// (typescript-eslint's projectService reads tsconfig.json), so the rules that need types (floating
// promises, unsafe `any`) see what `tsc` sees.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Node's globals, for the plain-JS scripts (bin/, test/run-tests.js); the TS files get them from @types/node. */
const NODE_GLOBALS = Object.fromEntries([
  'process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'AbortController', 'AbortSignal', 'TextEncoder',
  'TextDecoder', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate',
  'queueMicrotask', 'structuredClone', 'performance', 'fetch', 'globalThis',
].map((name) => [name, 'readonly']));

/**
 * Files on a request's path: per-request code there builds objects without `{ ...a, b }`. Left out:
 * what runs once, at boot (the manifest, route and OpenAPI declarations, config schemas).
 */
const HOT_PATH = [
  'core/server.ts', 'core/pipeline.ts', 'core/errors.ts', 'core/exchange.ts', 'core/http/**/*.ts', 'core/proxy/**/*.ts',
  'core/upstream/**/*.ts', 'core/canonical/**/*.ts', 'core/tokens/**/*.ts', 'core/request-log/**/*.ts',
  'core/coordination/**/*.ts', 'core/dialects/**/*.ts', 'plugins/**/*.ts',
];
const BOOT_ONLY = ['**/openapi.ts', '**/openapi-schemas.ts', '**/request-schema.ts', 'plugins/*/schema.ts', 'plugins/*/routes.ts'];

export default defineConfig(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'admin-static/**', 'portal-static/**', 'data/**', 'test-artifacts/**'] },
  {
    // The CLI entry, the build and CI scripts, the test runner: plain Node ESM.
    files: ['**/*.js', '**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: NODE_GLOBALS },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test runs a test or suite whose promise is left alone and reports its failure.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }],
      }],
      // `_`-named bindings are deliberately unused: a rest sibling left out (`{ stream: _stream, ...rest }`),
      // a parameter a subclass needs and the base does not.
      '@typescript-eslint/no-unused-vars': ['error', {
        argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_',
      }],
      // `{}` is `unknown` narrowed by a null check (`x ?? ''`, `if (x == null) return`): stringified no
      // more strictly than `unknown` itself, which the rule leaves alone by default.
      '@typescript-eslint/no-base-to-string': ['error', { ignoredTypeNames: ['Error', 'RegExp', 'URL', 'URLSearchParams', '{}'] }],
      // Off: an async method of an interface that PostgreSQL implements with awaits may have nothing to
      // await on SQLite, and keeps `async` so that its throw still reaches the caller as a rejection.
      '@typescript-eslint/require-await': 'off',
      // The project forbids only the spread that costs (below); `Object.assign({}, a, { b })` is the
      // form it asks for on the request path.
      'prefer-object-spread': 'off',
    },
  },
  {
    files: HOT_PATH,
    ignores: BOOT_ONLY,
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'ObjectExpression > SpreadElement:first-child:not(:last-child)',
        message: 'On Node 20\'s V8 an object literal that starts with a spread and goes on (`{ ...a, b }`, `{ ...a, ...c }`) gets a new hidden class every time it runs: write `Object.assign({}, a, { b })` or name the fields (core/http/live-exchange.ts says why).',
      }],
    },
  },
  {
    // The plugin seam: what a plugin author's code receives and hands back is typed, never `any`
    // (also on through recommendedTypeChecked; stated here so relaxing it elsewhere keeps it here).
    files: ['core/plugin.ts', 'core/exchange.ts', 'core/services.ts', 'plugins/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    // Tests read the gateway's answers as untyped JSON (`res.json()`, `admin.get(...).body`) and
    // assert on them: a wrong shape fails the assertion, so typing every body would add nothing.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // A simulator's `createServer(async (req, res) => ...)`: a throw there is an unhandled rejection,
      // which fails the test run loudly, as a test helper should.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
);
