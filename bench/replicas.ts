/**
 * `npm run bench:replicas` (also `BENCH_MODE=replicas npm run bench`): three `tollgate serve` replicas
 * on one PostgreSQL 15 and one Redis 7 against one replica on its SQLite file, in one run, with the
 * same bench user (a budget and rpm/tpm limits, so every request reserves and settles its budget
 * and takes its rate buckets — in Redis for the replicas).
 *
 * Load: non-streamed and streamed chat completions at 50 connections in all; for the replicas,
 * three autocannon runs at once, one per replica (what a round-robin balancer does). Reported:
 * requests/s, p50/p99, gateway CPU µs per request (all replicas' CPU over all their requests), and
 * the same ratios the main bench uses. Not pinned: six processes on this machine's cores. PostgreSQL
 * and Redis run on this machine too (their CPU is not counted in the gateway's).
 *
 * Needs PostgreSQL (TOLLGATE_PG_BIN or /usr/lib/postgresql/<major>/bin) and redis-server.
 * Env: BENCH_DURATION_S (default 5). The last line is `BENCH_REPLICAS_SUMMARY <json>`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { openGatewayStore } from '../core/store/data-dir.ts';
import { createGatewayUser } from '../core/accounts/gateway-users.ts';
import { createApiKey } from '../core/accounts/api-keys.ts';
import { defaultManifest } from '../core/default-manifest.ts';
import { startPostgresServer } from '../test/helpers/postgres-server.ts';
import { startRedisServer } from '../test/helpers/redis-server.ts';
import { CLK_TCK, cpuTicks, startProcess, stopProcess, type Started } from './processes.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 50;
const root = fileURLToPath(new URL('..', import.meta.url));
const messages = [{ role: 'user', content: 'Say hello' }];

interface Deployment {
  name: string;
  origins: string[];
  pids: number[];
  key: string;
}

interface Result {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuUsPerRequest: number;
}

/** `connections` spread evenly over the deployment's replicas, all at once. */
async function loadAll(d: Deployment, stream: boolean): Promise<Result> {
  const body = JSON.stringify(stream ? { model: 'openai/gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } } : { model: 'openai/gpt-4o-mini', messages });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${d.key}` };
  const per = Math.round(CONNECTIONS / d.origins.length);
  const run = (duration: number) => Promise.all(d.origins.map((origin) =>
    autocannon({ url: `${origin}/api/v1/chat/completions`, method: 'POST', headers, body, connections: per, duration })));
  await run(1);
  const before = d.pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const results = await run(DURATION_S);
  const ticks = d.pids.reduce((sum, pid) => sum + cpuTicks(pid), 0) - before;
  const requests = results.reduce((sum, r) => sum + r.requests.total, 0);
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p50Ms: Math.max(...results.map((r) => r.latency.p50)),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((sum, r) => sum + r.errors + r.non2xx, 0),
    cpuUsPerRequest: requests ? (ticks * (1e6 / CLK_TCK)) / requests : 0,
  };
}

async function deploy(name: string, replicas: number, env: NodeJS.ProcessEnv, simBase: string, started: Started[], dirs: string[]): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-replicas-'));
  dirs.push(dataDir);
  const store = await openGatewayStore(dataDir, { url: env.TOLLGATE_DATABASE_URL ?? null });
  const user = await createGatewayUser(store.db, { name: 'bench', budgetUsd: 1_000_000, budgetPeriod: 'monthly', rpm: 100_000_000, tpm: 1_000_000_000 });
  const { key } = await createApiKey(store.db, { gatewayUserId: user.id });
  await store.close();
  const manifestPath = join(dataDir, 'bench-manifest.json');
  writeFileSync(manifestPath, JSON.stringify(defaultManifest));
  const origins: string[] = [];
  const pids: number[] = [];
  for (let i = 0; i < replicas; i++) {
    const gateway = await startProcess([join(root, 'bin', 'tollgate.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--config', manifestPath],
      { ...env, OPENAI_BASE_URL: simBase, OPENAI_API_KEY: 'sk-bench', TOLLGATE_ADMIN_PASSWORD: 'bench-admin-password' }, /listening on (http:\/\/\S+)/);
    started.push(gateway);
    origins.push(gateway.match[1]!);
    pids.push(gateway.proc.pid!);
  }
  return { name, origins, pids, key };
}

export async function main(): Promise<void> {
  const started: Started[] = [];
  const dirs: string[] = [];
  const pgServer = await startPostgresServer();
  const redis = await startRedisServer();
  try {
    const sim = await startProcess(['--import', 'tsx', 'bench/simulator-process.ts'], { SIM_CONTENT_CHUNKS: '22' }, /(http:\/\/\S+\/v1)\n/);
    started.push(sim);
    const simBase = sim.match[1]!;
    const single = await deploy('1 replica, SQLite', 1, {}, simBase, started, dirs);
    const shared = await deploy('3 replicas, PostgreSQL + Redis', 3,
      { TOLLGATE_DATABASE_URL: await pgServer.createDatabase(), TOLLGATE_REDIS_URL: redis.url }, simBase, started, dirs);
    await new Promise((r) => setTimeout(r, 1000));
    const out = (line: string) => process.stdout.write(line + '\n');
    out(`Tollgate replicas benchmark: ${DURATION_S}s per run after 1s warm-up, Node ${process.version}, ${CONNECTIONS} connections in all, not pinned`);
    out('scenario | deployment                      |    rps | vs 1 replica | p50/p99 ms | CPU µs/req | vs 1 replica');
    const scenarios: Array<{ name: string; single: Result; shared: Result }> = [];
    for (const stream of [false, true]) {
      const name = stream ? 'sse-50' : 'json-50';
      const a = await loadAll(single, stream);
      const b = await loadAll(shared, stream);
      scenarios.push({ name, single: a, shared: b });
      for (const [d, r] of [[single, a], [shared, b]] as const) {
        out(`${name.padEnd(8)} | ${d.name.padEnd(31)} | ${r.rps.toFixed(0).padStart(6)} | ${(r.rps / a.rps).toFixed(2).padStart(12)} | ` +
          `${`${r.p50Ms}/${r.p99Ms}`.padStart(10)} | ${r.cpuUsPerRequest.toFixed(0).padStart(10)} | ${(r.cpuUsPerRequest / a.cpuUsPerRequest).toFixed(2).padStart(12)}` +
          `${r.errors ? `  (${r.errors} errors)` : ''}`);
      }
    }
    out(`BENCH_REPLICAS_SUMMARY ${JSON.stringify({ node: process.version, durationS: DURATION_S, connections: CONNECTIONS, scenarios })}`);
  } finally {
    for (const p of started.reverse()) await stopProcess(p);
    await redis.stop();
    await pgServer.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
