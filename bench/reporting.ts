/**
 * `npm run bench:reporting`: what the reports cost at scale (issue 14 item 4). Not a test: it prints
 * figures to compare with the bars (`/api/account` < 5 ms, dashboard < 200 ms, p99 of concurrent chat
 * requests < 50 ms during a full CSV export).
 *
 * Builds a database with BENCH_LOG_ROWS (default 1,000,000) `llm_requests` rows (one transaction, one
 * prepared statement; 5 users, 4 models, 2 providers, 3 % errors, spread over the last 60 days) at
 * schema version 5, applies the later migrations (timed: the rollups' backfill), then
 * starts the real `tollgate serve` on it (own process) against the OpenAI simulator (own process) and
 * measures, from this process:
 * - `GET /api/account` of a user with traffic: median and max of 20 calls after one warm-up;
 * - `GET /admin/api/stats` for the last 30 days: median and max of 5 calls;
 * - `GET /admin/api/logs.csv` (every row): duration and bytes;
 * - small chat requests fired every 20 ms during that export: count, p50, p99, max.
 */
import { CLK_TCK, cpuTicks, startProcess } from './processes.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDataDir } from '../core/store/data-dir.ts';
import { readMigrations } from '../core/store/store.ts';
import { openSqlite } from '../core/store/driver-sqlite.ts';
import { createGatewayUser } from '../core/accounts/gateway-users.ts';
import { createApiKey } from '../core/accounts/api-keys.ts';

const LOG_ROWS = Number(process.env.BENCH_LOG_ROWS ?? 1_000_000);
const DAYS = 60;
const CHAT_EVERY_MS = 20;
const ADMIN_PASSWORD = 'bench-admin-password';
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Fills the log with `rows` rows in a database at schema version 5 (before the rollups), then opens
 * it as the gateway does, which applies the later migrations (the rollups' backfill included, timed).
 * Returns an API key of the first user.
 */
async function seed(dataDir: string, rows: number): Promise<{ key: string }> {
  const raw = openSqlite(join(dataDir, 'tollgate.db'));
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = OFF');
  for (const migration of readMigrations().filter((m) => m.version <= 5)) {
    raw.exec(migration.sql);
    raw.pragma(`user_version = ${migration.version}`);
  }
  const models = [['openai', 'gpt-4o-mini'], ['openai', 'gpt-4o'], ['anthropic', 'claude-sonnet-4-5'], ['anthropic', 'claude-haiku-4-5']] as const;
  const insert = raw.prepare(`INSERT INTO llm_requests (request_id, gateway_user_id, api_key_id, provider, model_requested,
      model_served, status, error_code, prompt_tokens, completion_tokens, cached_tokens, latency_ms, ttft_ms, stream, created_at,
      cache_write_tokens, cost_nanos, usage_estimated, unpriced, endpoint) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 0, ?, 0, 0, 'chat.completions')`);
  const endMs = Date.now() - 60_000;
  const spanMs = DAYS * 86_400_000;
  let seedState = 12345;
  const random = () => ((seedState = (seedState * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  let started = performance.now();
  raw.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const [provider, model] = models[i % models.length]!;
      const error = random() < 0.03;
      const prompt = 20 + Math.floor(random() * 2000);
      const completion = error ? null : 5 + Math.floor(random() * 800);
      const latency = 80 + Math.floor(random() * random() * 8000);
      const createdAt = new Date(endMs - spanMs + Math.floor((i / rows) * spanMs)).toISOString();
      // Users 1..5 are created below, after the migrations (foreign keys are turned off on this connection).
      insert.run(`req_${i}`, 1 + (i % 5), provider, `${provider}/${model}`, error ? null : model, error ? 500 : 200,
        error ? 'upstream_error' : null, error ? null : prompt, completion, latency, error ? null : Math.floor(latency / 4), i % 2,
        createdAt, error ? null : prompt * 150 + (completion ?? 0) * 600);
    }
  })();
  raw.close();
  process.stdout.write(`seeded ${rows} rows in ${Math.round(performance.now() - started)} ms\n`);
  started = performance.now();
  const store = openDataDir(dataDir);
  process.stdout.write(`migrations after version 5 (schema now ${store.schemaVersion}): ${Math.round(performance.now() - started)} ms\n`);
  let key = '';
  for (let i = 0; i < 5; i++) {
    const user = await createGatewayUser(store.db, { name: `user${i}`, budgetUsd: 1_000_000, budgetPeriod: 'monthly' });
    if (i === 0) key = (await createApiKey(store.db, { gatewayUserId: user.id })).key;
  }
  await store.close();
  return { key };
}

/** The process's CPU time so far (user + system), ms: what a call cost the gateway, whatever the machine's load. */
function cpuMs(pid: number): number {
  return cpuTicks(pid) * (1000 / CLK_TCK);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-reporting-'));
  const { key } = await seed(dataDir, LOG_ROWS);
  const sim = await startProcess(['--import', 'tsx', 'bench/simulator-process.ts'], { SIM_CONTENT_CHUNKS: '4' }, /(http:\/\/\S+\/v1)\n/);
  const gateway = await startProcess(
    ['serve', '--port', '0', '--data-dir', dataDir],
    { OPENAI_BASE_URL: sim.match[1]!, OPENAI_API_KEY: 'sk-bench', TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD },
    /listening on (http:\/\/\S+)/,
    join(root, 'bin', 'tollgate.js'),
  );
  const origin = gateway.match[1]!;
  try {
    const login = await fetch(`${origin}/admin/api/login`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const admin = (path: string) => fetch(origin + path, { headers: { cookie, origin } });
    const auth = { authorization: `Bearer ${key}` };
    const chat = () => fetch(`${origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }),
    }).then((r) => r.text());

    await chat();
    const pid = gateway.proc.pid!;
    /** Median and max wall time of `n` calls, and the gateway's CPU per call. */
    const measure = async (name: string, n: number, call: () => Promise<unknown>) => {
      await call();
      const walls: number[] = [];
      const cpuBefore = cpuMs(pid);
      for (let i = 0; i < n; i++) walls.push(await timed(call));
      const cpuPerCall = (cpuMs(pid) - cpuBefore) / n;
      process.stdout.write(`${name}: median ${fmt(median(walls))}, max ${fmt(Math.max(...walls))}, gateway CPU ${fmt(cpuPerCall)} per call\n`);
    };
    // The same pipeline with a trivial answer, for scale on a loaded machine.
    await measure('GET /api/v1/models (control)', 20, () => fetch(`${origin}/api/v1/models`, { headers: auth }).then((r) => r.text()));
    await measure('GET /api/account', 20, () => fetch(`${origin}/api/account`, { headers: auth }).then((r) => r.text()));
    await measure('GET /admin/api/stats (30 days)', 5, () => admin('/admin/api/stats').then((r) => r.text()));

    const chatLatencies: number[] = [];
    let chatFailures = 0;
    let exporting = true;
    const load = (async () => {
      const pending: Promise<void>[] = [];
      while (exporting) {
        const start = performance.now();
        // A request the frozen gateway never accepted (connect timeout) counts with the time it waited.
        pending.push(chat().catch(() => void chatFailures++).then(() => void chatLatencies.push(performance.now() - start)));
        await new Promise((resolve) => setTimeout(resolve, CHAT_EVERY_MS));
      }
      await Promise.all(pending);
    })();
    let bytes = 0;
    const exportMs = await timed(async () => {
      const res = await admin('/admin/api/logs.csv');
      for await (const chunk of res.body!) bytes += (chunk as Uint8Array).byteLength;
    });
    exporting = false;
    await load;
    const sorted = [...chatLatencies].sort((a, b) => a - b);
    const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
    process.stdout.write(`GET /admin/api/logs.csv (all rows): ${fmt(exportMs)}, ${(bytes / 1e6).toFixed(1)} MB\n`);
    process.stdout.write(`chat during export: ${sorted.length} requests (${chatFailures} failed), p50 ${fmt(p(0.5))}, p99 ${fmt(p(0.99))}, max ${fmt(sorted[sorted.length - 1]!)}\n`);
  } finally {
    gateway.proc.kill('SIGTERM');
    sim.proc.kill('SIGTERM');
    await new Promise((resolve) => gateway.proc.once('exit', resolve));
    // BENCH_KEEP=1 leaves the database for a closer look (EXPLAIN QUERY PLAN and the like).
    if (process.env.BENCH_KEEP === '1') process.stdout.write(`data dir kept: ${dataDir}\n`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
