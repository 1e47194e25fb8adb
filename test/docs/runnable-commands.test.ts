/**
 * The docs check: every fenced block marked runnable (```` ```sh runnable ````, or `bash runnable`) in
 * README.md, docs/*.md and CONTRIBUTING.md is run with bash against one real `tollgate serve`, and
 * fails this test when a command in it fails. Unmarked blocks (a real cloud key, PostgreSQL or Redis,
 * root, a gateway started with another manifest) are not run.
 *
 * What a block can count on, as a reader following the docs in a clone would:
 * - Order: the README's blocks first, in order; then each guide of docs/ (by file name), its blocks in
 *   order; then CONTRIBUTING.md's. A block is run only if every earlier block of its file succeeded.
 * - One gateway for all of them, started by this test as the README's Quick start does (`npm start`,
 *   the default manifest) with the OpenAI simulator (test/helpers/openai-simulator.ts) as `openai`
 *   (`OPENAI_BASE_URL`); the other providers point at a closed local port, so nothing leaves the machine.
 *   Its data dir is `./data` of the working directory, and the admin's password is in
 *   `TOLLGATE_ADMIN_PASSWORD`.
 * - The working directory: a temp dir holding `data/` and a copy of `tollgate.example.json` (a clone's
 *   root, without the sources); CONTRIBUTING.md's blocks run in this checkout's root instead.
 * - `npx tollgate` and `tollgate` run this checkout's bin/tollgate.js; any other `npx` fails (no download).
 * - State between blocks: each block is one `bash` run with `set -euo pipefail`; the variables it
 *   exports and the directory it ends in carry to the next block of the same file. Every guide (and
 *   CONTRIBUTING.md) starts from the state the README's blocks left: its user `alice`, her key in
 *   `TOLLGATE_API_KEY`. Guides share one database, so a guide must not rely on what another guide did.
 * - `tg_...` in a block is what the reader pastes: the last gateway key an earlier block of the same
 *   file printed (else the README's). `http://127.0.0.1:8787` and `localhost:8787` are the test gateway's
 *   address.
 * - A reader's own secrets are set to stand-ins: `ANTHROPIC_KEY_OF_ALICE`.
 * - `curl` fails on an HTTP error status (a `.curlrc` with `--fail-with-body`), so a block that shows a
 *   refusal cannot be marked runnable.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { testStoreEnv } from '../helpers/test-store.ts';
import { tempDir } from '../helpers/tmp.ts';
import {
  describeFailure, docFiles, preparedCode, REPO_ROOT, runBlock, runnableBlocks, type RunnableBlock, type ShellState,
} from '../helpers/runnable-blocks.ts';

const ADMIN_PASSWORD = 'the docs check admin password';
const CLOSED_PORT = 'http://127.0.0.1:9';

const files = docFiles().map((file) => ({ file, blocks: runnableBlocks(readFileSync(join(REPO_ROOT, file), 'utf8'), file) }));

describe('the runnable commands of the docs', () => {
  let sim: OpenAISimulator;
  let gateway: GatewayProcess;
  let env: NodeJS.ProcessEnv;
  let workDir: string;
  let address: string;
  let readmeState: ShellState | null = null;

  before(async () => {
    sim = await startOpenAISimulator();
    workDir = tempDir('tollgate-docs-');
    const dataDir = join(workDir, 'data');
    mkdirSync(dataDir);
    copyFileSync(join(REPO_ROOT, 'tollgate.example.json'), join(workDir, 'tollgate.example.json'));
    const providers = {
      OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-docs-check-shared-key',
      ANTHROPIC_BASE_URL: CLOSED_PORT, ANTHROPIC_API_KEY: '', GEMINI_BASE_URL: CLOSED_PORT, GEMINI_API_KEY: '',
      MISTRAL_BASE_URL: CLOSED_PORT, MISTRAL_API_KEY: '', OLLAMA_BASE_URL: CLOSED_PORT, OLLAMA_API_KEY: '',
    };
    // The bundle when it is fresh, as `npx tollgate` runs for a reader (the bin falls back to the sources).
    const fromSource = process.env.TOLLGATE_FROM_SOURCE ?? '0';
    gateway = await startGatewayProcess({
      dataDir,
      manifest: JSON.parse(readFileSync(join(REPO_ROOT, 'tollgate.example.json'), 'utf8')),
      env: { ...providers, TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD, TOLLGATE_FROM_SOURCE: fromSource },
    });
    address = new URL(gateway.origin).host;

    const home = join(workDir, '.home');
    const shims = join(workDir, '.bin');
    mkdirSync(home);
    mkdirSync(shims);
    writeFileSync(join(home, '.curlrc'), '--fail-with-body\n--show-error\n--max-time 60\n');
    const bin = join(REPO_ROOT, 'bin', 'tollgate.js');
    writeShim(join(shims, 'tollgate'), `exec ${q(process.execPath)} ${q(bin)} "$@"`);
    writeShim(join(shims, 'npx'), [
      `if [ "$1" = tollgate ]; then shift; exec ${q(process.execPath)} ${q(bin)} "$@"; fi`,
      'echo "docs check: only npx tollgate runs here (this checkout\'s bin), not npx $1" >&2',
      'exit 127',
    ].join('\n'));
    env = {
      PATH: `${shims}:${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home, CURL_HOME: home, LANG: 'C.UTF-8', TMPDIR: process.env.TMPDIR ?? '/tmp',
      TOLLGATE_FROM_SOURCE: fromSource,
      ...providers,
      ...(await testStoreEnv(dataDir)),
      TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ANTHROPIC_KEY_OF_ALICE: 'sk-ant-docs-check-0123456789abcdef',
    };
  });

  after(async () => {
    await gateway?.stop();
    await sim?.close();
  });

  /** The docs' address becomes the test gateway's. */
  const rewrite = (code: string) => code.replaceAll('127.0.0.1:8787', address).replaceAll('localhost:8787', address);

  for (const { file, blocks } of files) {
    if (blocks.length === 0) continue;
    describe(file, () => {
      let state: ShellState | null = null;
      let broken: string | null = null;
      for (const block of blocks) {
        test(`${file}:${block.line} ${firstCommand(block)}`, async (t) => {
          if (broken) return t.skip(`an earlier block failed (${broken})`);
          state ??= startState(file);
          const run = await runBlock(block, state, { env, rewrite });
          if (run.code !== 0 || run.timedOut) {
            broken = `${file}:${block.line}`;
            assert.fail(describeFailure(block, preparedCode(block, state, rewrite), run));
          }
          state = run.state;
          if (file === 'README.md') readmeState = state;
        });
      }
    });
  }

  function startState(file: string): ShellState {
    if (file === 'README.md') return { exports: '', cwd: workDir, lastKey: null };
    assert.ok(readmeState, 'the README\'s blocks ran first and succeeded');
    return { ...readmeState, cwd: file === 'CONTRIBUTING.md' ? REPO_ROOT : workDir };
  }
});

describe('the docs check itself', () => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const start: ShellState = { exports: '', cwd: REPO_ROOT, lastKey: null };

  test('finds only blocks marked runnable, indented ones included, with their lines', () => {
    const markdown = ['# T', '```sh', 'not run', '```', '- item', '', '  ```sh runnable', '  echo one', '    echo two', '  ```', '```json runnable', '{}', '```', '```bash runnable', 'echo three', '```'].join('\n');
    assert.deepEqual(runnableBlocks(markdown, 'x.md'), [
      { file: 'x.md', line: 7, code: 'echo one\n  echo two' },
      { file: 'x.md', line: 14, code: 'echo three' },
    ]);
  });

  test('a block fails when any of its commands fails, not only the last, and names its file and line', async () => {
    const block: RunnableBlock = { file: 'x.md', line: 3, code: 'false\necho after' };
    const run = await runBlock(block, start, { env });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(describeFailure(block, block.code, run), /^x\.md:3: the block exited 1/);
  });

  test('a failing command inside a pipeline fails its block', async () => {
    const run = await runBlock({ file: 'x.md', line: 1, code: 'false | cat' }, start, { env });
    assert.equal(run.code, 1);
  });

  test('exported variables, the directory and the last key printed carry to the next block; tg_... is that key', async () => {
    const first = await runBlock({ file: 'x.md', line: 1, code: 'export GREETING=hello\ncd /\necho "key: tg_AAAAAAAAAAAAAAAAAAAAAAAA"' }, start, { env });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.state.lastKey, 'tg_AAAAAAAAAAAAAAAAAAAAAAAA');
    const second = await runBlock({ file: 'x.md', line: 5, code: 'echo "$GREETING $(pwd) tg_..."' }, first.state, { env });
    assert.equal(second.stdout, 'hello / tg_AAAAAAAAAAAAAAAAAAAAAAAA\n');
  });

  test('an unset variable fails its block', async () => {
    const run = await runBlock({ file: 'x.md', line: 1, code: 'echo "$NOT_SET_ANYWHERE"' }, start, { env });
    assert.notEqual(run.code, 0);
  });
});

function firstCommand(block: RunnableBlock): string {
  const line = block.code.split('\n').find((l) => l.trim() && !l.trim().startsWith('#')) ?? '';
  return line.replace(/\s+#.*$/, '').trim().slice(0, 70);
}

function writeShim(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

function q(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
