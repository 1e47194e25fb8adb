/**
 * CORS for browser apps (`server.cors`): preflights and real requests from an allowed and a
 * disallowed origin, a streamed request and an error, the admin API left out, `"*"` never reflecting
 * an origin with credentials; and `GET /` sends a browser to the admin UI.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { createCors } from '../../../core/http/cors.ts';

const APP = 'https://app.example';
const EVIL = 'https://evil.example';
let sim: OpenAISimulator;
let tg: TestGateway;
let plain: TestGateway;

before(async () => {
  sim = await startOpenAISimulator();
  const providers = { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } };
  tg = await startTestGateway({ providers, server: { cors: { allowedOrigins: [APP], maxAgeSeconds: 300 } }, config: { 'rate-limit': { defaultRpm: 1000 } } });
  plain = await startTestGateway({ providers });
});

after(async () => {
  await tg?.close();
  await plain?.close();
  await sim?.close();
});

function preflight(gateway: TestGateway, origin: string, requestHeaders = 'authorization, content-type, x-stainless-os, x-stainless-retry-count'): Promise<Response> {
  return fetch(`${gateway.gateway.origin}/api/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
}

function chat(gateway: TestGateway, origin: string | null, body: Record<string, unknown> = {}, key = gateway.apiKey): Promise<Response> {
  return fetch(`${gateway.gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe('preflight', () => {
  test('from an allowed origin answers 204 with the origin, methods, the requested headers and max-age', async () => {
    const res = await preflight(tg, APP);
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type, x-stainless-os, x-stainless-retry-count');
    assert.equal(res.headers.get('access-control-max-age'), '300');
    assert.match(res.headers.get('vary') ?? '', /origin/i);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
  });

  test('without requested headers lists the SDKs\' headers', async () => {
    const res = await preflight(tg, APP, '');
    assert.match(res.headers.get('access-control-allow-headers') ?? '', /authorization, content-type, x-api-key, anthropic-version/);
  });

  test('from a disallowed origin answers 204 without any CORS header, so the browser refuses', async () => {
    const res = await preflight(tg, EVIL);
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-allow-headers'), null);
  });

  test('with CORS off (the default) is not answered: OPTIONS is not a method of the endpoint', async () => {
    const res = await preflight(plain, APP);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('real requests', () => {
  test('from an allowed origin carry allow-origin and expose the request id and rate limits', async () => {
    const res = await chat(tg, APP);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    const exposed = res.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['x-request-id', 'x-ratelimit-remaining-requests', 'retry-after', 'x-tollgate-max-tokens-capped']) assert.match(exposed, new RegExp(`\\b${name}\\b`));
    assert.ok(res.headers.get('x-ratelimit-remaining-requests'));
  });

  test('a streamed response carries them too, and streams', async () => {
    const res = await chat(tg, APP, { stream: true });
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.match(await res.text(), /data: \[DONE\]/);
  });

  test('an error response carries them, so the app can read the error', async () => {
    const res = await chat(tg, APP, {}, 'tg_not-a-key');
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  });

  test('from a disallowed origin carry no CORS header (the server still answers; the browser hides it)', async () => {
    const res = await chat(tg, EVIL);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-expose-headers'), null);
    assert.match(res.headers.get('vary') ?? '', /origin/i);
  });

  test('the admin API never answers CORS', async () => {
    const res = await fetch(`${tg.gateway.origin}/admin/api/me`, { headers: { origin: APP } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('manifest', () => {
  test('refuses an origin with a path', async () => {
    await assert.rejects(startTestGateway({ providers: {}, server: { cors: { allowedOrigins: ['https://app.example/'] } } }), /\/server\/cors\/allowedOrigins\/0/);
  });

  test('refuses allowCredentials with "*" among the origins, naming the fix (issue 39, item 8)', async () => {
    await assert.rejects(
      startTestGateway({ providers: {}, server: { cors: { allowedOrigins: ['*'], allowCredentials: true } } }),
      /\/server\/cors\/allowCredentials: cannot be true while allowedOrigins has "\*".*list the origins/,
    );
  });
});

describe('"*" with credentials asked for (issue 39, item 8)', () => {
  let server: Server;
  let origin: string;
  before(async () => {
    // The policy built directly, as the manifest never lets it through: "*" must hold on its own.
    const cors = createCors({ allowedOrigins: ['*'], allowCredentials: true, maxAgeSeconds: 60 })!;
    server = createServer((req, res) => {
      if (!cors.apply(req, res, 'req_test')) res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('never reflects the origin nor allows credentials: a real request and a preflight get "*"', async () => {
    const real = await fetch(`${origin}/api/v1/models`, { headers: { origin: EVIL } });
    const preflight = await fetch(`${origin}/api/v1/models`, { method: 'OPTIONS', headers: { origin: EVIL, 'access-control-request-method': 'GET' } });
    for (const res of [real, preflight]) {
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('access-control-allow-credentials'), null);
    }
  });
});

describe('GET /', () => {
  test('redirects a browser to the admin UI', async () => {
    const res = await fetch(`${tg.gateway.origin}/`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/admin/');
  });
});
