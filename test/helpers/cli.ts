/** Runs the real `tollgate` CLI (bin/tollgate.js) as a child process. */
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { testStoreEnv } from './test-store.ts';
import { tempDir } from './tmp.ts';

export const BIN = fileURLToPath(new URL('../../bin/tollgate.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], options: { dataDir?: string; input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const fullArgs = options.dataDir ? [...args, '--data-dir', options.dataDir] : args;
  // A caller that brings its own database (a test running its own PostgreSQL) needs no per-file one.
  const storeEnv = options.env?.TOLLGATE_DATABASE_URL ? {} : await testStoreEnv(options.dataDir);
  return new Promise((resolve, reject) => {
    // bin/tollgate.js runs the bundle when it is fresh (`npm test` builds it first), else the sources;
    // c8 maps the bundle's coverage back to the sources through its source map (.c8rc.json).
    const env = { ...process.env, ...storeEnv, ...options.env };
    const child = spawn(process.execPath, [BIN, ...fullArgs], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs a command with `--json` and parses its output; throws with stderr when it fails. */
export async function cliJson<T = Record<string, unknown>>(args: string[], options: Parameters<typeof runCli>[1] = {}): Promise<T> {
  const result = await runCli([...args, '--json'], options);
  if (result.code !== 0) throw new Error(`tollgate ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

const BARRIER = new URL('./start-barrier.mjs', import.meta.url).href;

/**
 * Runs several commands as processes released at the same moment: each waits at its start
 * (`start-barrier.mjs`) until all of them are ready, so they reach their first steps (opening and
 * migrating the store) together instead of one spawn apart.
 */
export async function runCliTogether(argsList: string[][], options: Parameters<typeof runCli>[1] = {}): Promise<CliResult[]> {
  const dir = tempDir('tollgate-barrier-');
  const gate = join(dir, 'go');
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import ${BARRIER}`.trim();
  let finished = 0;
  const runs = argsList.map((args) => runCli(args, { ...options, env: { ...options.env, NODE_OPTIONS: nodeOptions, TOLLGATE_TEST_BARRIER: gate } }).finally(() => finished++));
  // A process that ends before it is ready (it failed to start) would leave the others waiting forever.
  while (readdirSync(dir).length < argsList.length && finished === 0) await sleep(10);
  writeFileSync(gate, '');
  return Promise.all(runs);
}
