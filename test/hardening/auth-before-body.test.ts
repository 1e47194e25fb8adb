/**
 * Issue 14, item 8: a request with a bad key is refused 401 from its headers, before any of its body is
 * read, on every dialect's route that takes a body: the gateway answers while the client is still
 * sending a 4 MiB malformed body, and then closes the connection (it neither parses nor drains the rest).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { dialects } from '../../core/dialects/index.ts';
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

const BODY_BYTES = 4 * 1024 * 1024;

/**
 * Sends the headers of a `BODY_BYTES` request and 64 KiB of a malformed body, then nothing more.
 * Resolves with what the gateway sent and whether it closed the connection, within `waitMs`: a
 * liveness bound, far below the gateway's request timeout (300 s), after which a gateway waiting for
 * the rest of the body would answer 408 at last; any answer sooner is one that did not wait for it.
 */
function partialRequest(port: number, path: string, headers: Record<string, string>, waitMs = 60_000): Promise<{ response: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let response = '';
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ response, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (data) => (response += data.toString()));
    socket.on('error', () => {});
    socket.on('close', () => done(true));
    const head = Object.entries({ host: 'tollgate', 'content-type': 'application/json', 'content-length': String(BODY_BYTES), ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
    socket.write('{"model": ' + 'x'.repeat(64 * 1024));
  });
}

const routes = dialects.flatMap((dialect) => dialect.routes.filter((route) => route.hasBody).map((route) => ({ dialect: dialect.id, path: route.path })));

test('every dialect route with a body is covered', () => {
  assert.ok(routes.length >= 3, routes.map((r) => r.path).join(', '));
});

for (const { dialect, path } of routes) {
  for (const [scheme, headers] of [['Bearer', { authorization: 'Bearer tg-not-a-key' }], ['x-api-key', { 'x-api-key': 'tg-not-a-key' }], ['no key', {}]] as const) {
    test(`${dialect} ${path} (${scheme}): 401 before the body is read, then the connection is closed`, async () => {
      const { response, closed } = await partialRequest(tg.gateway.address.port, path, headers);
      assert.match(response, /^HTTP\/1\.1 401 /, response.slice(0, 200));
      assert.match(response, /\r\nconnection: close\r\n/i);
      assert.match(response, /invalid_api_key|authentication_error|"UNAUTHENTICATED"/);
      assert.ok(closed, 'the gateway closed the connection without waiting for the rest of the body');
    });
  }
}
