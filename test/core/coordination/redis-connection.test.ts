/**
 * The Redis connection's command timeout counts Redis's time, not this process's: a reply that
 * arrived while the event loop was busy past the timeout is still read (ioredis's own timer fired
 * first and answered "Command timed out": 503 `coordination_unavailable` with Redis fine), and a
 * command that never gets an answer still times out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { answeredWithin, connectRedis, type RedisConnection } from '../../../core/coordination/redis-connection.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';

const skip = skipWithoutRedis();
const log = createLog('error', () => {});
const TIMEOUT_MS = 100;
let redis: RedisServer;
let connection: RedisConnection;

before(async () => {
  if (skip) return;
  redis = await startRedisServer();
  connection = await connectRedis(redis.url, log, 10_000, undefined, TIMEOUT_MS);
  await connection.client.ping();
});

after(async () => {
  await connection?.close();
  await redis?.stop();
});

/** Keeps the event loop busy (a replica starved of CPU, or a long synchronous step) for `ms`. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* busy */ }
}

describe('redis command timeout', () => {
  test('a script whose reply arrived while the event loop was blocked past the timeout answers, not "Command timed out"', { skip }, async () => {
    for (let i = 0; i < 3; i++) {
      const pending = connection.run('return tonumber(ARGV[1]) + 1', [], [i]);
      // 5 timeouts (under ioredis's backstop, 10): the local Redis has answered long before the loop
      // reads its socket again.
      blockEventLoop(5 * TIMEOUT_MS);
      assert.equal(await pending, i + 1);
    }
  });

  test('a command that never gets an answer is rejected as timed out; an answer passes through', async () => {
    await assert.rejects(answeredWithin(new Promise<never>(() => {}), 10), /Command timed out/);
    assert.equal(await answeredWithin(Promise.resolve(7), 10), 7);
    await assert.rejects(answeredWithin(Promise.reject(new Error('NOSCRIPT no')), 10), /NOSCRIPT/);
  });
});
