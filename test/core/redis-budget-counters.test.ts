/**
 * The shared budget counters on a real redis-server: a reservation is taken only when spend + live
 * reservations + it fit the limit, concurrent reservations from several "replicas" never pass it, a
 * reservation not settled is gone after its TTL, settlement adds the actual cost (integer nano-USD),
 * the stored spend seeds a period only when Redis has none (and is not even read otherwise), and an
 * unreachable Redis fails closed (503 `coordination_unavailable`) or open as configured.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { createRedisBudgetCounters, heldKey, spendKey } from '../../core/coordination/redis-budget-counters.ts';
import type { BudgetKey } from '../../core/budget-counters.ts';
import { GatewayError } from '../../core/errors.ts';
import { createLog } from '../../core/log.ts';
import { redisTimeMs, skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { sleep } from '../helpers/sim-http.ts';

const skip = skipWithoutRedis();
const logLines: string[] = [];
const log = createLog('warn', (line) => logLines.push(line));

let redis: RedisServer;
let conn: RedisConnection;
let users = 0;

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

/** A period key no other test uses. */
function key(keepMs = 60_000): BudgetKey {
  return { userId: ++users, periodStartIso: '2026-11-01T00:00:00.000Z', keepMs };
}

/** A seed that counts how often it is read. */
function seedOf(nanos: number) {
  const seed = Object.assign(() => {
    seed.reads++;
    return nanos;
  }, { reads: 0 });
  return seed;
}

describe('budget counters in Redis', { skip }, () => {
  test('reserve is all or nothing against spend + live reservations; settle replaces the reservation by the actual cost', async () => {
    const counters = createRedisBudgetCounters(conn, { failMode: 'closed', reservationTtlMs: 60_000, log });
    const k = key();
    const seed = seedOf(0);
    const a = await counters.reserve(k, 40, 100, seed);
    assert.deepEqual(a?.counts, { spentNanos: 0, reservedNanos: 40 });
    const b = await counters.reserve(k, 60, 100, seed);
    assert.ok(b?.held, 'exactly up to the limit fits');
    const refused = await counters.reserve(k, 1, 100, seed);
    assert.equal(refused?.held, null, 'one more nano does not');
    assert.deepEqual(refused?.counts, { spentNanos: 0, reservedNanos: 100 });
    assert.equal(await counters.settle(a!.held!, k, 25, seed), 25);
    assert.deepEqual(await counters.read(k, seed), { spentNanos: 25, reservedNanos: 60 });
    assert.equal(await counters.settle(b!.held!, k, 0, seed), 25, 'a release spends nothing');
    assert.deepEqual(await counters.read(k, seed), { spentNanos: 25, reservedNanos: 0 });
    assert.equal(seed.reads, 1, 'the stored spend is read once, when the period first appears');
    assert.equal(await conn.client.pttl(spendKey(k)) > 0, true, 'the spend expires after its period');
  });

  test('200 concurrent reservations of 7 from three counters ("replicas") against a limit of 100: exactly 14 taken', async () => {
    const replicas = [1, 2, 3].map(() => createRedisBudgetCounters(conn, { failMode: 'closed', reservationTtlMs: 60_000, log }));
    const k = key();
    const taken = await Promise.all(Array.from({ length: 200 }, (_, i) => replicas[i % 3]!.reserve(k, 7, 100, () => 0)));
    assert.equal(taken.filter((t) => t?.held).length, 14);
    assert.deepEqual(await replicas[0]!.read(k, () => 0), { spentNanos: 0, reservedNanos: 98 });
  });

  test('the stored spend seeds a missing period only: an existing spend is kept, and after a loss (a Redis restart) it is seeded again', async () => {
    const counters = createRedisBudgetCounters(conn, { failMode: 'closed', reservationTtlMs: 60_000, log });
    const k = key();
    assert.deepEqual(await counters.read(k, () => 70), { spentNanos: 70, reservedNanos: 0 });
    const later = seedOf(0);
    assert.deepEqual(await counters.read(k, later), { spentNanos: 70, reservedNanos: 0 }, 'a later seed does not overwrite it');
    assert.equal(later.reads, 0, 'nor is it read');
    assert.equal((await counters.reserve(k, 31, 100, later))?.held, null, '70 spent leaves 30');
    await conn.client.del(spendKey(k));
    const held = await counters.reserve(k, 10, 100, () => 80);
    assert.deepEqual(held?.counts, { spentNanos: 80, reservedNanos: 10 });
    // A settlement that finds the period gone is seeded before it adds its cost.
    await conn.client.del(spendKey(k));
    assert.equal(await counters.settle(held!.held!, k, 10, () => 80), 90);
  });

  test('a reservation never settled (its replica died) holds until its TTL, then frees the budget', async () => {
    const ttlMs = 1_000;
    const counters = createRedisBudgetCounters(conn, { failMode: 'closed', reservationTtlMs: ttlMs, log });
    // The expiry is a time on Redis's clock (the script's TIME + TTL); a refusal counts as "within the
    // TTL" only when its answer came before it. A busy machine that answered later runs it again.
    let k = key();
    let expiresAtMs = 0;
    for (let attempt = 1; ; attempt++) {
      k = key();
      const reservingMs = await redisTimeMs(conn.client);
      assert.ok((await counters.reserve(k, 100, 100, () => 0))?.held);
      const [, score] = await conn.client.zrange(heldKey(k), 0, '-1', 'WITHSCORES');
      expiresAtMs = Number(score);
      assert.ok(expiresAtMs >= reservingMs + ttlMs && expiresAtMs <= (await redisTimeMs(conn.client)) + ttlMs, 'it lives its TTL of Redis time');
      const second = await counters.reserve(k, 1, 100, () => 0);
      if ((await redisTimeMs(conn.client)) < expiresAtMs) {
        assert.equal(second?.held, null, 'the budget is held within the TTL');
        break;
      }
      assert.ok(attempt < 5, 'five runs in a row took longer than the TTL of Redis time');
    }
    while ((await redisTimeMs(conn.client)) <= expiresAtMs) await sleep(50);
    assert.deepEqual(await counters.read(k, () => 0), { spentNanos: 0, reservedNanos: 0 });
    assert.ok((await counters.reserve(k, 100, 100, () => 0))?.held);
  });
});

describe('budget counters with Redis unreachable', { skip }, () => {
  let down: RedisServer;
  let downConn: RedisConnection;

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

  test('fail closed: read and reserve throw 503 coordination_unavailable; settle answers null without throwing', async () => {
    const counters = createRedisBudgetCounters(downConn, { failMode: 'closed', reservationTtlMs: 60_000, log });
    const is503 = (err: unknown) => err instanceof GatewayError && err.status === 503 && err.code === 'coordination_unavailable';
    await assert.rejects(counters.read(key(), () => 0), is503);
    await assert.rejects(counters.reserve(key(), 1, 100, () => 0), is503);
    const k = key();
    assert.equal(await counters.settle({ key: k, id: 'x:1:1' }, k, 1, () => 0), null);
  });

  test('fail open: read and reserve answer null (the replica counts alone), with one warning', async () => {
    logLines.length = 0;
    const counters = createRedisBudgetCounters(downConn, { failMode: 'open', reservationTtlMs: 60_000, log });
    assert.equal(await counters.read(key(), () => 0), null);
    assert.equal(await counters.reserve(key(), 1, 100, () => 0), null);
    assert.equal(logLines.filter((l) => l.includes('budgets counted per replica')).length, 1);
  });
});
