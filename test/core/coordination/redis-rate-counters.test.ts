/**
 * The shared rate-limit counters on a real redis-server: the Lua GCRA decides exactly as the
 * in-process GCRA (`gcra.ts`) on the same sequence of requests (replayed at the server times the
 * script used), all buckets of a request are taken or none, concurrency leases are refused when
 * full, given back, renewed while held and gone after their TTL when their replica stops renewing,
 * and an unreachable Redis fails closed (503 `coordination_unavailable`) or open as configured.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createGcraLimiter, type GcraDecision, type GcraLimiter } from '../../../core/coordination/gcra.ts';
import { decisionsOf, type RateBucket, type RateCounters } from '../../../core/coordination/rate-counters.ts';
import type { MaybePromise } from '../../../core/runtime/maybe-promise.ts';
import { connectRedis, type RedisConnection } from '../../../core/coordination/redis-connection.ts';
import { createRedisRateCounters, runGcra, runGcraSettle } from '../../../core/coordination/redis-rate-counters.ts';
import { GatewayError } from '../../../core/errors.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createCoordination, redisUrlOf } from '../../../core/coordination/index.ts';
import { redisTimeMs, skipWithoutRedis, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { sleep } from '../../helpers/sim-http.ts';

const skip = skipWithoutRedis();
const logLines: string[] = [];
const log = createLog('warn', (line) => logLines.push(line));

let redis: RedisServer;
let conn: RedisConnection;
let buckets = 0;

before(async () => {
  if (skip) return;
  redis = await startRedisServer();
  // A busy machine can take longer than the default 500 ms to answer; a timeout would read as Redis down.
  conn = await connectRedis(redis.url, log, undefined, undefined, 5_000);
});

after(async () => {
  await conn?.close();
  await redis?.stop();
});

/** A bucket no other test uses. */
function bucket(limit: number, periodMs: number): RateBucket {
  return { name: `test:${++buckets}`, limit, periodMs };
}

/** The fields both implementations decide. */
function fields(d: GcraDecision) {
  return { allowed: d.allowed, remaining: d.remaining, resetMs: d.resetMs, retryAfterMs: d.retryAfterMs, cost: d.cost };
}

/**
 * One request against `bs` in Redis (all or nothing), replayed on in-process limiters at the server
 * time the script used; asserts the same decisions and returns the outcome.
 */
async function takeBoth(bs: readonly RateBucket[], costs: readonly number[], local: readonly GcraLimiter[], step: string): Promise<boolean> {
  const units = bs.map((b, i) => Math.min(b.limit, Math.ceil(Math.max(0, costs[i]!))));
  const seen = await runGcra(conn, 'take', bs, units);
  const shared = bs.map((b, i) => decisionsOf(b, seen.levels[i]!, units[i]!, seen.allowed).decision);
  const inProcess = bs.map((b, i) => local[i]!.check(b.name, costs[i]!, seen.nowMs));
  const allowed = inProcess.every((d) => d.allowed);
  if (allowed) bs.forEach((b, i) => local[i]!.tryTake(b.name, costs[i]!, seen.nowMs));
  assert.equal(seen.allowed, allowed, `${step}: allowed`);
  assert.deepEqual(shared.map(fields), inProcess.map(fields), `${step}: decisions`);
  return allowed;
}

describe('the Lua GCRA against the in-process GCRA', { skip }, () => {
  test('burst, refusal, refill over time and settlements decide alike', async () => {
    // 5 an hour (one unit back every 12 minutes of Redis's clock): however slowly a busy machine runs
    // the steps, none regains a unit, so the outcomes below hold whatever the timing.
    const b = bucket(5, 3_600_000);
    const local = createGcraLimiter({ limit: 5, periodMs: 3_600_000 });
    const outcomes: boolean[] = [];
    for (let i = 0; i < 7; i++) outcomes.push(await takeBoth([b], [1], [local], `burst ${i}`));
    assert.deepEqual(outcomes, [true, true, true, true, true, false, false], 'the burst of 5, then refusals');
    // 5 a second (one unit back every 200 ms): full now, and a unit back once 250 ms have passed,
    // which only more time can make more true.
    const fast = bucket(5, 1_000);
    const fastLocal = createGcraLimiter({ limit: 5, periodMs: 1_000 });
    assert.equal(await takeBoth([fast], [5], [fastLocal], 'the whole burst'), true);
    await sleep(250);
    assert.equal(await takeBoth([fast], [1], [fastLocal], 'after 250 ms'), true, 'one unit came back after one interval (200 ms)');
    const settled = await runGcraSettle(conn, b, -2);
    local.adjust(b.name, -2, settled.nowMs);
    assert.equal(await takeBoth([b], [2], [local], 'after giving 2 back'), true);
    const charged = await runGcraSettle(conn, b, 4);
    local.adjust(b.name, 4, charged.nowMs);
    assert.equal(await takeBoth([b], [1], [local], 'in debt'), false);
    const peeked = await runGcra(conn, 'peek', [b], [0]);
    assert.deepEqual(fields(decisionsOf(b, peeked.levels[0]!, 0, true).after), fields(local.peek(b.name, peeked.nowMs)), 'peek');
  });

  test('a fresh bucket gives its whole burst in one take, and nothing more', async () => {
    const b = bucket(5, 60_000);
    const local = createGcraLimiter({ limit: 5, periodMs: 60_000 });
    assert.equal(await takeBoth([b], [5], [local], 'the whole burst'), true);
    assert.equal(await takeBoth([b], [1], [local], 'one more'), false);
    const fresh = bucket(5, 60_000);
    assert.equal(await takeBoth([fresh], [9], [local], 'a cost over the limit is clamped to it'), true);
  });

  test('a random sequence of weighted takes and settlements at a non-integer interval decides alike', async () => {
    // 7 per second: one unit every 142.857… ms, the case integer ticks exist for.
    const b = bucket(7, 1_000);
    const local = createGcraLimiter({ limit: 7, periodMs: 1_000 });
    let seed = 42;
    const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % n;
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      if (random(5) === 0) {
        const delta = random(7) - 3 || 1;
        const settled = await runGcraSettle(conn, b, delta);
        local.adjust(b.name, delta, settled.nowMs);
        continue;
      }
      if (!(await takeBoth([b], [random(4) + 0.5], [local], `step ${i}`))) refused++;
      await sleep(random(40));
    }
    assert.ok(refused > 0, 'the sequence reached the limit at least once');
  });

  test('a request over several buckets takes from all of them or from none', async () => {
    const requests = bucket(10, 60_000);
    const tokens = bucket(100, 60_000);
    const local = [createGcraLimiter({ limit: 10, periodMs: 60_000 }), createGcraLimiter({ limit: 100, periodMs: 60_000 })];
    assert.equal(await takeBoth([requests, tokens], [1, 80], local, 'first'), true);
    assert.equal(await takeBoth([requests, tokens], [1, 30], local, 'over the tokens'), false);
    const peeked = await runGcra(conn, 'peek', [requests, tokens], [0, 0]);
    assert.deepEqual(peeked.levels.map((ticks, i) => decisionsOf([requests, tokens][i]!, ticks, 0, true).after.remaining), [9, 20], 'the refusal took no request unit');
    assert.equal(await takeBoth([requests, tokens], [1, 20], local, 'what fits'), true);
  });
});

describe('concurrency leases in Redis', { skip }, () => {
  test('a full slot refuses, a release frees it, and only the full one is named', async () => {
    const counters = createRedisRateCounters(conn, { failMode: 'closed', leaseTtlMs: 30_000, log });
    try {
      const slots = [{ name: 'user:lease-1', limit: 5 }, { name: 'key:lease-1', limit: 2 }];
      const first = await counters.acquire(slots);
      const second = await counters.acquire(slots);
      assert.ok(first.lease && second.lease);
      assert.deepEqual(await counters.acquire(slots), { lease: null, full: 1 });
      assert.equal(Number(await conn.client.zcard('tollgate:rl:slots:user:lease-1')), 2, 'the refusal took no slot of the user');
      await counters.release(first.lease);
      assert.ok((await counters.acquire(slots)).lease, 'a slot is free again');
    } finally {
      await counters.close();
    }
  });

  test('a lease whose replica stops renewing is gone after its TTL; a renewed one stays', async () => {
    // Renewed every TTL / 3: a 3 s TTL lets the live replica's timer run 2 s late on a busy machine.
    const ttlMs = 3_000;
    const dead = createRedisRateCounters(conn, { failMode: 'closed', leaseTtlMs: ttlMs, log });
    const live = createRedisRateCounters(conn, { failMode: 'closed', leaseTtlMs: ttlMs, log });
    const other = createRedisRateCounters(conn, { failMode: 'closed', leaseTtlMs: ttlMs, log });
    try {
      const deadSlot = [{ name: 'user:dies', limit: 1 }];
      const liveSlot = [{ name: 'user:lives', limit: 1 }];
      const deadLease = (await dead.acquire(deadSlot)).lease;
      assert.ok(deadLease);
      await dead.close(); // as if killed: no release, no renewal
      const liveLease = (await live.acquire(liveSlot)).lease;
      assert.ok(liveLease);
      // Both expiries are Redis server times (the scripts read its clock): wait on that clock.
      const deadExpiryMs = Number(await conn.client.zscore('tollgate:rl:slots:user:dies', deadLease.id));
      const liveFirstExpiryMs = Number(await conn.client.zscore('tollgate:rl:slots:user:lives', liveLease.id));
      assert.equal((await other.acquire(deadSlot)).full, 0, 'held right after');
      while ((await redisTimeMs(conn.client)) <= deadExpiryMs) await sleep(100);
      assert.ok((await other.acquire(deadSlot)).lease, 'the dead replica\'s lease expired with its TTL');
      assert.ok(Number(await conn.client.zscore('tollgate:rl:slots:user:lives', liveLease.id)) > liveFirstExpiryMs, 'the live replica pushed its lease\'s expiry on');
      assert.equal((await other.acquire(liveSlot)).full, 0, 'the live replica renewed its lease past the TTL');
    } finally {
      await live.close();
      await other.close();
    }
  });
});

describe('Redis unreachable', { skip }, () => {
  let down: RedisServer;
  let downConn: RedisConnection;
  const b: RateBucket = { name: 'down', limit: 10, periodMs: 60_000 };

  before(async () => {
    if (skip) return;
    down = await startRedisServer();
    downConn = await connectRedis(down.url, log);
    await down.stop();
  });
  after(async () => {
    await downConn?.close();
    await down?.stop();
  });

  /**
   * Runs `fn` and checks it settled before the connection's next reconnection attempt: a command
   * held until Redis is back (an offline queue) settles only after one or more of those.
   */
  async function failsFast<T>(counters: RateCounters, fn: (c: RateCounters) => MaybePromise<T>): Promise<T> {
    let reconnects = 0;
    const count = () => reconnects++;
    downConn.client.on('reconnecting', count);
    try {
      return await fn(counters);
    } finally {
      downConn.client.off('reconnecting', count);
      assert.equal(reconnects, 0, 'answered at once, not after a reconnection attempt');
    }
  }

  test('fail closed: take throws 503 coordination_unavailable; settle and release do not throw', async () => {
    const counters = createRedisRateCounters(downConn, { failMode: 'closed', leaseTtlMs: 30_000, log });
    const is503 = (err: unknown) => err instanceof GatewayError && err.status === 503 && err.code === 'coordination_unavailable' && err.headers['retry-after'] === '1';
    await assert.rejects(failsFast(counters, (c) => c.take([b], [1])), is503);
    await counters.settle(b, -5);
    await counters.release({ id: 'x', names: ['user:down'] });
    assert.equal(await counters.peek([b]), null, 'a status read shows unknown instead of failing');
    await counters.close();
  });

  test('fail open: requests are allowed with their state unknown, and a warning is logged', async () => {
    logLines.length = 0;
    const counters = createRedisRateCounters(downConn, { failMode: 'open', leaseTtlMs: 30_000, log });
    assert.deepEqual(await failsFast(counters, (c) => c.take([b], [1])), { allowed: true, decisions: null, after: null });
    const grant = await counters.acquire([{ name: 'user:down', limit: 1 }]);
    assert.ok(grant.lease, 'a slot is granted');
    await counters.take([b], [1]);
    assert.equal(logLines.filter((l) => l.includes('rate limits not enforced')).length, 1, 'one warning per 10 s, not one per request');
    await counters.close();
  });

  for (const failMode of ['closed', 'open'] as const) {
    test(`fail ${failMode}: concurrency slots are counted by the replica alone, with the same limits, and given back`, async () => {
      const counters = createRedisRateCounters(downConn, { failMode, leaseTtlMs: 30_000, log });
      const slots = [{ name: `user:alone-${failMode}`, limit: 2 }];
      const first = await failsFast(counters, (c) => c.acquire(slots));
      const second = await counters.acquire(slots);
      assert.ok(first.lease && second.lease, 'served up to the limit while Redis is down');
      assert.deepEqual(await counters.acquire(slots), { lease: null, full: 0 }, 'the limit still holds on this replica');
      await counters.release(first.lease);
      assert.ok((await counters.acquire(slots)).lease, 'a released slot is free again');
      await counters.close();
    });
  }
});

describe('choosing the counters from the manifest', () => {
  test('the manifest\'s Redis URL wins over TOLLGATE_REDIS_URL; without either the counters are in process', async () => {
    const settings = { redis: null, failMode: 'closed', leaseTtlMs: 30_000, budgetReservationTtlMs: 600_000, commandTimeoutMs: 500 } as const;
    assert.equal(redisUrlOf({ ...settings, redis: 'redis://a:1' }, { TOLLGATE_REDIS_URL: 'redis://b:2' }), 'redis://a:1');
    assert.equal(redisUrlOf({ ...settings, redis: '' }, { TOLLGATE_REDIS_URL: 'redis://b:2' }), 'redis://b:2');
    assert.equal(redisUrlOf(settings, {}), null);
    const local = await createCoordination(settings, { log, clock: () => 0, env: {} });
    assert.equal(local.rateCounters.shared, false);
    await local.close();
  });

  test('with a Redis URL the counters are shared and count in that Redis', { skip }, async () => {
    const shared = await createCoordination({ redis: null, failMode: 'closed', leaseTtlMs: 30_000, budgetReservationTtlMs: 600_000, commandTimeoutMs: 500 }, { log, clock: () => 0, env: { TOLLGATE_REDIS_URL: redis.url } });
    try {
      assert.equal(shared.rateCounters.shared, true);
      const b = bucket(3, 60_000);
      await shared.rateCounters.take([b], [2]);
      assert.equal((await shared.rateCounters.peek([b]))?.[0]?.remaining, 1);
      assert.equal(Number(await conn.client.exists(`tollgate:rl:gcra:${b.name}:3:60000`)), 1, 'namespaced key in Redis');
    } finally {
      await shared.close();
    }
  });
});
