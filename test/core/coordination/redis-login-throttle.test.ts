/**
 * The admin login throttle shared in Redis (two "replicas" = two throttles on one real redis-server):
 * a burst spread over both is cut at the limit before any password is checked, failures counted on
 * one replica lock the username on the other (for addresses that failed, never for a clean one), a
 * success clears it everywhere, and with Redis gone logins are still throttled, by each replica alone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectRedis, type RedisConnection } from '../../../core/coordination/redis-connection.ts';
import { createRedisLoginThrottle } from '../../../core/coordination/redis-login-throttle.ts';
import type { LoginReservation, LoginThrottle } from '../../../core/coordination/login-throttle.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';

const skip = skipWithoutRedis();
const log = createLog('error', () => {});
let redis: RedisServer;
let connections: RedisConnection[] = [];

before(async () => {
  if (skip) return;
  redis = await startRedisServer();
  connections = [await connectRedis(redis.url, log), await connectRedis(redis.url, log)];
});
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

describe('login throttle shared in Redis', { skip }, () => {
  test('a burst spread over two replicas is cut at the limit', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 5, 60_000, log));
    const results = await Promise.all(Array.from({ length: 100 }, async (_, i) => (i % 2 ? a! : b!).begin('admin', '10.1.0.1', Date.now())));
    const reserved = results.filter((r) => 'attempt' in r);
    assert.equal(reserved.length, 5);
    assert.ok(results.every((r) => 'attempt' in r || r.retryAfterMs === 1_000));
    for (const r of reserved) if ('attempt' in r) r.attempt.release();
    await new Promise((r) => setTimeout(r, 50)); // settles are sent in the background, on each replica's connection
    assert.equal(await waitOf(a!, 'admin', '10.1.0.1'), 0, 'released attempts free their places on every replica');
  });

  test('failures on one replica lock the username on the other; a success clears it', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 2, 60_000, log));
    await fail(a!, 'Dave', '10.1.0.3');
    await fail(b!, 'dave', '10.1.0.4');
    const wait = await waitOf(b!, 'dave', '10.1.0.3');
    assert.ok(wait > 55_000 && wait <= 60_000, `locked for the rest of the window (${wait} ms)`);
    assert.equal(await waitOf(a!, 'dave', '10.1.0.5'), 0, 'an address that never failed may try');
    const clean = await a!.begin('dave', '10.1.0.5', Date.now());
    assert.ok('attempt' in clean);
    clean.attempt.succeeded();
    await new Promise((r) => setTimeout(r, 50)); // the settle is sent in the background
    assert.equal(await waitOf(b!, 'dave', '10.1.0.3'), 0);
  });

  test('an address guessing many usernames is slowed on every replica', async () => {
    const [a, b] = connections.map((c) => createRedisLoginThrottle(c, 2, 60_000, log));
    for (let i = 0; i < 8; i++) await fail(i % 2 ? a! : b!, `user${i}`, '10.1.0.6');
    await new Promise((r) => setTimeout(r, 50));
    const wait = await waitOf(a!, 'someone', '10.1.0.6');
    assert.ok(wait > 0 && wait <= 1_000, `first backoff about 1 s (${wait} ms)`);
    assert.equal(await waitOf(b!, 'someone', '10.1.0.7'), 0, 'another address is not slowed');
  });

  test('with Redis gone, each replica still throttles on its own', async () => {
    const server = await startRedisServer();
    const conn = await connectRedis(server.url, log, undefined, undefined, 200);
    try {
      const throttle = createRedisLoginThrottle(conn, 2, 60_000, log);
      await server.stop();
      const results = await Promise.all(Array.from({ length: 10 }, async () => throttle.begin('admin', '10.1.0.8', Date.now())));
      assert.equal(results.filter((r) => 'attempt' in r).length, 2);
    } finally {
      await conn.close();
    }
  });
});
