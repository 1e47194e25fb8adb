/**
 * The whole gateway in-process (real server, plugins, SQLite file, undici) against the OpenAI
 * simulator: upstream failures before and after headers, timeouts, limits, routing errors,
 * authentication edge cases and stream backpressure.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { startGateway, type RunningGateway } from '../../core/gateway.ts';
import { validateManifest } from '../../core/manifest.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import { createGatewayUser, updateGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { createLog } from '../../core/runtime/log.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually } from '../helpers/eventually.ts';

let sim: OpenAISimulator;
let gateway: RunningGateway;
let key: string;
let closedPortUrl: string;
const serverLog: string[] = [];

async function closedPort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return `http://127.0.0.1:${port}/v1`;
}

before(async () => {
  // Every other upstream answer must come within these timeouts, also on a busy machine: seconds, not
  // 300 ms; sim-slow outlasts the headers timeout many times over.
  sim = await startOpenAISimulator({ slowMs: 60_000 });
  closedPortUrl = await closedPort();
  const manifest = validateManifest(
    {
      server: { maxBodyBytes: 2048 },
      upstream: { headersTimeoutMs: 5_000, bodyTimeoutMs: 30_000, connectTimeoutMs: 10_000 },
      plugins: [
        { name: 'auth-guard' },
        { name: 'logger', config: { flushIntervalMs: 20 } },
        {
          name: 'provider-router',
          config: {
            providers: {
              openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-sim' },
              backup: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-sim' },
              down: { type: 'openai', baseUrl: closedPortUrl, apiKey: 'sk-down' },
              keyless: { type: 'openai', baseUrl: sim.baseUrl },
            },
          },
        },
      ],
    },
    pluginRegistry,
    { env: {} },
  );
  gateway = await startGateway({ manifest, registry: pluginRegistry, dataDir: tempDir(), port: 0, env: { TOLLGATE_ADMIN_PASSWORD: 'correct horse battery' }, log: createLog('debug', (l) => serverLog.push(l)) });
  const user = await createGatewayUser(gateway.store.db, { name: 'in-process' });
  key = (await createApiKey(gateway.store.db, { gatewayUserId: user.id })).key;
});

after(async () => {
  await gateway.close();
  await sim.close();
});

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

async function errorOf(res: Response): Promise<{ status: number; type: string; code: string; message: string; param: string | null }> {
  const body = (await res.json()) as { error: { type: string; code: string; message: string; param: string | null } };
  return { status: res.status, ...body.error };
}

/** The SSE `data:` payloads of a finished stream. */
function events(text: string): string[] {
  return text.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
}

describe('upstream failures', () => {
  test('an upstream slower than headersTimeoutMs gets 504 upstream_timeout', async () => {
    const err = await errorOf(await chat({ model: 'openai/sim-slow' }));
    assert.deepEqual([err.status, err.type, err.code], [504, 'upstream_error', 'upstream_timeout']);
    assert.match(err.message, /timed out \(headers\)/);
  });

  test('an upstream that refuses connections gets 502 upstream_unreachable', async () => {
    const err = await errorOf(await chat({ model: 'down/gpt-4o-mini' }));
    assert.deepEqual([err.status, err.code], [502, 'upstream_unreachable']);
    assert.doesNotMatch(err.message, /sk-down/);
  });

  test('a connection reset mid-stream ends the stream with an error event and no [DONE]', async () => {
    const res = await chat({ model: 'openai/sim-reset', stream: true });
    assert.equal(res.status, 200);
    const all = events(await res.text());
    assert.ok(all.length >= 2);
    const last = JSON.parse(all.at(-1)!) as { error: { code: string; type: string } };
    assert.equal(last.error.type, 'upstream_error');
    assert.equal(last.error.code, 'upstream_stream_truncated');
    assert.ok(!all.includes('[DONE]'));
  });

  test('a stream that stops before finishing ends with upstream_stream_truncated', async () => {
    const all = events(await (await chat({ model: 'openai/sim-truncated', stream: true })).text());
    assert.equal(JSON.parse(all.at(-1)!).error.code, 'upstream_stream_truncated');
  });

  test('an in-band upstream error keeps the upstream code', async () => {
    const all = events(await (await chat({ model: 'openai/sim-mid-error', stream: true })).text());
    const last = JSON.parse(all.at(-1)!) as { error: { code: string; message: string } };
    assert.equal(last.error.code, 'overloaded');
    assert.match(last.error.message, /failed mid-stream: The model overloaded mid-stream/);
    assert.equal(all.length, 3, 'the two chunks before the error were delivered');
  });

  test('malformed upstream JSON is 502 before headers and an error event after', async () => {
    const err = await errorOf(await chat({ model: 'openai/sim-malformed' }));
    assert.deepEqual([err.status, err.code], [502, 'upstream_malformed_response']);
    const all = events(await (await chat({ model: 'openai/sim-malformed', stream: true })).text());
    assert.equal(JSON.parse(all.at(-1)!).error.code, 'upstream_malformed_response');
  });

  test('an upstream quota 429 tells the SDK not to retry', async () => {
    const res = await chat({ model: 'openai/sim-quota' });
    assert.equal(res.headers.get('x-should-retry'), 'false');
    const err = await errorOf(res);
    assert.deepEqual([err.status, err.code], [429, 'insufficient_quota']);
  });

  test('an upstream 404 for the model is 404 model_not_found', async () => {
    const err = await errorOf(await chat({ model: 'openai/sim-404' }));
    assert.deepEqual([err.status, err.type, err.code, err.param], [404, 'not_found_error', 'model_not_found', 'model']);
  });
});

describe('routing', () => {
  test('a bare model listed by two providers is 400 naming both', async () => {
    const err = await errorOf(await chat({ model: 'gpt-4o-mini' }));
    assert.equal(err.status, 400);
    assert.equal(err.param, 'model');
    assert.match(err.message, /openai\/gpt-4o-mini, backup\/gpt-4o-mini/);
  });

  test('a provider without a credential is 400 provider_not_configured', async () => {
    const err = await errorOf(await chat({ model: 'keyless/gpt-4o-mini' }));
    assert.deepEqual([err.status, err.code], [400, 'provider_not_configured']);
  });

  test('the model list survives a provider that is down', async () => {
    const res = await fetch(`${gateway.origin}/api/v1/models`, { headers: { 'x-api-key': key } });
    const list = (await res.json()) as { data: Array<{ id: string }> };
    const ids = list.data.map((m) => m.id);
    assert.ok(ids.includes('openai/gpt-4o') && ids.includes('backup/gpt-4o'));
    assert.ok(!ids.some((id) => id.startsWith('down/')));
  });
});

describe('requests the gateway refuses itself', () => {
  test('a body over maxBodyBytes is 413 request_too_large, logged for the key that sent it', async () => {
    const res = await chat({ model: 'openai/gpt-4o-mini', padding: 'x'.repeat(4096) });
    const requestId = res.headers.get('x-request-id')!;
    const err = await errorOf(res);
    assert.deepEqual([err.status, err.code], [413, 'request_too_large']);
    await eventually(async () => {
      const row = await gateway.store.db.selectFrom('llm_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst();
      assert.deepEqual([row?.status, row?.error_code, row?.api_key_id !== null], [413, 'request_too_large', true]);
    });
  });

  test('an unknown path is 404 and a wrong method 405, both with x-request-id', async () => {
    const notFound = await fetch(`${gateway.origin}/api/v1/completions`, { method: 'POST' });
    assert.equal(notFound.status, 404);
    assert.match(notFound.headers.get('x-request-id') ?? '', /^req_/);
    const wrongMethod = await fetch(`${gateway.origin}/api/v1/chat/completions`);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
  });

  test('health and readiness answer without a key', async () => {
    const health = await fetch(`${gateway.origin}/healthz`);
    assert.deepEqual(await health.json(), { status: 'ok' });
    assert.match(health.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal((await fetch(`${gateway.origin}/readyz`)).status, 200);
  });

  test('an expired key is 401 and a disabled user 403', async () => {
    const user = await createGatewayUser(gateway.store.db, { name: 'edge-cases' });
    const expired = await createApiKey(gateway.store.db, { gatewayUserId: user.id, expiresAt: '2020-01-01T00:00:00.000Z' });
    const expiredErr = await errorOf(await chat({ model: 'openai/gpt-4o-mini' }, { authorization: `Bearer ${expired.key}` }));
    assert.deepEqual([expiredErr.status, expiredErr.code], [401, 'invalid_api_key']);
    assert.match(expiredErr.message, /expired/);

    const other = await createGatewayUser(gateway.store.db, { name: 'disabled-user' });
    const otherKey = await createApiKey(gateway.store.db, { gatewayUserId: other.id });
    await updateGatewayUser(gateway.store.db, other.id, { disabled: true });
    const res = await chat({ model: 'openai/gpt-4o-mini' }, { authorization: '', 'x-api-key': otherKey.key });
    const disabledErr = await errorOf(res);
    assert.deepEqual([disabledErr.status, disabledErr.code], [403, 'permission_denied']);
  });
});

describe('stream backpressure', () => {
  test('a client that stops reading makes the gateway stop reading the upstream, and the stream still completes', async () => {
    const before = sim.backpressureWaits();
    const body = JSON.stringify({ model: 'openai/sim-flood', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const received = await new Promise<string>((resolve, reject) => {
      const req = request(`${gateway.origin}/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.once('data', (first: string) => {
          text += first;
          res.pause();
          // While this client does not read, the upstream must feel the push-back: it reads on once the
          // simulator had to wait for drain (not after a fixed pause, which a busy machine may spend
          // before the buffers fill), or fails after 60 s, a liveness bound.
          const givingUpAtMs = Date.now() + 60_000;
          const poll = setInterval(() => {
            if (sim.backpressureWaits() === before && Date.now() < givingUpAtMs) return;
            clearInterval(poll);
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve(text));
            res.resume();
          }, 10);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.ok(sim.backpressureWaits() > before, 'the simulator had to wait for drain');
    assert.ok(received.endsWith('data: [DONE]\n\n'));
    assert.equal((received.match(/x{1000}/g) ?? []).length, 4000, 'every chunk arrived');
  });
});
