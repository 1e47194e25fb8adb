/**
 * The self-service portal's API against the whole gateway and the OpenAI simulator (docs/portal.md):
 * sessions are created with the portal's own session store (the OIDC sign-in comes later), a user
 * creates a key, calls a chat completion with it through the official SDK, sees the request, revokes
 * the key (then 401); another user's ids get 404 or nothing on every route that takes an id or
 * returns rows; a foreign Origin gets 403 on every mutating call; no session gets 401.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { createPortalSessionStore, PORTAL_COOKIE } from '../../core/portal/portal-sessions.ts';

interface Call { status: number; body: any; headers: Headers }

describe('the portal API', () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let alice: { id: number; cookie: string };
  let bob: { id: number; cookie: string; keyId: number; key: string; requestId: string };

  async function call(method: string, path: string, options: { cookie?: string; body?: unknown; origin?: string } = {}): Promise<Call> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.cookie) headers.cookie = `${PORTAL_COOKIE}=${options.cookie}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    // A browser on the gateway's own page sends its Origin on every mutating call.
    if (method !== 'GET') headers.origin = options.origin ?? tg.gateway.origin;
    const res = await fetch(`${tg.gateway.origin}${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  }

  before(async () => {
    sim = await startOpenAISimulator();
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } }, portal: { enabled: true }, user: { budgetUsd: 25 } });
    const sessions = createPortalSessionStore(tg.gateway.store, Date.now, { idleMs: 3_600_000, maxMs: 3_600_000 });
    const meta = { ip: '127.0.0.1', userAgent: 'test' };
    alice = { id: tg.userId, cookie: (await sessions.create(tg.userId, meta)).token };
    const bobUser = await createGatewayUser(tg.gateway.store.db, { name: 'bob', email: 'bob@example.com' });
    const bobKey = await createApiKey(tg.gateway.store.db, { gatewayUserId: bobUser.id, name: 'bob laptop' });
    const bobClient = new OpenAI({ apiKey: bobKey.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const bobReply = await bobClient.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'bob asks' }] }).withResponse();
    bob = { id: bobUser.id, cookie: (await sessions.create(bobUser.id, meta)).token, keyId: bobKey.id, key: bobKey.key, requestId: bobReply.response.headers.get('x-request-id')! };
  });

  after(async () => {
    await tg?.close();
    await sim?.close();
  });

  test('a user creates a key, uses it, sees the request, revokes it, and the key then gets 401', async () => {
    const created = await call('POST', '/portal/api/keys', { cookie: alice.cookie, body: { name: 'my laptop' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.key, /^tg_/);
    assert.equal(created.body.name, 'my laptop');
    assert.equal(created.body.status, 'active');
    assert.equal(created.headers.get('cache-control'), 'no-store');

    const listed = await call('GET', '/portal/api/keys', { cookie: alice.cookie });
    const row = listed.body.data.find((k: any) => k.id === created.body.id);
    assert.ok(row, 'the new key is listed');
    assert.equal(row.key, undefined, 'the key in clear is shown only once');
    assert.equal(JSON.stringify(listed.body).includes(created.body.key), false);

    const client = new OpenAI({ apiKey: created.body.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    const requestId = reply.response.headers.get('x-request-id')!;
    assert.equal(reply.data.choices[0]!.message.role, 'assistant');

    const requests = await call('GET', '/portal/api/requests', { cookie: alice.cookie });
    assert.equal(requests.status, 200);
    const logged = requests.body.data.find((r: any) => r.request_id === requestId);
    assert.ok(logged, 'the request is in the portal log');
    assert.equal(logged.api_key_id, created.body.id);
    assert.equal(logged.status, 200);
    assert.ok(logged.prompt_tokens > 0);

    const me = await call('GET', '/portal/api/me', { cookie: alice.cookie });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.id, alice.id);
    assert.equal(me.body.budget.limit_usd, 25);
    assert.ok(me.body.usage.requests >= 1);

    const renamed = await call('PATCH', `/portal/api/keys/${created.body.id}`, { cookie: alice.cookie, body: { name: 'old laptop' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'old laptop');

    const revoked = await call('DELETE', `/portal/api/keys/${created.body.id}`, { cookie: alice.cookie });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.status, 'revoked');
    await assert.rejects(
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }),
      (err: any) => err.status === 401 && err.error?.code === 'invalid_api_key',
    );
  });

  test('another user\'s key id answers 404 on every key route, and their key is untouched', async () => {
    for (const [method, body] of [['PATCH', { name: 'stolen' }], ['DELETE', undefined]] as const) {
      const res = await call(method, `/portal/api/keys/${bob.keyId}`, { cookie: alice.cookie, body });
      assert.equal(res.status, 404, `${method}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'key_not_found');
      // The same answer as for an id nobody has: existence is not revealed.
      const none = await call(method, '/portal/api/keys/999999', { cookie: alice.cookie, body });
      assert.deepEqual(none.body, res.body);
    }
    const key = await tg.gateway.store.db.selectFrom('api_keys').select(['name', 'revoked_at']).where('id', '=', bob.keyId).executeTakeFirstOrThrow();
    assert.deepEqual(key, { name: 'bob laptop', revoked_at: null });
    const bobCalls = new OpenAI({ apiKey: bob.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    await bobCalls.models.list();
  });

  test('rows and lists hold only the session user\'s own data, whatever ids the query names', async () => {
    const keys = await call('GET', '/portal/api/keys', { cookie: alice.cookie });
    assert.ok(keys.body.data.length > 0);
    assert.equal(keys.body.data.some((k: any) => k.id === bob.keyId), false);
    for (const query of ['', `?user_id=${bob.id}`, `?key_id=${bob.keyId}`, `?user_id=${bob.id}&key_id=${bob.keyId}`]) {
      const res = await call('GET', `/portal/api/requests${query}`, { cookie: alice.cookie });
      assert.equal(res.status, 200, query);
      assert.equal(res.body.data.some((r: any) => r.request_id === bob.requestId || r.user_id !== alice.id), false, `${query}: ${JSON.stringify(res.body.data)}`);
    }
    // Bob sees his own request: the filter above is the session's user, not an empty log.
    const bobs = await call('GET', '/portal/api/requests', { cookie: bob.cookie });
    assert.deepEqual(bobs.body.data.map((r: any) => r.request_id), [bob.requestId]);
    const me = await call('GET', `/portal/api/me?user_id=${bob.id}`, { cookie: alice.cookie });
    assert.equal(me.body.user.id, alice.id);
  });

  test('pages of requests run newest first and follow next_cursor', async () => {
    for (let i = 0; i < 3; i++) await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `page ${i}` }] });
    const first = await call('GET', '/portal/api/requests?limit=2', { cookie: alice.cookie });
    assert.equal(first.body.data.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await call('GET', `/portal/api/requests?limit=2&cursor=${first.body.next_cursor}`, { cookie: alice.cookie });
    const all = [...first.body.data, ...second.body.data];
    assert.equal(new Set(all.map((r: any) => r.id)).size, all.length, 'no row repeats across pages');
    const times = all.map((r: any) => r.created_at);
    assert.deepEqual(times, [...times].sort().reverse());
  });

  test('models and snippets: what the user may call and the base URLs for each client', async () => {
    const models = await call('GET', '/portal/api/models', { cookie: alice.cookie });
    assert.equal(models.status, 200);
    assert.ok(models.body.data.some((m: any) => m.id === 'openai/gpt-4o-mini'), JSON.stringify(models.body));
    const snippets = await call('GET', '/portal/api/snippets', { cookie: alice.cookie });
    assert.equal(snippets.body.base_urls.openai, `${tg.gateway.origin}/api/v1`);
    assert.equal(snippets.body.base_urls.anthropic, `${tg.gateway.origin}/api`);
    const claude = snippets.body.snippets.find((s: any) => s.id === 'claude-code');
    assert.match(claude.text, new RegExp(`ANTHROPIC_BASE_URL=${tg.gateway.origin}/api\\n`));
    assert.deepEqual(snippets.body.snippets.map((s: any) => s.id), ['claude-code', 'codex', 'openai-sdk', 'anthropic-sdk']);
  });

  test('every mutating call from a foreign Origin answers 403 and changes nothing', async () => {
    const before = await call('GET', '/portal/api/keys', { cookie: alice.cookie });
    const own = before.body.data.find((k: any) => k.status === 'active');
    assert.ok(own, 'alice has an active key');
    const evil = 'https://evil.example';
    for (const [method, path, body] of [
      ['POST', '/portal/api/keys', { name: 'x' }], ['PATCH', `/portal/api/keys/${own.id}`, { name: 'x' }],
      ['DELETE', `/portal/api/keys/${own.id}`, undefined], ['POST', '/portal/api/logout', undefined],
    ] as const) {
      const res = await call(method, path, { cookie: alice.cookie, body, origin: evil });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'origin_mismatch');
    }
    const afterwards = await call('GET', '/portal/api/keys', { cookie: alice.cookie });
    assert.deepEqual(afterwards.body, before.body);
  });

  test('without a session every route but the session probe and logout answers 401', async () => {
    for (const [method, path] of [
      ['GET', '/portal/api/me'], ['GET', '/portal/api/requests'], ['GET', '/portal/api/keys'], ['POST', '/portal/api/keys'],
      ['PATCH', '/portal/api/keys/1'], ['DELETE', '/portal/api/keys/1'], ['GET', '/portal/api/models'], ['GET', '/portal/api/snippets'],
    ] as const) {
      for (const cookie of [undefined, 'not-a-session-token']) {
        const res = await call(method, path, { ...(cookie ? { cookie } : {}), ...(method === 'POST' || method === 'PATCH' ? { body: { name: 'x' } } : {}) });
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.equal(res.body.error.code, 'session_required');
        assert.equal(res.body.error.type, 'authentication_error');
      }
    }
    assert.deepEqual((await call('GET', '/portal/api/session')).body, { user: null });
    // An admin session cookie is no portal session.
    const adminLogin = await fetch(`${tg.gateway.origin}/admin/api/login`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: tg.gateway.origin }, body: JSON.stringify({ username: 'admin', password: 'test admin password' }),
    });
    const adminToken = /tollgate_session=([^;]+)/.exec(adminLogin.headers.get('set-cookie') ?? '')![1]!;
    assert.equal((await call('GET', '/portal/api/me', { cookie: adminToken })).status, 401);
  });

  test('logout ends the session and clears the cookie', async () => {
    const sessions = createPortalSessionStore(tg.gateway.store, Date.now, { idleMs: 3_600_000, maxMs: 3_600_000 });
    const { token } = await sessions.create(alice.id, { ip: null, userAgent: null });
    assert.equal((await call('GET', '/portal/api/me', { cookie: token })).status, 200);
    const out = await call('POST', '/portal/api/logout', { cookie: token });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie')!, /^tollgate_portal=; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=0$/);
    assert.equal((await call('GET', '/portal/api/me', { cookie: token })).status, 401);
  });

  test('a disabled user\'s session stops working', async () => {
    await tg.gateway.store.db.updateTable('gateway_users').set({ disabled: 1 }).where('id', '=', bob.id).execute();
    try {
      assert.equal((await call('GET', '/portal/api/keys', { cookie: bob.cookie })).status, 401);
    } finally {
      await tg.gateway.store.db.updateTable('gateway_users').set({ disabled: 0 }).where('id', '=', bob.id).execute();
    }
    assert.equal((await call('GET', '/portal/api/keys', { cookie: bob.cookie })).status, 200);
  });

  test('the page is served under /portal/ and sign-in answers a clear 404 until single sign-on is wired', async () => {
    const page = await fetch(`${tg.gateway.origin}/portal/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Tollgate portal<\/title>/);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self' 'sha256-/);
    const vendor = await fetch(`${tg.gateway.origin}/portal/vendor/preact.mjs`);
    assert.equal(vendor.status, 200);
    const login = await call('GET', '/portal/auth/login');
    assert.equal(login.status, 404);
    assert.match(login.body.error.message, /not configured/);
  });
});

describe('the portal when it is off (the default)', () => {
  test('/portal and /portal/api answer 404', async () => {
    const sim = await startOpenAISimulator();
    const tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } } });
    try {
      for (const path of ['/portal/', '/portal/api/me', '/portal/api/session']) {
        const res = await fetch(`${tg.gateway.origin}${path}`);
        assert.equal(res.status, 404, path);
        await res.text();
      }
    } finally {
      await tg.close();
      await sim.close();
    }
  });
});
