/**
 * Chaos on three replicas (issue 39, "Tests that must exist"): three real `tollgate serve` processes
 * (the bundle) on one real PostgreSQL 15 and one real Redis 7, in front of the OpenAI simulator, serve
 * one user with a budget and rpm/tpm limits while a load driver (`replica-load.ts`) sends chat
 * completions, every other one streamed, round-robin to them from a few concurrent loops. The three
 * cases share the deployment and run in sequence (state carries over): PostgreSQL restarted twice,
 * the second time while another session holds the lock the log writes wait on; Redis restarted; a
 * replica SIGKILLed and started again. Each is bounded by counts of outcomes, not by time.
 *
 * After each case: every replica is up and ready; every request the client saw served has exactly one
 * `llm_requests` row (a SIGKILLed replica may lose the rows of its last requests, those acknowledged
 * within the write-behind's flush window, and their spend with them); every refusal has the contract's
 * status and code; and the real `tollgate ledger verify --json` on the same database finds each user's
 * stored spend equal to the costs logged in its period.
 *
 * Runs once per Node version in CI: in the Node 20 pass (SQLite) and in the `TOLLGATE_TEST_STORE=postgres`
 * pass (Node 24); the file starts its own PostgreSQL and Redis whatever that variable says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { defaultManifest } from '../../core/default-manifest.ts';
import { openGatewayStore } from '../../core/store/data-dir.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from '../helpers/postgres-server.ts';
import { skipWithoutRedis, startRedisServer, untilSharedStoreReady, type RedisServer } from '../helpers/redis-server.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { startReplicaLoad, type Outcome, type ReplicaLoad } from '../helpers/replica-load.ts';
import { runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { tempDir } from '../helpers/tmp.ts';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const skip = (!process.env.TOLLGATE_TEST_STORE && NODE_MAJOR >= 22
  ? 'runs once per Node version: in the Node 20 pass and in the TOLLGATE_TEST_STORE=postgres pass, not again in the Node 22+ SQLite one'
  : false) || skipWithoutPostgres() || skipWithoutRedis();

const REPLICAS = 3;
const LOOPS = 6;
/**
 * A SIGKILLed replica loses what its write-behind had not committed: the requests acknowledged in the
 * last flush interval (50 ms, plus one batch's time). Their rows may be missing only among that
 * replica's last this-many served requests before the kill; any other missing row is a lost row.
 */
const KILL_WINDOW_REQUESTS = 32;

let pgServer: PostgresServer;
let redis: RedisServer;
let sim: OpenAISimulator;
let databaseUrl: string;
let dataDir: string;
let key: string;
let env: NodeJS.ProcessEnv;
let manifest: unknown;
const replicas: GatewayProcess[] = [];
const generations: number[] = [];
const origins = () => replicas.map((r) => r.origin);

before(async () => {
  if (skip) return;
  [pgServer, redis, sim] = await Promise.all([startPostgresServer(), startRedisServer(), startOpenAISimulator({ record: false })]);
  databaseUrl = await pgServer.createDatabase();
  dataDir = tempDir();
  const store = await openGatewayStore(dataDir, { url: databaseUrl });
  try {
    const user = await createGatewayUser(store.db, { name: 'chaos', budgetUsd: 1_000, budgetPeriod: 'monthly', rpm: 1_000_000, tpm: 1_000_000_000 });
    ({ key } = await createApiKey(store.db, { gatewayUserId: user.id }));
  } finally {
    await store.close();
  }
  // A loaded machine can take longer than the default 500 ms to answer a Redis call; a timeout would read as Redis down.
  manifest = { ...defaultManifest, coordination: { redis: redis.url, commandTimeoutMs: 5_000 } };
  env = {
    TOLLGATE_FROM_SOURCE: '0', TOLLGATE_DATABASE_URL: databaseUrl, OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-chaos',
    TOLLGATE_ADMIN_PASSWORD: 'chaos-admin-password',
  };
  // The first start creates the bootstrap admin; two doing it at once would both try.
  replicas.push(await startGatewayProcess({ dataDir, manifest, env }));
  const others = await Promise.allSettled(Array.from({ length: REPLICAS - 1 }, () => startGatewayProcess({ dataDir, manifest, env })));
  for (const o of others) if (o.status === 'fulfilled') replicas.push(o.value);
  for (const o of others) if (o.status === 'rejected') throw o.reason;
  replicas.forEach(() => generations.push(0));
  await untilSharedStoreReady(origins(), 120_000);
});

after(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await sim?.close();
  await redis?.stop();
  await pgServer?.stop();
});

/** The replica a case kills on purpose, while it is down. */
let expectedDown: number | null = null;

function startLoad(): ReplicaLoad {
  const broken = () => {
    const dead = replicas.findIndex((r, i) => i !== expectedDown && (r.proc.exitCode !== null || r.proc.signalCode !== null));
    return dead === -1 ? null : `replica ${dead} died\n${tails()}`;
  };
  return startReplicaLoad({ origins, generation: (i) => generations[i]!, key, loops: LOOPS, broken });
}

function tails(): string {
  return replicas.map((r, i) => `--- replica ${i} (exit ${r.proc.exitCode ?? r.proc.signalCode ?? 'none'}):\n${r.output().split('\n').slice(-15).join('\n')}`).join('\n');
}

/** Every replica process runs and answers `/readyz` 200 with its store and Redis ready and no write queued. */
async function allReplicasReady(): Promise<void> {
  for (const [i, replica] of replicas.entries()) {
    assert.equal(replica.proc.exitCode, null, `replica ${i} exited\n${tails()}`);
    assert.equal(replica.proc.signalCode, null, `replica ${i} was killed\n${tails()}`);
    await eventually(async () => {
      const res = await fetch(`${replica.origin}/readyz`);
      const body = (await res.json()) as { store?: { status?: string; queuedWrites?: number }; coordination?: { redis?: string } };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.store?.status, 'ready', JSON.stringify(body));
      assert.equal(body.store?.queuedWrites ?? 0, 0, JSON.stringify(body));
      assert.equal(body.coordination?.redis, 'ready', JSON.stringify(body));
    }, { timeoutMs: 60_000, intervalMs: 100 });
  }
}

/** How many `llm_requests` rows each of `ids` has in PostgreSQL. */
async function rowCounts(ids: readonly string[]): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string; n: number }>(
      'SELECT request_id, count(*)::int AS n FROM llm_requests WHERE request_id = ANY($1::text[]) GROUP BY request_id', [ids]);
    return new Map(rows.map((r) => [r.request_id, r.n]));
  } finally {
    await client.end();
  }
}

/**
 * The checks after each case. `refusals` lists the `status code` pairs the case may answer; `killed`
 * is the replica SIGKILLed in the case, whose connection failures, cut streams and rows lost in its
 * flush window are allowed.
 */
async function checkAfterCase(load: ReplicaLoad, refusals: readonly string[], killed?: number): Promise<void> {
  await allReplicasReady();
  const byKilled = (o: Outcome) => killed !== undefined && o.replica === killed;
  const noAnswer = load.outcomes.filter((o) => (o.kind === 'failed' || o.kind === 'incomplete') && !byKilled(o));
  assert.deepEqual(noAnswer, [], 'no connection reset, refusal or cut stream except from the killed replica');
  const refused = load.outcomes.filter((o) => o.kind === 'refused');
  for (const o of refused) {
    assert.ok(refusals.includes(`${o.status} ${o.code}`), `refused with a contract status: ${JSON.stringify(o)}`);
    if (o.status === 503) assert.equal(o.retryAfter, '1', JSON.stringify(o));
  }

  const served = load.outcomes.filter((o) => o.kind === 'served');
  assert.ok(served.every((o) => o.requestId), 'every served request has an x-request-id');
  const ids = served.map((o) => o.requestId!);
  assert.equal(new Set(ids).size, ids.length, 'request ids are unique');
  const lostAllowed = new Set(killed === undefined ? [] : served.filter((o) => o.replica === killed && o.generation === 0)
    .slice(-KILL_WINDOW_REQUESTS).map((o) => o.requestId!));
  const counts = await rowCounts(ids);
  const lost = ids.filter((id) => !counts.has(id));
  const doubled = ids.filter((id) => (counts.get(id) ?? 0) > 1);
  assert.deepEqual(doubled, [], 'no request logged twice');
  assert.deepEqual(lost.filter((id) => !lostAllowed.has(id)), [], `every served request has its log row (${lost.length} of ${ids.length} missing)`);

  const verify = await runCli(['ledger', 'verify', '--json', '--data-dir', dataDir], { env });
  assert.equal(verify.code, 0, `ledger verify: ${verify.stdout}\n${verify.stderr}`);
  const report = JSON.parse(verify.stdout) as { consistent: boolean; users: Array<{ name: string; storedNanos: number; loggedNanos: number; differenceNanos: number }> };
  assert.equal(report.consistent, true, verify.stdout);
  const chaos = report.users.find((u) => u.name === 'chaos');
  assert.ok(chaos && chaos.loggedNanos > 0 && chaos.differenceNanos === 0, verify.stdout);
  process.stderr.write(`# served ${served.length}, refused ${refused.length}, failed ${load.count((o) => o.kind === 'failed')}, ` +
    `incomplete ${load.count((o) => o.kind === 'incomplete')}, rows lost in the kill window ${lost.length}\n`);
}

/** The number of the gateway's sessions waiting for a lock right now. */
async function sessionsWaitingForALock(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`);
  return rows[0]!.n;
}

describe('three replicas on PostgreSQL and Redis under chaos', { skip, concurrency: false }, () => {
  test('chaos: PostgreSQL restarted twice under load, once while a lock the writes wait on is held', async () => {
    const load = startLoad();
    try {
      await load.more(30);
      // Restart #1, plain: down while 20 requests are answered (from the replicas' caches, their rows
      // and spends queued in memory, or refused 503 store_unavailable), then up again.
      await pgServer.stop();
      const answered = () => load.count((o) => o.kind !== 'failed');
      const answeredBefore = answered();
      await load.until('20 requests answered while PostgreSQL is down', () => answered() >= answeredBefore + 20);
      await pgServer.start();
      await load.more(30);

      // The write-behind's batch inserts its rows, then adds each request's spend to the user's row,
      // in one transaction: with that row locked by another session, every batch waits mid-transaction.
      const locker = new pg.Client({ connectionString: databaseUrl });
      locker.on('error', () => {}); // the restart terminates this session: expected
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query("SELECT id FROM gateway_users WHERE name = 'chaos' FOR UPDATE");
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      try {
        await eventually(async () => assert.ok(await sessionsWaitingForALock(admin) > 0, 'a log write waits for the lock'), { timeoutMs: 60_000 });
      } finally {
        await admin.end();
      }
      await load.more(30);
      await pgServer.restart();
      await locker.end().catch(() => {});
      await load.more(30);
    } finally {
      await load.stop();
    }
    await checkAfterCase(load, ['503 store_unavailable']);
  });

  test('chaos: Redis restarted under load', async () => {
    const load = startLoad();
    try {
      await load.more(30);
      await redis.stop();
      // A user with rpm/tpm limits and a budget, failMode closed: refused 503 while Redis is away.
      await load.until('20 refusals while Redis is down', (l) => l.count((o) => o.code === 'coordination_unavailable') >= 20);
      await redis.start();
      await load.more(30 + REPLICAS * 10);
    } finally {
      await load.stop();
    }
    await checkAfterCase(load, ['503 coordination_unavailable']);
  });

  test('chaos: a replica SIGKILLed under load and restarted', async () => {
    const victim = 1;
    const load = startLoad();
    const others = (o: Outcome) => o.replica !== victim;
    try {
      await load.more(30);
      await load.more(5, (o) => o.replica === victim);
      expectedDown = victim;
      assert.equal(await replicas[victim]!.stop('SIGKILL'), null);
      // The dead replica's requests fail; the other two keep serving.
      await load.until('3 failures at the killed replica', (l) => l.count((o) => o.replica === victim && o.kind === 'failed') >= 3);
      await load.more(30, others);
      // Back in the rotation once ready, as a balancer's health check would put it.
      const restarted = await startGatewayProcess({ dataDir, manifest, env });
      await untilSharedStoreReady([restarted.origin], 120_000);
      replicas[victim] = restarted;
      generations[victim]!++;
      expectedDown = null;
      await load.more(10, (o) => o.replica === victim && o.generation === generations[victim]);
      await load.more(30);
    } finally {
      await load.stop();
    }
    await checkAfterCase(load, [], victim);
  });
});
