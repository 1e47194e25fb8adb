/**
 * Budgets shared by three replicas (issue 16, item 2): three real `tollgate serve` processes on one
 * data directory (one SQLite file) and one real redis-server, in front of the OpenAI simulator.
 *
 * Prices make a reservation equal to the cost it settles to: input is free and the output costs
 * 1,000 USD per million tokens; with `max_tokens` 24 a request reserves 24 output tokens, and the
 * simulator always reports 24 (`SIM_USAGE`), so every served request costs exactly 0.024 USD
 * (24,000,000 nano-USD) and a budget of n × 0.024 USD fits exactly n requests.
 *
 * The rate-limit plugin is given no concurrency limit, so it never asks Redis: each 503 here is the
 * budget's own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAISimulator, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, startReplicas, type GatewayProcess } from '../helpers/gateway-process.ts';
import { redisTimeMs, skipWithoutRedis, startRedisServer, type RedisServer, untilSharedStoreReady } from '../helpers/redis-server.ts';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { createLog } from '../../core/runtime/log.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { cliJson } from '../helpers/cli.ts';
import { defaultManifest } from '../../core/default-manifest.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { eventually } from '../helpers/eventually.ts';
import { sleep } from '../helpers/sim-http.ts';

const skip = skipWithoutRedis();

const COST_NANOS = 24_000_000;
// Longer than any request takes on a busy machine (an expired reservation frees its budget while the
// request still runs), and a bound the killed replica's test waits out once.
const RESERVATION_TTL_MS = 10_000;
const SLOW_MS = 10_000;

let sim: OpenAISimulator;
let redis: RedisServer;
/** The test's own connection to the replicas' Redis, to read its clock and the reservations. */
let clock: RedisConnection;
let dataDir: string;
let manifest: unknown;
let env: NodeJS.ProcessEnv;
const replicas: GatewayProcess[] = [];
const users: Record<string, { id: number; key: string }> = {};

/** Creates a gateway user with a monthly budget of `usd` (none when null) and a key for it. */
async function caller(name: string, usd: string | null): Promise<void> {
  const budget = usd === null ? [] : ['--budget', usd, '--budget-period', 'monthly'];
  const user = await cliJson<{ id: number }>(['users', 'create', '--name', name, ...budget], { dataDir });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', name], { dataDir });
  users[name] = { id: user.id, key };
}

before(async () => {
  if (skip) return;
  [sim, redis] = await Promise.all([startOpenAISimulator({ slowMs: SLOW_MS }), startRedisServer()]);
  dataDir = await dataDirWithPrices([
    { model: 'gpt-4o-mini', input: 0, output: 1_000 },
    { model: 'sim-slow', input: 0, output: 1_000 },
  ]);
  await caller('twenty', '0.48');
  await caller('one', '0.024');
  await caller('five', '0.12');
  await caller('free', null);
  clock = await connectRedis(redis.url, createLog('error', () => {}), undefined, undefined, 5_000);
  manifest = {
    ...defaultManifest,
    // A loaded CI machine can take longer than the default 500 ms to answer; a timeout would read as Redis down.
    coordination: { redis: redis.url, budgetReservationTtlMs: RESERVATION_TTL_MS, commandTimeoutMs: 5_000 },
    plugins: defaultManifest.plugins.map((p) => (p.name === 'rate-limit' ? { ...p, config: { defaultMaxConcurrent: null } } : p)),
  };
  env = { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' };
  await startReplicas(3, { dataDir, manifest, env }, replicas);
});

after(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await clock?.close();
  await redis?.stop();
  await sim?.close();
});

function chat(replica: GatewayProcess, key: string, model = 'openai/gpt-4o-mini'): Promise<Response> {
  return fetch(`${replica.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 24, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

async function outcome(res: Response): Promise<{ status: number; type: string | null; code: string | null }> {
  const body = (await res.json()) as { error?: { type: string; code: string | null } };
  return { status: res.status, type: body.error?.type ?? null, code: body.error?.code ?? null };
}

/** The user's stored spend and the sum of their logged costs, read from the shared database. */
async function stored(userId: number): Promise<{ spentNanos: number; loggedNanos: number; logged: number }> {
  const store = await openTestStore(dataDir);
  try {
    const user = await store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', userId).executeTakeFirstOrThrow();
    const rows = await store.db.selectFrom('llm_requests').select('cost_nanos').where('gateway_user_id', '=', userId).where('cost_nanos', 'is not', null).execute();
    return { spentNanos: user.budget_spent_nanos, loggedNanos: rows.reduce((sum, r) => sum + (r.cost_nanos ?? 0), 0), logged: rows.length };
  } finally {
    await store.close();
  }
}

/** `stored(userId)` once its spend is `spentNanos` and its logged costs have caught up (the replicas write behind), or after 30 s. */
async function storedOnce(userId: number, spentNanos: number) {
  const deadline = Date.now() + 30_000;
  let seen = await stored(userId);
  while ((seen.spentNanos !== spentNanos || seen.loggedNanos !== spentNanos) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await stored(userId);
  }
  return seen;
}

/** The expiry of `userId`'s one live reservation, a time on Redis's clock (the script's TIME + TTL). */
async function reservationExpiryMs(userId: number): Promise<number> {
  const keys = await clock.client.keys(`tollgate:budget:${userId}:*:held`);
  assert.equal(keys.length, 1, `reservation sets: ${keys.join(', ')}`);
  const [member, score] = await clock.client.zrange(keys[0]!, '0', '-1', 'WITHSCORES');
  assert.ok(member && score, 'one reservation is held');
  return Number(score);
}

describe('budgets shared by three replicas on one Redis', { skip }, () => {
  test('300 requests, 30 at a time, round-robin against a budget of 20: each is served or 402, exactly 20 are served, and the stored spend is the limit and the sum of the logged costs', async () => {
    assert.equal(SIM_USAGE.completion_tokens, 24, 'the simulator bills the 24 output tokens reserved');
    const statuses: Array<{ status: number; type: string | null }> = [];
    for (let wave = 0; wave < 10; wave++) {
      statuses.push(...(await Promise.all(Array.from({ length: 30 }, (_, i) => chat(replicas[(wave * 30 + i) % 3]!, users.twenty!.key).then(outcome)))));
    }
    const served = statuses.filter((o) => o.status === 200);
    const refused = statuses.filter((o) => o.status === 402);
    assert.equal(served.length + refused.length, 300, `only 200 and 402: ${JSON.stringify(statuses.filter((o) => o.status !== 200 && o.status !== 402).slice(0, 3))}`);
    for (const o of refused) assert.equal(o.type, 'budget_exceeded');
    // Reservations equal costs and none fails, so the shared budget admits exactly 20, never 21.
    assert.equal(served.length, 20, 'exactly the budget is served across the replicas');
    const seen = await storedOnce(users.twenty!.id, 20 * COST_NANOS);
    assert.equal(seen.spentNanos, 20 * COST_NANOS, 'the stored spend is the limit, not more');
    assert.equal(seen.loggedNanos, seen.spentNanos, 'the stored spend equals the sum of the logged costs');
    assert.equal(seen.logged, 20);
  });

  test('a replica killed (SIGKILL) mid-request: its reservation holds until its TTL, then the budget is free again, and nothing was spent for it', async (t) => {
    const victim = await startGatewayProcess({ dataDir, manifest, env });
    t.after(() => victim.stop('SIGKILL')); // also when an assertion fails before the kill
    await untilSharedStoreReady([victim.origin]);
    // The reservation expires at a time on Redis's clock; the requests below note that clock before
    // they are sent and after their answer, so what is asserted holds however slowly a busy machine runs.
    const sentMs = await redisTimeMs(clock.client);
    const pending = chat(victim, users.one!.key, 'openai/sim-slow').catch(() => null);
    // Reserved before the call goes out: once the simulator has it, the whole budget is held.
    await eventually(async () => assert.ok(sim.requests.some((r) => r.body?.model === 'sim-slow'), 'the slow request reached the upstream'));
    const reservedByMs = await redisTimeMs(clock.client);
    const expiresAtMs = await reservationExpiryMs(users.one!.id);
    assert.ok(expiresAtMs >= sentMs + RESERVATION_TTL_MS && expiresAtMs <= reservedByMs + RESERVATION_TTL_MS, 'the reservation lives budgetReservationTtlMs of Redis time');
    const tries: Array<{ where: string; status: number; sentMs: number; answeredMs: number }> = [];
    const tryOn = async (where: string, replica: GatewayProcess) => {
      const sentMs = await redisTimeMs(clock.client);
      const res = await chat(replica, users.one!.key);
      const { status, type } = await outcome(res);
      if (status === 402) assert.equal(type, 'budget_exceeded');
      tries.push({ where, status, sentMs, answeredMs: await redisTimeMs(clock.client) });
      return status;
    };
    await tryOn('another replica', replicas[1]!);
    await victim.stop('SIGKILL');
    await pending;
    await tryOn('after its replica died', replicas[2]!);
    while ((await tryOn('until served', replicas[0]!)) !== 200) {
      assert.ok(tries.at(-1)!.sentMs < expiresAtMs + 30_000, 'still refused 30 s of Redis time after the reservation expired');
      await sleep(100);
    }
    const before = tries.filter((t) => t.answeredMs < expiresAtMs);
    assert.deepEqual(before.map((t) => [t.where, t.status]), before.map((t) => [t.where, 402]), 'refused while the dead replica\'s reservation held');
    assert.ok(before.some((t) => t.where === 'after its replica died'), `a request answered within the reservation's TTL after the kill (tries: ${JSON.stringify(tries)}, expiry ${expiresAtMs})`);
    assert.ok(tries.at(-1)!.answeredMs >= expiresAtMs, 'served, and not before the reservation expired');
    assert.equal((await chat(replicas[1]!, users.one!.key)).status, 402, 'and then the budget is spent');
    const seen = await storedOnce(users.one!.id, COST_NANOS);
    assert.equal(seen.spentNanos, COST_NANOS, 'the killed request spent nothing');
    assert.equal(seen.loggedNanos, COST_NANOS);
  });

  test('Redis stopped: a limited user gets 503 coordination_unavailable on every replica, which stay up; Redis back (empty): served again, the spend re-seeded from the database', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await chat(replicas[i]!, users.five!.key)).status, 200);
    assert.equal((await storedOnce(users.five!.id, 2 * COST_NANOS)).spentNanos, 2 * COST_NANOS);

    await redis.stop();
    for (const replica of replicas) {
      const res = await chat(replica, users.five!.key);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal((await outcome(res)).code, 'coordination_unavailable');
      // An unlimited user needs no shared count: still served.
      assert.equal((await chat(replica, users.free!.key)).status, 200);
      // The account view falls back to this replica's own count of the spend instead of failing.
      const account = await fetch(`${replica.origin}/api/account`, { headers: { authorization: `Bearer ${users.five!.key}` } });
      assert.equal(account.status, 200);
      const { budget } = (await account.json()) as { budget: { limit_usd: number; spent_usd: number } };
      assert.equal(budget.limit_usd, 0.12);
      assert.ok(budget.spent_usd > 0, 'at least the spend this replica knows of');
      assert.equal((await fetch(`${replica.origin}/healthz`)).status, 200);
      assert.equal(replica.proc.exitCode, null);
    }

    await redis.start();
    // Each replica's client reconnects on its own backoff: wait (without spending) until every one
    // reports Redis ready, or the counted requests below meet a replica still at 503 (seen in CI).
    for (const replica of replicas) {
      await eventually(async () => {
        const ready = (await (await fetch(`${replica.origin}/readyz`)).json()) as { coordination?: { redis: string } };
        assert.equal(ready.coordination?.redis, 'ready', 'the replica reconnected to Redis');
      }, { timeoutMs: 30_000, intervalMs: 100 });
    }
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await chat(replicas[2]!, users.five!.key)).status;
      if (status !== 200) await sleep(100);
    }
    assert.equal(status, 200, 'served again once Redis is back');
    // 2 before and 1 now: an empty Redis seeded from the database leaves exactly 2 more.
    const after: number[] = [];
    for (let i = 0; i < 4; i++) after.push((await chat(replicas[i % 3]!, users.five!.key)).status);
    assert.deepEqual(after, [200, 200, 402, 402]);
    const seen = await storedOnce(users.five!.id, 5 * COST_NANOS);
    assert.equal(seen.spentNanos, 5 * COST_NANOS);
    assert.equal(seen.loggedNanos, seen.spentNanos);
  });
});
