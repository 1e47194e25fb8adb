/** Starts the real `tollgate serve` process on 127.0.0.1, port 0, and reads its address from stdout. */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './cli.ts';
import { testStoreEnv } from './test-store.ts';
import { untilSharedStoreReady } from './redis-server.ts';

export interface GatewayProcess {
  readonly origin: string;
  readonly baseURL: string;
  readonly proc: ChildProcess;
  output(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How long a start may take before it counts as failed, ms. A liveness bound, not a speed one: from
 * the TypeScript sources a start takes a second or two alone, but 12-19 s was measured at a load
 * average of 11 (other test files and agents sharing two cores), and a budget-redis run under six
 * more busy loops spent ~5 min setting up (eight CLI calls and four replica starts).
 */
const START_TIMEOUT_MS = 300_000;

/**
 * `manifest` is written into the data dir; `configPath` names a manifest file written elsewhere (its
 * plugin modules resolve from its folder).
 */
export async function startGatewayProcess(options: { dataDir: string; manifest?: unknown; configPath?: string; env?: NodeJS.ProcessEnv }): Promise<GatewayProcess> {
  const args = [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', options.dataDir];
  if (options.configPath) args.push('--config', options.configPath);
  else if (options.manifest) {
    const path = join(options.dataDir, 'tollgate.test.json');
    writeFileSync(path, JSON.stringify(options.manifest));
    args.push('--config', path);
  }
  // A caller that brings its own database (a test running its own PostgreSQL) needs no per-file one.
  const storeEnv = options.env?.TOLLGATE_DATABASE_URL ? {} : await testStoreEnv(options.dataDir);
  // bin/tollgate.js runs the bundle when it is fresh (`npm test` builds it first), else the sources;
  // c8 maps the bundle's coverage back to the sources through its source map (.c8rc.json).
  const env = { ...process.env, ...storeEnv, ...options.env };
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let stopping = false;
  // A gateway that dies on its own is a defect the test may only see as refused connections: its last
  // output goes to the test's log (CI shows it) with how it ended.
  proc.once('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`# tollgate serve (pid ${proc.pid}) exited on its own (code ${code}, signal ${signal}); its last output:\n${out.split('\n').slice(-40).join('\n')}\n`);
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: a live child would keep the test file's process from ever exiting.
      stopping = true;
      proc.kill('SIGKILL');
      reject(new Error(`gateway did not start within ${START_TIMEOUT_MS} ms:\n${out}`));
    }, START_TIMEOUT_MS);
    proc.stdout.on('data', (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    proc.once('exit', (code) => reject(new Error(`gateway exited (${code}) before listening:\n${out}`)));
  });
  return {
    origin,
    baseURL: `${origin}/api/v1`,
    proc,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      stopping = true;
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/**
 * Starts `count` replicas of one gateway (same data dir, manifest and env) into `into`, the list the
 * caller stops in its `after()`: the first alone (it migrates the database and creates the bootstrap
 * admin; two doing it at once would both try), the others together; every replica that started is in
 * `into` even when another failed (whose error is then thrown). Resolves once each replica reports its
 * shared store ready (`untilSharedStoreReady`), when it has one.
 */
export async function startReplicas(count: number, options: { dataDir: string; manifest?: unknown; env?: NodeJS.ProcessEnv }, into: GatewayProcess[]): Promise<void> {
  into.push(await startGatewayProcess(options));
  const others = await Promise.allSettled(Array.from({ length: count - 1 }, () => startGatewayProcess(options)));
  for (const o of others) if (o.status === 'fulfilled') into.push(o.value);
  for (const o of others) if (o.status === 'rejected') throw o.reason;
  await untilSharedStoreReady(into.map((r) => r.origin));
}
