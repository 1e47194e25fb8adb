/**
 * The example plugin package (examples/plugins/request-tag/) passes its own test, run as its author
 * runs it (`node --test test/` in its folder), against this checkout's gateway (`TOLLGATE_BIN`): the
 * package the plugin guide points operators at must work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BIN } from '../helpers/cli.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/plugins/request-tag/', import.meta.url));

test('the example plugin package passes its own test against this gateway', async () => {
  // Its own run, not a subtest of this file's: node:test marks the processes it starts (NODE_TEST_CONTEXT).
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  // The file by name: Node 22+ reads `--test` arguments as glob patterns, Node 20 as paths, and a
  // folder is neither there.
  const child = spawn(process.execPath, ['--test', '--test-reporter=tap', 'test/request-tag.test.mjs'], {
    cwd: EXAMPLE,
    env: { ...env, TOLLGATE_BIN: BIN, TOLLGATE_FROM_SOURCE: process.env.TOLLGATE_FROM_SOURCE ?? '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 0, out);
  assert.match(out, /^# pass 4$/m, out);
  assert.match(out, /^# fail 0$/m);
});
