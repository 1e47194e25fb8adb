/**
 * Issue 14, item 10: upstream answers are bounded in memory. A non-streamed body over
 * `upstream.maxResponseBytes` is refused 502 `upstream_response_too_large`; a stream over
 * `upstream.maxStreamBytes` ends with the dialect's error event (same code), logged and billed for
 * what was sent; one event that never ends is cut at `MAX_EVENT_CHARS`. A small upstream here
 * misbehaves on purpose, chosen by the request's model.
 */
import { readSimRequest } from '../helpers/sim-http.ts';
import { drainOrClose } from '../helpers/openai-simulator.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { MAX_EVENT_CHARS, createNdjsonFramer, createSseFramer } from '../../core/proxy/sse.ts';
import { GatewayError } from '../../core/errors.ts';
import type { FramedEvent } from '../../core/upstream/upstream-call.ts';

const STREAM_CAP_BYTES = 256 * 1024;
const piece = 'x'.repeat(1_000);
const chunk = (content: string, finish: string | null = null) => `data: ${JSON.stringify({
  id: 'chatcmpl-big', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'flood',
  choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }],
})}\n\n`;

/** Writes `count` content chunks with backpressure, stopping early when the gateway leaves. */
async function flood(res: ServerResponse, count: number): Promise<void> {
  for (let i = 0; i < count && !res.destroyed; i++) {
    if (!res.write(chunk(piece))) await drainOrClose(res);
  }
  if (!res.destroyed) res.end(chunk('', 'stop') + 'data: [DONE]\n\n');
}

let upstream: Server;
let tg: TestGateway;

before(async () => {
  upstream = createServer(async (req, res) => {
    const model = String((await readSimRequest(req)).request.body?.model);
    if (model === 'big-json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-big', object: 'chat.completion', created: 1_700_000_000, model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'y'.repeat(2 * 1024 * 1024) }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      }));
    } else if (model === 'flood') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // 4 MiB in all, far over the test's 256 KiB cap (and small enough to end on its own).
      await flood(res, 4_000);
    } else if (model === 'endless-event') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('hello'));
      // One event that never ends: its data line grows past MAX_EVENT_CHARS, then the upstream idles.
      res.write('data: {"id":"chatcmpl-big","choices":[{"index":0,"delta":{"content":"');
      for (let sent = 0; sent <= MAX_EVENT_CHARS && !res.destroyed; sent += 64 * 1024) {
        if (!res.write('z'.repeat(64 * 1024))) await drainOrClose(res);
      }
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-test' } },
    upstream: { maxResponseBytes: 1024 * 1024, maxStreamBytes: STREAM_CAP_BYTES, bodyTimeoutMs: 60_000 },
  });
});

after(async () => {
  await tg?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, gateway = tg) {
  return fetch(`${gateway.gateway.origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}

describe('response size caps', () => {
  test('a non-streamed answer over upstream.maxResponseBytes is 502 upstream_response_too_large', async () => {
    const res = await post('/api/v1/chat/completions', { model: 'openai/big-json', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    assert.deepEqual([body.error.type, body.error.code], ['upstream_error', 'upstream_response_too_large']);
    assert.match(body.error.message, /larger than 1048576 bytes/);
  });

  test('a native stream over upstream.maxStreamBytes ends with an error event, logged and billed for what was sent', async () => {
    const res = await post('/api/v1/chat/completions', { model: 'openai/flood', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.length < STREAM_CAP_BYTES + 64 * 1024, `relayed ${text.length} characters`);
    const last = text.trim().split('\n\n').at(-1)!;
    assert.equal((JSON.parse(last.replace(/^data: /, '')) as { error: { code: string } }).error.code, 'upstream_response_too_large');
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.deepEqual([row.status, row.error_code, row.usage_estimated], [502, 'upstream_response_too_large', 1]);
    assert.ok((row.completion_tokens ?? 0) > 10_000, `billed ${row.completion_tokens} completion tokens`);
  });

  test('a translated stream over the cap ends with the Anthropic error event', async () => {
    const res = await post('/api/v1/messages', { model: 'openai/flood', stream: true, max_tokens: 100_000, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: error\ndata: \{"type":"error".*streamed more than 262144 bytes/);
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.deepEqual([row.status, row.error_code], [502, 'upstream_response_too_large']);
  });

  test('one stream event that never ends is cut at MAX_EVENT_CHARS', async () => {
    // Under the default stream cap (64 MiB), so the event's own bound is what cuts it.
    const roomy = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, apiKey: 'sk-test' } },
      upstream: { bodyTimeoutMs: 60_000 },
    });
    try {
      const res = await post('/api/v1/messages', { model: 'openai/endless-event', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01', 'x-api-key': roomy.apiKey }, roomy);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, new RegExp(`event: error\ndata: .*longer than ${MAX_EVENT_CHARS} characters`));
      const row = await roomy.logRow(res.headers.get('x-request-id')!);
      assert.deepEqual([row.status, row.error_code], [502, 'upstream_response_too_large']);
    } finally {
      await roomy.close();
    }
  });
});

describe('framers bound one event', () => {
  for (const [name, framer, unterminated] of [
    ['SSE', createSseFramer(1_000), 'data: ' + 'a'.repeat(2_000)],
    ['NDJSON', createNdjsonFramer(1_000), '{"a":"' + 'a'.repeat(2_000)],
  ] as const) {
    test(`the ${name} framer throws upstream_response_too_large past its limit, and frames normal events`, () => {
      const out: FramedEvent[] = [];
      framer.feed(name === 'SSE' ? 'data: {"ok":1}\n\n' : '{"ok":1}\n', out);
      assert.equal(out.length, 1);
      assert.throws(() => framer.feed(unterminated, out), (err: unknown) => err instanceof GatewayError && err.code === 'upstream_response_too_large' && err.status === 502);
    });
  }
});
