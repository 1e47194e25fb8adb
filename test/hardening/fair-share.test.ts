/**
 * Issue 14, item 9: 256 long streams of one user made another user's short request wait 22.7 s for
 * an upstream connection. Now each user has a cap on requests in flight (429
 * `concurrency_limit_exceeded`), and a request that still finds its origin's pool full waits at most
 * `upstream.queueTimeoutMs` (503 `upstream_busy`). A small upstream holds `hold` streams open until
 * the test releases them; every other model answers at once.
 */
import { readSimRequest } from '../helpers/sim-http.ts';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { eventually } from '../helpers/eventually.ts';

const POOL = 10;
const held: ServerResponse[] = [];
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({
  id: 'chatcmpl-hold', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'hold',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})}\n\n`;

function releaseHeld(): void {
  for (const res of held.splice(0)) res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
}

let upstream: Server;
let tg: TestGateway;

before(async () => {
  upstream = createServer(async (req, res) => {
    const model = String((await readSimRequest(req)).request.body?.model);
    if (model === 'hold') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'still thinking' }));
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-quick', object: 'chat.completion', created: 1_700_000_000, model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'quick' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, apiKey: 'sk-test' } },
    upstream: { connectionsPerOrigin: POOL, queueTimeoutMs: 1_000 },
    user: { maxConcurrent: 8 },
  });
});

after(async () => {
  releaseHeld();
  await tg?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

async function newKey(name: string, maxConcurrent: number | null = null): Promise<string> {
  const user = await createGatewayUser(tg.gateway.store.db, { name, maxConcurrent });
  return (await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id })).key;
}

/**
 * Posts a chat; resolves with the response, or 'pending' when its headers did not come within
 * `waitMs`: a liveness bound (a request that never gets an answer fails the test instead of hanging
 * it), not a speed one, which a busy machine would break.
 */
async function chat(key: string, model: string, stream: boolean, waitMs = 60_000): Promise<Response | 'pending'> {
  const request = fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `openai/${model}`, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const timeout = new Promise<'pending'>((resolve) => setTimeout(resolve, waitMs, 'pending').unref());
  return Promise.race([request, timeout]);
}

test('a user over max_concurrent gets 429 while another user is served before any of the first user\'s streams ends', async () => {
  const streams = await Promise.all(Array.from({ length: 20 }, () => chat(tg.apiKey, 'hold', true)));
  const statuses = streams.map((r) => (r === 'pending' ? 'pending' : r.status));
  assert.equal(statuses.filter((s) => s === 200).length, 8, statuses.join(','));
  assert.equal(statuses.filter((s) => s === 429).length, 12, statuses.join(','));
  const refused = streams.find((r): r is Response => r !== 'pending' && r.status === 429)!;
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(refused.headers.get('x-ratelimit-limit-concurrency'), '8');
  assert.equal(refused.headers.get('x-ratelimit-remaining-concurrency'), '0');
  const body = (await refused.json()) as { error: { type: string; code: string } };
  assert.deepEqual([body.error.type, body.error.code], ['rate_limit_error', 'concurrency_limit_exceeded']);

  // The upstream holds the first user's streams until the test releases them: an answer now is one
  // that did not wait for a connection they hold (before the cap, it waited 22.7 s for one).
  const otherKey = await newKey('fair-other');
  const other = await chat(otherKey, 'gpt-4o-mini', false);
  assert.notEqual(other, 'pending', "the other user's request waited behind the first user's streams");
  assert.equal((other as Response).status, 200);
  assert.equal(held.length, 8, "the first user's 8 streams were all still open");

  // Once the streams end, their slots are free again (released when each exchange ends, a moment
  // after its last byte).
  releaseHeld();
  for (const r of streams) if (r !== 'pending' && r.status === 200) await r.text();
  await eventually(async () => {
    const again = await chat(tg.apiKey, 'gpt-4o-mini', false);
    assert.equal(again === 'pending' ? 'pending' : again.status, 200);
  }, { intervalMs: 50 });
});

test('a call that finds its origin pool full waits upstream.queueTimeoutMs, then 503 upstream_busy', async () => {
  const key = await newKey('fair-pool-filler', 100);
  const streams = await Promise.all(Array.from({ length: POOL }, () => chat(key, 'hold', true)));
  assert.deepEqual(streams.map((r) => (r === 'pending' ? 'pending' : r.status)), Array(POOL).fill(200));
  const queued = await chat(key, 'gpt-4o-mini', false);
  assert.notEqual(queued, 'pending');
  const res = queued as Response;
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '1');
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'upstream_busy');
  assert.match(body.error.message, /queueTimeoutMs/);
  releaseHeld();
  for (const r of streams) if (r !== 'pending') await r.text();
});
