/**
 * API keys in the admin API: list, create (the key shown once), revoke (the next request with the key
 * gets 401 at once) and the key test, which makes real requests through the gateway's own server as
 * the key by way of auth-guard's single-use test tickets (tested directly at the end).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, manualClock, type ManualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';
import { tempDir } from '../../helpers/tmp.ts';
import type { Store } from '../../../core/store/store.ts';
import { openTestStore } from '../../helpers/test-store.ts';
import { createServiceRegistry } from '../../../core/services.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createGatewayUser, updateGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey, revokeApiKey } from '../../../core/accounts/api-keys.ts';
import { authGuard } from '../../../plugins/auth-guard/index.ts';
import { TEST_TICKET_TTL_MS } from '../../../core/services.ts';
import type { Plugin, PluginContext } from '../../../core/plugin.ts';
import type { Exchange } from '../../../core/exchange.ts';
import { authRefusal } from '../../helpers/auth-guard.ts';

const NOW_MS = Date.parse('2026-11-20T10:00:00.000Z');
const EVIL = { origin: 'http://evil.example' };
const NO_SESSION = { cookie: null };
const messages = [{ role: 'user' as const, content: 'Say hello.' }];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;
let clock: ManualClock;

before(async () => {
  sim = await startOpenAISimulator();
  clock = manualClock(NOW_MS);
  const dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 }]);
  tg = await startTestGateway({
    dataDir,
    clock,
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
    config: { 'auth-guard': { lastUsedFlushMs: 100 }, 'rate-limit': { defaultRpm: 100 } },
    user: { budgetUsd: 5 },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

let users = 0;
async function newUser(fields: Record<string, unknown> = {}): Promise<number> {
  const res = await admin.post('/admin/api/users', { name: `keys-user-${++users}`, ...fields });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function newKey(userId: number, body: Record<string, unknown> = {}): Promise<any> {
  const res = await admin.post(`/admin/api/users/${userId}/keys`, body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });

async function sdkStatus(client: OpenAI): Promise<number> {
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages, max_tokens: 20 });
    return 200;
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return err.status ?? 0;
  }
}

/** Waits until auth-guard wrote back `keyId`'s last use (it flushes every 100 ms here), up to 30 s (a liveness bound). */
async function lastUsedOf(keyId: number): Promise<string | null> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const row = await tg.gateway.store.db.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow();
    if (row.last_used_at !== null) return row.last_used_at;
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

describe('creating keys', () => {
  test('answers 201 with the key object and the key in clear, which works at once', async () => {
    const userId = await newUser();
    const res = await admin.post(`/admin/api/users/${userId}/keys`, { name: 'ci', expires_at: '2027-01-01T00:00:00Z', rpm: 30, tpm: 9000 });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.key, /^tg_[A-Za-z0-9_-]{43}$/);
    assert.match(res.body.created_at, ISO);
    assert.deepEqual(res.body, {
      id: res.body.id, gateway_user_id: userId, name: 'ci', key_prefix: res.body.key.slice(0, 11),
      created_at: res.body.created_at, expires_at: '2027-01-01T00:00:00.000Z', revoked_at: null, last_used_at: null,
      rpm: 30, tpm: 9000, models: null, tags: null, status: 'active', key: res.body.key,
    });
    const stored = await tg.gateway.store.db.selectFrom('api_keys').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.key_hash, res.body.key);
    assert.equal(await sdkStatus(sdk(res.body.key)), 200);
  });

  test('a key limited to models answers 403 permission_denied for any other; the patterns are listed', async () => {
    const userId = await newUser();
    const created = await newKey(userId, { name: 'limited', models: ['openai/gpt-4o*', ' claude-* '] });
    assert.deepEqual(created.models, ['openai/gpt-4o*', 'claude-*']);
    const client = sdk(created.key);
    assert.equal(await sdkStatus(client), 200, 'the bare gpt-4o-mini resolves to openai/gpt-4o-mini');
    await assert.rejects(client.chat.completions.create({ model: 'openai/o3', messages }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 403);
      assert.equal((err.error as { code: string }).code, 'permission_denied');
      return true;
    });
    const listed = await admin.get(`/admin/api/users/${userId}/keys`);
    assert.deepEqual(listed.body.data[0].models, ['openai/gpt-4o*', 'claude-*']);
    assertError(await admin.post(`/admin/api/users/${userId}/keys`, { models: 'openai/*' }), 400, 'invalid_request', 'models');
    assertError(await admin.post(`/admin/api/users/${userId}/keys`, { models: [''] }), 400, 'invalid_request', 'models');
  });

  test('invalid fields are 400 naming the field; an unknown user is 404', async () => {
    const userId = await newUser();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ expires_at: '2026-11-20T09:59:59Z' }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ expires_at: 5 }, 'expires_at'],
      [{ rpm: 0 }, 'rpm'],
      [{ tpm: -3 }, 'tpm'],
      [{ name: 7 }, 'name'],
      [{ user_id: 1 }, 'user_id'],
    ];
    for (const [body, param] of cases) assertError(await admin.post(`/admin/api/users/${userId}/keys`, body), 400, 'invalid_request', param);
    assertError(await admin.post('/admin/api/users/999999/keys', {}), 404, 'user_not_found', 'id');
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/keys`)).body, { data: [] });
  });

  test('is refused without a session (401) and from a foreign Origin (403)', async () => {
    const userId = await newUser();
    assertError(await admin.post(`/admin/api/users/${userId}/keys`, {}, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.post(`/admin/api/users/${userId}/keys`, {}, EVIL), 403, 'origin_mismatch', null);
    assert.deepEqual((await admin.get(`/admin/api/users/${userId}/keys`)).body, { data: [] });
  });
});

/** One chat completion with `key`, once its log row is stored. */
async function chatLogged(key: string): Promise<void> {
  const { response } = await sdk(key).chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).withResponse();
  await tg.logRow(response.headers.get('x-request-id')!);
}

describe('key tags', () => {
  test('a tagged key\'s requests carry its tags in the log, filterable (all of them, exactly) and in the CSV; new tags apply from then on', async () => {
    const userId = await newUser();
    const key = await newKey(userId, { name: 'search-ci', tags: { project: 'search', 'cost-center': '42' } });
    assert.deepEqual(key.tags, { 'cost-center': '42', project: 'search' });
    const other = await newKey(userId, { tags: { project: 'searchx' } });
    await chatLogged(key.key);
    await chatLogged(other.key);
    const tagged = await admin.get(`/admin/api/logs?user_id=${userId}&tag=project=search`);
    assert.equal(tagged.status, 200, tagged.text);
    assert.deepEqual(tagged.body.data.map((r: any) => [r.api_key_id, r.tags]), [[key.id, { 'cost-center': '42', project: 'search' }]]);
    const both = await admin.get(`/admin/api/logs?user_id=${userId}&tag=project=search&tag=cost-center=42`);
    assert.equal(both.body.data.length, 1);
    assert.equal((await admin.get(`/admin/api/logs?user_id=${userId}&tag=project=search&tag=cost-center=43`)).body.data.length, 0);
    assert.equal((await admin.get(`/admin/api/logs?user_id=${userId}&tag=project=Search`)).body.data.length, 0, 'case-sensitive');
    assert.equal((await admin.get(`/admin/api/logs?user_id=${userId}`)).body.data.length, 2);
    const csv = await fetch(`${tg.gateway.origin}/admin/api/logs.csv?user_id=${userId}&tag=project=search`, { headers: { cookie: admin.cookie } });
    const lines = (await csv.text()).trim().split('\r\n');
    assert.equal(lines.length, 2, 'header + one row');
    assert.ok(lines[0]!.endsWith(',tags,team_id,team_name'), lines[0]);
    assert.ok(lines[1]!.endsWith(',"{""cost-center"":""42"",""project"":""search""}",,'), lines[1]);
    assertError(await admin.get('/admin/api/logs?tag=project'), 400, 'invalid_request', 'tag');

    const patched = await admin.patch(`/admin/api/keys/${key.id}`, { tags: { project: 'ads' } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.tags, { project: 'ads' });
    await chatLogged(key.key);
    const rows = (await admin.get(`/admin/api/logs?key_id=${key.id}`)).body.data.map((r: any) => r.tags);
    assert.deepEqual(rows, [{ project: 'ads' }, { 'cost-center': '42', project: 'search' }], 'earlier rows keep the tags they were made with');
    const cleared = await admin.patch(`/admin/api/keys/${key.id}`, { tags: null });
    assert.equal(cleared.body.tags, null);
  });

  test('bad tags are 400 naming "tags"; PATCH changes nothing else and needs a session and the own Origin', async () => {
    const userId = await newUser();
    for (const tags of [['a'], { 'Bad Name': 'x' }, { ok: 'has space' }, { ok: 'x'.repeat(65) }, Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v']))]) {
      assertError(await admin.post(`/admin/api/users/${userId}/keys`, { tags }), 400, 'invalid_request', 'tags');
    }
    const key = await newKey(userId, { rpm: 5 });
    assertError(await admin.patch(`/admin/api/keys/${key.id}`, { rpm: 10 }), 400, 'invalid_request', 'rpm');
    assertError(await admin.patch(`/admin/api/keys/${key.id}`, { tags: { a: 'b' } }, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.patch(`/admin/api/keys/${key.id}`, { tags: { a: 'b' } }, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.patch('/admin/api/keys/999999', { tags: { a: 'b' } }), 404, 'key_not_found', 'id');
    const listed = (await admin.get(`/admin/api/users/${userId}/keys`)).body.data[0];
    assert.deepEqual([listed.rpm, listed.tags], [5, null]);
  });
});

describe('listing keys', () => {
  test('lists a user\'s keys newest first, never the key or its hash, with status on the gateway clock', async () => {
    const userId = await newUser();
    const first = await newKey(userId, { name: 'old', expires_at: '2026-11-20T10:30:00Z' });
    const second = await newKey(userId, {});
    const res = await admin.get(`/admin/api/users/${userId}/keys`);
    assert.equal(res.status, 200);
    const { key: _k1, ...firstView } = first;
    const { key: _k2, ...secondView } = second;
    assert.deepEqual(res.body, { data: [secondView, firstView] });

    // Less than the admin session's idle timeout (120 min), which runs on the same clock.
    clock.advance(3_600_000);
    try {
      const later = await admin.get(`/admin/api/users/${userId}/keys`);
      assert.deepEqual(later.body.data.map((k: any) => k.status), ['active', 'expired']);
      assert.equal(await sdkStatus(sdk(first.key)), 401);
    } finally {
      clock.set(NOW_MS);
    }
  });

  test('an unknown user is 404; no session is 401', async () => {
    assertError(await admin.get('/admin/api/users/999999/keys'), 404, 'user_not_found', 'id');
    assertError(await admin.get(`/admin/api/users/${tg.userId}/keys`, NO_SESSION), 401, 'session_required', null);
  });
});

describe('revoking keys', () => {
  test('answers the revoked key, and the next request with it gets 401 at once', async () => {
    const userId = await newUser();
    const key = await newKey(userId, { name: 'to-revoke' });
    const client = sdk(key.key);
    // Warm auth-guard's cache: the revoke must clear it, not wait for it to expire.
    assert.equal(await sdkStatus(client), 200);
    const res = await admin.post(`/admin/api/keys/${key.id}/revoke`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.revoked_at, ISO);
    assert.equal(res.body.status, 'revoked');
    assert.equal(res.body.id, key.id);
    assert.equal(res.body.key, undefined);
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o-mini', messages }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.AuthenticationError);
      assert.equal(err.code, 'invalid_api_key');
      return true;
    });
    const again = await admin.post(`/admin/api/keys/${key.id}/revoke`);
    assert.equal(again.status, 200);
    assert.equal(again.body.revoked_at, res.body.revoked_at);
  });

  test('an unknown key is 404 key_not_found; foreign Origin 403 and no session 401 revoke nothing', async () => {
    const key = await newKey(await newUser());
    assertError(await admin.post('/admin/api/keys/999999/revoke'), 404, 'key_not_found', 'id');
    assertError(await admin.post('/admin/api/keys/abc/revoke'), 404, 'key_not_found', 'id');
    assertError(await admin.post(`/admin/api/keys/${key.id}/revoke`, {}, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.post(`/admin/api/keys/${key.id}/revoke`, {}, NO_SESSION), 401, 'session_required', null);
    assert.equal(await sdkStatus(sdk(key.key)), 200);
  });
});

describe('testing keys', () => {
  test('an active key authenticates and reports its budget and rate limits as /api/account shows them', async () => {
    const res = await admin.post(`/admin/api/keys/${tg.keyId}/test`);
    assert.equal(res.status, 200, res.text);
    const account = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    const body = (await account.json()) as { budget: { limit_usd: number }; rate_limits: { requests: { limit: number } } };
    assert.equal(typeof res.body.latency_ms, 'number');
    assert.deepEqual(res.body, {
      ok: true, key_id: tg.keyId, status: 200, authenticated: true, latency_ms: res.body.latency_ms, error: null,
      budget: body.budget, rate_limits: body.rate_limits, completion: null,
    });
    assert.equal(body.budget.limit_usd, 5);
    assert.equal(body.rate_limits.requests.limit, 100);
  });

  test('with a model it also makes a one-token chat completion through the pipeline', async () => {
    const before = sim.requests.length;
    const res = await admin.post(`/admin/api/keys/${tg.keyId}/test`, { model: 'gpt-4o-mini' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, true);
    assert.deepEqual(res.body.completion, { model: 'gpt-4o-mini', status: 200, latency_ms: res.body.completion.latency_ms, error: null });
    const upstream = sim.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
    assert.equal(upstream.length, 1);
    assert.equal(upstream[0]!.body!.max_tokens, 1);
    assert.deepEqual(upstream[0]!.body!.messages, [{ role: 'user', content: 'ping' }]);
  });

  test('a completion the gateway refuses is reported with its error, ok false', async () => {
    const res = await admin.post(`/admin/api/keys/${tg.keyId}/test`, { model: 'nosuch/model' });
    assert.equal(res.status, 200);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.status, 200);
    assert.equal(res.body.completion.status, 400);
    assert.equal(res.body.completion.error.code, 'provider_not_found');
  });

  test('the test counts as a use of the key: "Last used" shows it', async () => {
    const userId = await newUser();
    const tested = await newKey(userId);
    const untested = await newKey(userId);
    assert.equal((await admin.post(`/admin/api/keys/${tested.id}/test`, { model: 'gpt-4o-mini' })).body.ok, true);
    assert.notEqual(await lastUsedOf(tested.id), null);
    const keys = await admin.get(`/admin/api/users/${userId}/keys`);
    const shown = (keys.body.data as Array<{ id: number; last_used_at: string | null }>).find((k) => k.id === tested.id);
    assert.match(shown?.last_used_at ?? '', ISO);
    const row = await tg.gateway.store.db.selectFrom('api_keys').select('last_used_at').where('id', '=', untested.id).executeTakeFirstOrThrow();
    assert.equal(row.last_used_at, null);
  });

  test('a revoked key reports 401, not authenticated', async () => {
    const key = await newKey(await newUser());
    await admin.post(`/admin/api/keys/${key.id}/revoke`);
    const res = await admin.post(`/admin/api/keys/${key.id}/test`, { model: 'gpt-4o-mini' });
    assert.equal(res.status, 200);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.status, 401);
    assert.equal(res.body.authenticated, false);
    assert.equal(res.body.error.code, 'invalid_api_key');
    assert.equal(res.body.error.type, 'authentication_error');
    assert.equal(res.body.budget, null);
    assert.equal(res.body.rate_limits, null);
    assert.equal(res.body.completion.status, 401);
  });

  test('a disabled user\'s key is authenticated but denied with 403', async () => {
    const userId = await newUser({ disabled: true });
    const key = await newKey(userId);
    const res = await admin.post(`/admin/api/keys/${key.id}/test`);
    assert.equal(res.body.status, 403);
    assert.equal(res.body.authenticated, true);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.error.code, 'permission_denied');
  });

  test('an unknown key is 404, a bad body 400, foreign Origin 403, no session 401', async () => {
    assertError(await admin.post('/admin/api/keys/999999/test'), 404, 'key_not_found', 'id');
    assertError(await admin.post(`/admin/api/keys/${tg.keyId}/test`, { model: 5 }), 400, 'invalid_request', 'model');
    assertError(await admin.post(`/admin/api/keys/${tg.keyId}/test`, { model: '' }), 400, 'invalid_request', 'model');
    assertError(await admin.post(`/admin/api/keys/${tg.keyId}/test`, { modle: 'x' }), 400, 'invalid_request', 'modle');
    assertError(await admin.post(`/admin/api/keys/${tg.keyId}/test`, {}, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.post(`/admin/api/keys/${tg.keyId}/test`, {}, NO_SESSION), 401, 'session_required', null);
  });
});

describe('auth-guard test tickets', () => {
  let store: Store;
  let plugin: Plugin<unknown>;
  let issue: (apiKeyId: number) => Promise<string | null>;
  const ticketClock = manualClock(NOW_MS);
  let keyId: number;
  let userId: number;

  before(async () => {
    store = await openTestStore(tempDir());
    const services = createServiceRegistry();
    const ctx = { store, services, clock: ticketClock, log: createLog('error', () => {}) } as unknown as PluginContext;
    plugin = await authGuard.create({ cacheSize: 100, lastUsedFlushMs: 100_000 }, ctx);
    issue = (id) => services.get('authGuard')!.issueTestTicket(id);
    userId = (await createGatewayUser(store.db, { name: 'ticket-user' })).id;
    keyId = (await createApiKey(store.db, { gatewayUserId: userId })).id;
  });
  after(async () => {
    await plugin.close?.();
    await store.close();
  });

  const exchange = (token: string) =>
    ({ headers: { authorization: `Bearer ${token}` }, startedAtMs: ticketClock() }) as unknown as Exchange;

  const refusal = (token: string) => authRefusal(plugin, token, ticketClock());

  test('a ticket authenticates once as its key', async () => {
    const ticket = (await issue(keyId))!;
    assert.match(ticket, /^tgt_[A-Za-z0-9_-]{43}$/);
    const ex = exchange(ticket);
    await plugin.onRequest!(ex, undefined);
    assert.equal(ex.principal?.apiKeyId, keyId);
    assert.equal(ex.principal?.gatewayUserId, userId);
    assert.equal(await refusal(ticket), 401);
  });

  test('a ticket expires after 10 seconds of the gateway clock', async () => {
    const ticket = (await issue(keyId))!;
    const fresh = (await issue(keyId))!;
    ticketClock.advance(TEST_TICKET_TTL_MS);
    try {
      assert.equal(await refusal(ticket), 401);
      assert.equal(await refusal(fresh), 401);
    } finally {
      ticketClock.set(NOW_MS);
    }
    assert.equal(await refusal((await issue(keyId))!), null);
  });

  test('an unknown key gets no ticket; an unknown ticket is 401', async () => {
    assert.equal(await issue(999_999), null);
    assert.equal(await refusal('tgt_not-a-ticket'), 401);
  });

  test('a ticket is refused as its key would be: disabled user 403, revoked key 401', async () => {
    await updateGatewayUser(store.db, userId, { disabled: true });
    store.notifyChange();
    assert.equal(await refusal((await issue(keyId))!), 403);
    await updateGatewayUser(store.db, userId, { disabled: false });
    await revokeApiKey(store.db, keyId);
    store.notifyChange();
    assert.equal(await refusal((await issue(keyId))!), 401);
  });
});
