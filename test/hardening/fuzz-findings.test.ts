/**
 * What `npm run fuzz` (bench/fuzz.ts) found, each pinned by a test: every error answer has a JSON
 * body in the endpoint's shape and an `x-request-id`, even when no route handler ran —
 * - a wrong method on an Anthropic route (405) answers in Anthropic's shape;
 * - requests Node's HTTP parser refuses (headers over 16 KiB: 431; a malformed request: 400) used to
 *   get Node's empty-bodied answer;
 * - a natively relayed stream with an event that is not JSON ends with the dialect's error event (it
 *   used to end after the garbage, as if whole).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';

let sim: OpenAISimulator;
let anthropic: AnthropicSimulator;
let tg: TestGateway;

before(async () => {
  sim = await startOpenAISimulator();
  anthropic = await startAnthropicSimulator();
  tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' }, anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' } },
  });
});

after(async () => {
  await tg?.close();
  await sim?.close();
  await anthropic?.close();
});

/** Writes `raw` on a new connection and resolves with everything the gateway sent until it closed. */
function rawExchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: tg.gateway.address.port, host: '127.0.0.1' });
    let response = '';
    // A liveness bound, generous for a busy machine.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 60 s; got: ${response.slice(0, 200)}`));
    }, 60_000);
    socket.on('data', (d) => (response += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(response);
    });
    socket.write(raw);
  });
}

function parseRaw(response: string): { status: number; headers: string; body: unknown } {
  const [head, body] = [response.slice(0, response.indexOf('\r\n\r\n')), response.slice(response.indexOf('\r\n\r\n') + 4)];
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, body: JSON.parse(body) };
}

const flood = Array.from({ length: 200 }, (_, i) => `x-fuzz-${i}: ${'v'.repeat(100)}\r\n`).join('');

describe('answers the HTTP parser refuses carry a JSON error body', () => {
  test('headers over 16 KiB on /api/v1/chat/completions: 431 in OpenAI\'s shape', async () => {
    const { status, headers, body } = parseRaw(await rawExchange(`POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\n${flood}\r\n`));
    assert.equal(status, 431);
    assert.match(headers, /\r\nx-request-id: req_[0-9a-f]{32}\r\n/);
    assert.match(headers, /\r\ncontent-type: application\/json\r\n/);
    assert.deepEqual(body, { error: { message: 'The request headers exceed the gateway\'s limit (16 KiB in all). Send fewer or shorter headers.', type: 'invalid_request_error', code: 'request_headers_too_large', param: null } });
  });

  test('headers over 16 KiB on /api/v1/messages: 431 in Anthropic\'s shape', async () => {
    const { status, body } = parseRaw(await rawExchange(`POST /api/v1/messages?beta=true HTTP/1.1\r\nhost: x\r\n${flood}\r\n`));
    assert.equal(status, 431);
    assert.deepEqual(body, { type: 'error', error: { type: 'invalid_request_error', message: 'The request headers exceed the gateway\'s limit (16 KiB in all). Send fewer or shorter headers.' } });
  });

  test('a malformed request: 400 malformed_http_request', async () => {
    const { status, body } = parseRaw(await rawExchange('POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n'));
    assert.equal(status, 400);
    assert.equal((body as { error: { code: string } }).error.code, 'malformed_http_request');
  });
});

describe('a wrong method answers 405 in the route\'s dialect', () => {
  for (const path of ['/api/v1/messages', '/api/v1/messages/count_tokens']) {
    test(`PUT ${path}: Anthropic's shape`, async () => {
      const res = await fetch(`${tg.gateway.origin}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${tg.apiKey}` } });
      assert.equal(res.status, 405);
      assert.deepEqual(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message: `PUT is not allowed on ${path}; use POST.` } });
    });
  }

  test('PUT /api/v1/chat/completions: OpenAI\'s shape', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, { method: 'PUT', headers: { authorization: `Bearer ${tg.apiKey}` } });
    assert.equal(res.status, 405);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  });
});

describe('a natively relayed stream with an event that is not JSON ends with an error event', () => {
  test('Anthropic Messages to Anthropic: the last event is an error event in Anthropic\'s shape', async () => {
    const { status, text } = await tg.post('/messages', { model: 'anthropic/sim-malformed', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(status, 200);
    const last = text.trim().split('\n\n').at(-1)!;
    assert.match(last, /^event: error\ndata: /, text);
    const data = JSON.parse(last.split('data: ')[1]!) as { type: string; error: { type: string; message: string } };
    assert.equal(data.type, 'error');
    assert.match(data.error.message, /not JSON/);
  });

  test('Chat Completions to OpenAI: the last event is {"error":...} with upstream_malformed_response', async () => {
    const { status, text } = await tg.post('/chat/completions', { model: 'openai/sim-malformed', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(status, 200);
    const last = text.trim().split('\n\n').at(-1)!;
    assert.equal((JSON.parse(last.replace(/^data: /, '')) as { error: { code: string } }).error.code, 'upstream_malformed_response', text);
  });
});
