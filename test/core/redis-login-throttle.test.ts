/**
 * The admin login throttle shared in Redis (two "replicas" = two throttles on one real redis-server):
 * a burst spread over both is cut at the limit before any password is checked, failures counted on
 * one replica lock the username on the other (for addresses that failed, never for a clean one), a
 * success clears it everywhere, and with Redis gone logins are still throttled, by each replica alone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { createRedisLoginThrottle } from '../../core/coordination/redis-login-throttle.ts';
import type { LoginReservation, LoginThrottle } from '../../core/admin/login-throttle.ts';
import { createLog } from '../../core/log.ts';
import { redisTimeMs, skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';

const skip = skipWithoutRedis();
const log = createLog('error', () => {});
let redis: RedisServer;
let connections: RedisConnection[] = [];

before(async () => {
  if (skip) return;
  redis = await startRedisServer();
  // A busy machine can take longer than the default 500 ms to answer; a timeout would read as Redis down.
  connections = [await connectRedis(redis.url, log, undefined, undefined, 5_000), await connectRedis(redis.url, log, undefined, undefined, 5_000)];
});

/**
 * Resolves once Redis has run every command sent so far on each replica's connection (settles are
 * sent in the background, without being awaited): a connection answers in order, so its PING's
 * answer comes after theirs.
 */
async function settled(): Promise<void> {
  await Promise.all(connections.map((c) => c.client.ping()));
}
after(async () => {
  for (const c of connections) await c.close();
  await redis?.stop();
});

const reservedOf = (r: LoginReservation) => ('attempt' in r ? r.attempt : null);
async function fail(throttle: LoginThrottle, username: string, ip: string): Promise<void> {
  const attempt = reservedOf(await throttle.begin(username, ip, Date.now()));
  assert.ok(attempt, `refused ${username} from ${ip}`);
  attempt.failed(Date.now());
}
async function waitOf(throttle: LoginThrottle, username: string, ip: string): Promise<number> {
  const reserved = await throttle.begin(username, ip, Date.now());
  if ('retryAfterMs' in reserved) return reserved.retryAfterMs;
  reserved.attempt.release();
  return 0;
}

/**
 * `waitOf`, with Redis's clock (which the scripts decide by) read before and after: the script's
 * `now` lies between, so a wait counted from a stored time can be checked exactly on a busy machine.
 */
async function timedWaitOf(throttle: LoginThrottle, username: string, ip: string): Promise<{ waitMs: number; fromMs: number; toMs: number }> {
  const fromMs = await redisTimeMs(connections[0]!.client);
  const waitMs = await waitOf(throttle, username, ip);
  return { waitMs, fromMs, toMs: await redisTimeMs(connections[0]!.client) };
}

/** The score (a Redis time, ms) of the `rank`-th member of a failure set (-1: the latest). */
async function failureAtMs(key: string, rank: number): Promise<number> {
  return Number((await connections[0]!.client.zrange(key, rank, String(rank), 'WITHSCORES'))[1]);
}

describe('login throttle shared in Redis', { skip }, () => {
  test('a burst spread over two replicas is cut at the limit', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 5, 60_000, log));
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a! : b!).begin('admin', '10.1.0.1', Date.now())));
    const reserved = results.filter((r) => 'attempt' in r);
    assert.equal(reserved.length, 5);
    assert.ok(results.every((r) => 'attempt' in r || r.retryAfterMs === 1_000));
    for (const r of reserved) if ('attempt' in r) r.attempt.release();
    await settled();
    assert.equal(await waitOf(a!, 'admin', '10.1.0.1'), 0, 'released attempts free their places on every replica');
  });

  test('failures on one replica lock the username on the other; a success clears it', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 2, 60_000, log));
    await fail(a!, 'Dave', '10.1.0.3');
    await fail(b!, 'dave', '10.1.0.4');
    await settled();
    // Locked until the window (60 s) has passed since the older of the two failures, on Redis's clock.
    const unlockMs = (await failureAtMs('tollgate:login:fail:u:dave', 0)) + 60_000;
    const { waitMs, fromMs, toMs } = await timedWaitOf(b!, 'dave', '10.1.0.3');
    assert.ok(waitMs >= unlockMs - toMs && waitMs <= unlockMs - fromMs, `locked for the rest of the window (${waitMs} ms, ${unlockMs - toMs}-${unlockMs - fromMs} expected)`);
    assert.equal(await waitOf(a!, 'dave', '10.1.0.5'), 0, 'an address that never failed may try');
    const clean = await a!.begin('dave', '10.1.0.5', Date.now());
    assert.ok('attempt' in clean);
    clean.attempt.succeeded();
    await settled();
    assert.equal(await waitOf(b!, 'dave', '10.1.0.3'), 0);
  });

  test('an address guessing many usernames is slowed on every replica', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 2, 60_000, log));
    // The first backoff: 1 s of Redis's clock after the address's last failure. A machine too busy to
    // try again within it runs the scenario again from another address.
    for (let attempt = 1; ; attempt++) {
      const ip = `10.1.${attempt}.6`;
      for (let i = 0; i < 8; i++) await fail(i % 2 ? a! : b!, `user${i}`, ip);
      await settled();
      const freeAtMs = (await failureAtMs(`tollgate:login:fail:ip:${ip}`, -1)) + 1_000;
      const { waitMs, fromMs, toMs } = await timedWaitOf(a!, 'someone', ip);
      if (toMs < freeAtMs) {
        assert.ok(waitMs > 0 && waitMs >= freeAtMs - toMs && waitMs <= freeAtMs - fromMs, `first backoff 1 s after the last failure (${waitMs} ms, ${freeAtMs - toMs}-${freeAtMs - fromMs} expected)`);
        break;
      }
      assert.ok(attempt < 5, 'five runs in a row took longer than the backoff of Redis time');
    }
    assert.equal(await waitOf(b!, 'someone', '10.1.0.7'), 0, 'another address is not slowed');
  });

  test('with Redis gone, each replica still throttles on its own', async () => {
    const server = await startRedisServer();
    const conn = await connectRedis(server.url, log, undefined, undefined, 200);
    try {
      const throttle = createRedisLoginThrottle(conn, 2, 60_000, log);
      await server.stop();
      const results = await Promise.all(Array.from({ length: 10 }, () => throttle.begin('admin', '10.1.0.8', Date.now())));
      assert.equal(results.filter((r) => 'attempt' in r).length, 2);
    } finally {
      await conn.close();
    }
  });
});
