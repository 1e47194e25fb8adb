/**
 * Issue 39, item 5: big bodies. Twenty 32 MiB `/api/v1/messages` at once once froze `/healthz` for
 * seconds and took 2.5 GB. Now the bytes of bodies read at once are capped process-wide
 * (`server.maxBodyBytesInFlight`): a body that does not fit is answered 503 `bodies_in_flight_full`
 * with `Retry-After: 1` before any of it is read, while `/healthz` answers and the admitted bodies are
 * read, parsed (off the event loop) and served; and a caller's concurrency slot is taken before its
 * body is read, so a caller at its limit is refused 429 without the gateway reading its body.
 * Bodies are sent over raw sockets so the test decides when each one ends (an ordering, no timing).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { createLog } from '../../core/runtime/log.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';

const MiB = 1024 * 1024;

let sim: AnthropicSimulator;

before(async () => {
  sim = await startAnthropicSimulator();
});
after(async () => {
  await sim?.close();
});

/** A valid Messages body of exactly `bytes` bytes (one long user message). */
function messagesBody(bytes: number): Buffer {
  const head = '{"model":"anthropic/claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"';
  const tail = '"}]}';
  return Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
}

interface PartialRequest {
  /** The whole answer the gateway sent before it closed the connection (requests say `connection: close`). */
  response: Promise<string>;
  /** Whether the gateway answered yet. */
  answered(): boolean;
  /** Sends the rest of the body. */
  finish(): void;
}

/** Sends a `/api/v1/messages` request's headers and its body's first 64 KiB; the rest waits for `finish()`. */
function partialMessages(port: number, apiKey: string, body: Buffer): PartialRequest {
  const socket: Socket = connect({ port, host: '127.0.0.1' });
  let text = '';
  let done = false;
  socket.on('data', (data) => (text += data.toString('latin1')));
  socket.on('error', () => {});
  const response = new Promise<string>((resolve) => socket.on('close', () => {
    done = true;
    resolve(text);
  }));
  const head = [
    'POST /api/v1/messages HTTP/1.1', 'host: tollgate', 'content-type: application/json', `content-length: ${body.length}`,
    `x-api-key: ${apiKey}`, 'anthropic-version: 2023-06-01', 'connection: close',
  ].join('\r\n');
  socket.write(`${head}\r\n\r\n`);
  const first = 64 * 1024;
  socket.write(body.subarray(0, first));
  return {
    response,
    answered: () => done || text.length > 0,
    finish: () => void socket.write(body.subarray(first)),
  };
}

/** Resolves when `count` of `requests` have answered, with their indexes. */
async function untilAnswered(requests: PartialRequest[], count: number): Promise<number[]> {
  for (;;) {
    const answered = requests.flatMap((r, i) => (r.answered() ? [i] : []));
    if (answered.length >= count) return answered;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('bytes of bodies in flight capped (server.maxBodyBytesInFlight)', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant' } },
      server: { maxBodyBytesInFlight: 40 * MiB },
    });
  });
  after(async () => {
    await tg?.close();
  });

  test('of 6 concurrent 16 MiB bodies, 2 are read while 4 get 503 bodies_in_flight_full at once; /healthz answers before the 2 are served', { timeout: 120_000 }, async () => {
    const body = messagesBody(16 * MiB);
    const rssBeforeBytes = process.memoryUsage.rss();
    let rssPeakBytes = rssBeforeBytes;
    const sampler = setInterval(() => (rssPeakBytes = Math.max(rssPeakBytes, process.memoryUsage.rss())), 20);
    try {
      const requests = Array.from({ length: 6 }, () => partialMessages(tg.gateway.address.port, tg.apiKey, body));
      const refusedAt = await untilAnswered(requests, 4);
      assert.equal(refusedAt.length, 4, 'two bodies fit in 40 MiB, the other four are refused');
      for (const i of refusedAt) {
        const answer = await requests[i]!.response;
        assert.match(answer, /^HTTP\/1\.1 503 /, answer.slice(0, 300));
        assert.match(answer, /\r\nretry-after: 1\r\n/i);
        assert.match(answer, /"type":"error"/, 'the Anthropic dialect\'s error shape');
        assert.match(answer, /bodies_in_flight_full|maxBodyBytesInFlight/);
      }
      const admitted = requests.filter((_, i) => !refusedAt.includes(i));
      assert.equal((await fetch(`${tg.gateway.origin}/healthz`)).status, 200);
      for (const request of admitted) request.finish();
      const health = await fetch(`${tg.gateway.origin}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(admitted.every((r) => !r.answered()), '/healthz answered while the admitted bodies were being read');
      for (const request of admitted) assert.match(await request.response, /^HTTP\/1\.1 200 /);
      // Generous (this process also runs the simulator, the test's own bodies and the parse workers): without
      // the cap the six bodies held ~6 × 16 MiB × 5 in the gateway (bytes, string, value, the upstream copy) and as much in the simulator.
      assert.ok(rssPeakBytes - rssBeforeBytes < 640 * MiB, `RSS grew by ${Math.round((rssPeakBytes - rssBeforeBytes) / MiB)} MiB`);
    } finally {
      clearInterval(sampler);
    }
  });

  test('once the admitted bodies are parsed their bytes are given back: a new big body is served', async () => {
    const res = await tg.post('/messages', JSON.parse(messagesBody(16 * MiB).toString()));
    assert.equal(res.status, 200, res.text.slice(0, 300));
  });
});

describe('each user holds at most its share of the bodies in flight (server.maxBodyBytesInFlightPerUser)', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant' } },
      // The share is left to its default: a quarter of 64 MiB, raised to the 32 MiB of one Messages body.
      server: { maxBodyBytesInFlight: 64 * MiB },
    });
  });
  after(async () => {
    await tg?.close();
  });

  test('a user stalling 4 declared 16 MiB bodies holds 2 (its 32 MiB); another user\'s body is served, the first user\'s next is refused', { timeout: 120_000 }, async () => {
    const other = await createGatewayUser(tg.gateway.store.db, { name: `other-${process.pid}` });
    const otherKey = (await createApiKey(tg.gateway.store.db, { gatewayUserId: other.id, name: 'other' })).key;
    const body = messagesBody(16 * MiB);
    const stalled = Array.from({ length: 4 }, () => partialMessages(tg.gateway.address.port, tg.apiKey, body));
    // Two are refused (answered, ended) and two hold their declared bytes (running, unanswered). Waited
    // for by the refusals: a request still being authenticated (a key lookup on PostgreSQL) runs too.
    await eventually(async () => assert.equal(stalled.filter((r) => r.answered()).length, 2, 'two 16 MiB bodies fill the user\'s 32 MiB share'));
    const refused = stalled.filter((r) => r.answered());
    assert.equal(tg.gateway.server.inFlight(), 2, 'the other two hold their bytes');
    for (const request of refused) {
      const answer = await request.response;
      assert.match(answer, /^HTTP\/1\.1 503 /, answer.slice(0, 300));
      assert.match(answer, /"type":"error"/, 'the Anthropic dialect\'s error shape');
      assert.match(answer, /maxBodyBytesInFlightPerUser/, 'the caller\'s own share is named');
    }
    const res = await fetch(`${tg.gateway.origin}/api/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': otherKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 200, (await res.text()).slice(0, 300));
    const next = partialMessages(tg.gateway.address.port, tg.apiKey, messagesBody(1024 * 1024));
    assert.match(await next.response, /^HTTP\/1\.1 503 [^]*maxBodyBytesInFlightPerUser/);
    const held = stalled.filter((r) => !refused.includes(r));
    for (const request of held) request.finish();
    for (const request of held) assert.match(await request.response, /^HTTP\/1\.1 200 /);
  });
});

describe('the concurrency slot taken before the body is read', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant' } },
      config: { 'rate-limit': { defaultMaxConcurrent: 1 } },
    });
  });
  after(async () => {
    await tg?.close();
  });

  test('a caller at its concurrency limit is refused 429 before its body is read; the first body is then served', { timeout: 60_000 }, async () => {
    const body = messagesBody(4 * MiB);
    const first = partialMessages(tg.gateway.address.port, tg.apiKey, body);
    // The first request holds the slot once its 401-check passed; wait until the gateway is reading it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = partialMessages(tg.gateway.address.port, tg.apiKey, body);
    const answer = await second.response;
    assert.match(answer, /^HTTP\/1\.1 429 /, answer.slice(0, 300));
    assert.match(answer, /concurrency/);
    assert.match(answer, /\r\nconnection: close\r\n/i, 'the unread body is not drained');
    assert.equal(first.answered(), false);
    first.finish();
    assert.match(await first.response, /^HTTP\/1\.1 200 /);
  });

  test('a slot taken before a body that is then refused (400) is given back', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': tg.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: '{"model": ',
    });
    assert.equal(res.status, 400);
    const served = await tg.post('/messages', JSON.parse(messagesBody(1024).toString()));
    assert.equal(served.status, 200, served.text);
  });
});

describe('a client that left while its request waited before the body', { skip: skipWithoutRedis() }, () => {
  let tg: TestGateway;
  let redis: RedisServer;
  /** The test's own connection, to pause and resume the gateway's Redis commands. */
  let control: RedisConnection;
  before(async () => {
    redis = await startRedisServer();
    control = await connectRedis(redis.url, createLog('error', () => {}), 5_000);
    tg = await startTestGateway({
      providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant' } },
      server: { maxBodyBytesInFlight: 40 * MiB },
      // The paused slot acquire must wait for CLIENT UNPAUSE, not time out into a 503.
      coordination: { redis: redis.url, commandTimeoutMs: 60_000 },
      user: { maxConcurrent: 1 },
    });
  });
  after(async () => {
    await tg?.close();
    await control?.close();
    await redis?.stop();
  });

  test('ends as the client\'s cancel: its declared bytes and its concurrency slot are given back, its row is logged', { timeout: 90_000 }, async () => {
    const server = tg.gateway.server;
    const connections = () => new Promise<number>((resolve, reject) => server.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    // Scripts (the concurrency slot's acquire in rate-limit's beforeBody) wait until UNPAUSE.
    await control.client.call('CLIENT', 'PAUSE', '600000', 'WRITE');
    let unpaused = false;
    try {
      const socket = connect({ port: tg.gateway.address.port, host: '127.0.0.1' });
      socket.on('error', () => {});
      socket.write([
        'POST /api/v1/messages HTTP/1.1', 'host: tollgate', 'content-type: application/json', `content-length: ${32 * MiB}`,
        `x-api-key: ${tg.apiKey}`, 'anthropic-version: 2023-06-01', '', '',
      ].join('\r\n'));
      await eventually(async () => assert.equal(server.inFlight(), 1, 'the exchange runs'));
      socket.resetAndDestroy();
      await eventually(async () => assert.equal(await connections(), 0, 'the gateway saw the client leave'));
      await control.client.call('CLIENT', 'UNPAUSE');
      unpaused = true;
      await eventually(async () => assert.equal(server.inFlight(), 0, 'the exchange ended'), { timeoutMs: 10_000 });
    } finally {
      if (!unpaused) await control.client.call('CLIENT', 'UNPAUSE');
    }
    // 16 MiB fits in the 40 MiB only once the 32 MiB declared by the client that left are given back;
    // and the user's one concurrency slot is free again.
    const res = await tg.post('/messages', JSON.parse(messagesBody(16 * MiB).toString()));
    assert.equal(res.status, 200, res.text.slice(0, 300));
    await eventually(async () => {
      const rows = await tg.gateway.store.db.selectFrom('llm_requests').selectAll().where('status', '=', 499).execute();
      assert.equal(rows.length, 1, 'the request that was left has its row');
      assert.equal(rows[0]!.error_code, 'client_disconnected');
    });
  });
});
