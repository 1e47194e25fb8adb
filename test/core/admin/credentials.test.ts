/**
 * Per-user provider credentials in the admin API: list, read (masked), set or replace, delete, and the
 * test (the provider's model list fetched with the user's own key). A credential set here is used for
 * that user's very next request, and a deleted one falls back to the shared key at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';

const EVIL = { origin: 'http://evil.example' };
const NO_SESSION = { cookie: null };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const OWN_KEY = 'sk-user-own-key-0123456789abcdef';
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } } });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

let users = 0;
async function newUser(): Promise<number> {
  const res = await admin.post('/admin/api/users', { name: `cred-user-${++users}` });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

/** The bearer token of the last chat request the simulator received. */
function lastChatAuthorization(): string | undefined {
  return sim.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)?.headers.authorization;
}

describe('setting and reading credentials', () => {
  test('PUT stores the key sealed and answers the masked credential; GET and the list show the same', async () => {
    const userId = await newUser();
    const res = await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY, base_url: `${sim.baseUrl}/` });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.created_at, ISO);
    assert.deepEqual(res.body, { provider: 'openai', hint: 'sk-…cdef', base_url: sim.baseUrl, created_at: res.body.created_at, updated_at: res.body.created_at });
    assert.ok(!res.text.includes(OWN_KEY));
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/credentials/openai`)).body, res.body);
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/credentials`)).body, { data: [res.body] });
    const stored = await tg.gateway.store.db.selectFrom('provider_credentials').select('ciphertext').where('gateway_user_id', '=', userId).executeTakeFirstOrThrow();
    assert.ok(!Buffer.from(stored.ciphertext).toString('latin1').includes(OWN_KEY));
  });

  test('PUT again replaces the key and keeps the creation time', async () => {
    const userId = await newUser();
    const first = (await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY })).body;
    const second = await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: 'sk-replacement-key-9999' });
    assert.equal(second.status, 200);
    assert.equal(second.body.hint, 'sk-…9999');
    assert.equal(second.body.base_url, null);
    assert.equal(second.body.created_at, first.created_at);
    assert.equal((await admin.get(`/admin/api/users/${userId}/credentials`)).body.data.length, 1);
  });

  test('a user\'s own key is used for its very next request, and after DELETE the shared one is', async () => {
    const put = await admin.put(`/admin/api/users/${tg.userId}/credentials/openai`, { api_key: OWN_KEY });
    assert.equal(put.status, 200);
    await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages });
    assert.equal(lastChatAuthorization(), `Bearer ${OWN_KEY}`);
    const del = await admin.delete(`/admin/api/users/${tg.userId}/credentials/openai`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages });
    assert.equal(lastChatAuthorization(), 'Bearer sk-shared');
    assertError(await admin.get(`/admin/api/users/${tg.userId}/credentials/openai`), 404, 'credential_not_found', 'provider');
    assert.deepEqual((await admin.get(`/admin/api/users/${tg.userId}/credentials`)).body, { data: [] });
  });

  test('invalid bodies are 400 naming the field', async () => {
    const userId = await newUser();
    const path = `/admin/api/users/${userId}/credentials/openai`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'api_key'],
      [{ api_key: '  ' }, 'api_key'],
      [{ api_key: 42 }, 'api_key'],
      [{ api_key: OWN_KEY, base_url: 'not a url' }, 'base_url'],
      [{ api_key: OWN_KEY, base_url: 'ftp://example.com' }, 'base_url'],
      [{ api_key: OWN_KEY, apiKey: OWN_KEY }, 'apiKey'],
    ];
    for (const [body, param] of cases) assertError(await admin.put(path, body), 400, 'invalid_request', param);
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/credentials`)).body, { data: [] });
  });

  test('unknown users, providers and credentials are 404', async () => {
    const userId = await newUser();
    assertError(await admin.get('/admin/api/users/999999/credentials'), 404, 'user_not_found', 'id');
    assertError(await admin.put('/admin/api/users/999999/credentials/openai', { api_key: OWN_KEY }), 404, 'user_not_found', 'id');
    const unknown = await admin.put(`/admin/api/users/${userId}/credentials/anthropic`, { api_key: OWN_KEY });
    assertError(unknown, 404, 'provider_not_found', null);
    assert.match(unknown.body.error.message, /Known providers: openai\./);
    assertError(await admin.get(`/admin/api/users/${userId}/credentials/nosuch`), 404, 'provider_not_found', null);
    assertError(await admin.get(`/admin/api/users/${userId}/credentials/openai`), 404, 'credential_not_found', 'provider');
    assertError(await admin.delete(`/admin/api/users/${userId}/credentials/openai`), 404, 'credential_not_found', 'provider');
  });

  test('no session is 401 and a foreign Origin 403, changing nothing', async () => {
    const userId = await newUser();
    const path = `/admin/api/users/${userId}/credentials/openai`;
    assertError(await admin.get(`/admin/api/users/${userId}/credentials`, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.get(path, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.put(path, { api_key: OWN_KEY }, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.put(path, { api_key: OWN_KEY }, EVIL), 403, 'origin_mismatch', null);
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/credentials`)).body, { data: [] });
    await admin.put(path, { api_key: OWN_KEY });
    assertError(await admin.delete(path, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.delete(path, NO_SESSION), 401, 'session_required', null);
    assert.equal((await admin.get(path)).status, 200);
  });
});

describe('testing credentials', () => {
  test('lists the provider\'s models with the user\'s own key and reports the count', async () => {
    const userId = await newUser();
    await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY });
    const before = sim.requests.length;
    const res = await admin.post(`/admin/api/users/${userId}/credentials/openai/test`);
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.body.latency_ms, 'number');
    assert.deepEqual(res.body, { ok: true, status: 200, latency_ms: res.body.latency_ms, models: 4, error: null });
    const calls = sim.requests.slice(before);
    assert.deepEqual(calls.map((r) => [r.method, r.path, r.headers.authorization]), [['GET', '/v1/models', `Bearer ${OWN_KEY}`]]);
  });

  test('a credential the upstream refuses is reported with the upstream\'s status, ok false', async () => {
    const userId = await newUser();
    await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY, base_url: `${sim.origin}/wrong` });
    const res = await admin.post(`/admin/api/users/${userId}/credentials/openai/test`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.status, 404);
    assert.equal(res.body.models, null);
    assert.equal(res.body.error.type, 'upstream_error');
    assert.match(res.body.error.message, /answered 404/);
  });

  test('an unreachable upstream is reported as a failure, not an error of the endpoint', async () => {
    const userId = await newUser();
    await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY, base_url: 'http://127.0.0.1:1/v1' });
    const res = await admin.post(`/admin/api/users/${userId}/credentials/openai/test`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.models, null);
    assert.equal(typeof res.body.error.message, 'string');
  });

  test('without an own credential, for an unknown provider or user it is 404; foreign Origin 403; no session 401', async () => {
    const userId = await newUser();
    assertError(await admin.post(`/admin/api/users/${userId}/credentials/openai/test`), 404, 'credential_not_found', 'provider');
    assertError(await admin.post(`/admin/api/users/${userId}/credentials/mistral/test`), 404, 'provider_not_found', null);
    assertError(await admin.post('/admin/api/users/999999/credentials/openai/test'), 404, 'user_not_found', 'id');
    await admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: OWN_KEY });
    assertError(await admin.post(`/admin/api/users/${userId}/credentials/openai/test`, {}, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.post(`/admin/api/users/${userId}/credentials/openai/test`, {}, NO_SESSION), 401, 'session_required', null);
  });
});
