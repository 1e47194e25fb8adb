/**
 * Admin sessions and the admin front door against the whole gateway: login (cookie attributes, one
 * answer for a wrong name or password), throttling per username and per address, idle and absolute
 * expiry on a settable clock, logout, sessions surviving a restart, the Origin check on every
 * mutating call, and the static UI files (CSP with the import map's hash, vendor modules, ETags,
 * nothing outside the allow-list).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { manualClock, startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { adminFetch, loginAdmin, TEST_ADMIN } from '../../helpers/admin-client.ts';
import { createAdmin } from '../../../core/accounts/admin-users.ts';
import { createLoginThrottle, type LocalLoginThrottle } from '../../../core/coordination/login-throttle.ts';

const T0 = Date.parse('2026-03-10T08:00:00.000Z');
let sim: OpenAISimulator;
let tg: TestGateway;
let origin: string;
const clock = manualClock(T0);

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    providers: {
      openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' },
      anthropic: { type: 'anthropic', baseUrl: sim.baseUrl },
      ollama: { type: 'ollama', baseUrl: sim.baseUrl },
    },
    clock,
  });
  origin = tg.gateway.origin;
});

after(async () => {
  await tg.close();
  await sim.close();
});

/** `POST /admin/api/login` from local address `from` (any 127.0.0.0/8 address reaches the loopback server). */
function loginFrom(from: string, body: unknown): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(`${origin}/admin/api/login`, {
      method: 'POST', localAddress: from, agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A raw GET with exact headers (fetch adds `Sec-Fetch-*`-free requests, but not a raw path). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('admin login', () => {
  test('sets an HttpOnly, SameSite=Strict session cookie scoped to /admin and reports the session', async () => {
    const res = await adminFetch(origin, 'POST', '/admin/api/login', TEST_ADMIN);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.admin, { id: 1, username: 'admin', role: 'admin', teams: [] });
    assert.equal(res.body.session.created_at, new Date(clock()).toISOString());
    assert.equal(res.body.session.expires_at, new Date(clock() + 12 * 3_600_000).toISOString());
    assert.equal(res.body.session.idle_expires_at, new Date(clock() + 120 * 60_000).toISOString());
    const cookie = res.headers.get('set-cookie')!;
    assert.match(cookie, /^tollgate_session=[A-Za-z0-9_-]{43}; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  test('stores only a hash of the session token', async () => {
    const admin = await loginAdmin(origin);
    const token = admin.cookie.split('=')[1]!;
    const rows = await tg.gateway.store.db.selectFrom('admin_sessions').select('token_hash').execute();
    assert.ok(rows.some((r) => r.token_hash === createHash('sha256').update(token).digest('hex')));
    assert.ok(rows.every((r) => r.token_hash !== token));
  });

  test('marks the cookie Secure when the request came over HTTPS through a proxy', async () => {
    const res = await adminFetch(origin, 'POST', '/admin/api/login', TEST_ADMIN, { origin: null, headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('set-cookie')!, /; Secure$/);
  });

  test('answers a wrong password and an unknown username alike with 401 invalid_credentials', async () => {
    const wrongPassword = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'admin', password: 'nope' });
    const unknownUser = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'nobody', password: 'nope' });
    for (const res of [wrongPassword, unknownUser]) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: { message: 'Wrong username or password.', type: 'authentication_error', code: 'invalid_credentials', param: null } });
      assert.equal(res.headers.get('set-cookie'), null);
    }
  });

  test('rejects a body without a password, with param "password"', async () => {
    const res = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'admin' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'password');
    const extra = await adminFetch(origin, 'POST', '/admin/api/login', { ...TEST_ADMIN, remember: true });
    assert.equal(extra.status, 400);
    assert.equal(extra.body.error.param, 'remember');
  });

  test('throttles a username after 5 failures in 15 minutes with 429 and Retry-After, then lets it in again', async () => {
    await createAdmin(tg.gateway.store.db, 'carol', 'carol password 1');
    for (let i = 0; i < 5; i++) {
      const res = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'carol', password: `guess ${i}` });
      assert.equal(res.status, 401);
    }
    const locked = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'carol', password: 'carol password 1' });
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error.code, 'too_many_login_attempts');
    assert.equal(locked.headers.get('retry-after'), String(15 * 60));
    clock.advance(15 * 60_000);
    const after15 = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'carol', password: 'carol password 1' });
    assert.equal(after15.status, 200);
  });

  test('100 concurrent wrong guesses: at most 5 are checked, the rest get 429, and the real admin from another address logs in', async () => {
    const guesses = await Promise.all(Array.from({ length: 100 }, (_, i) => loginFrom('127.0.0.3', { username: 'admin', password: `guess ${i}` })));
    const checked = guesses.filter((g) => g.status === 401).length;
    const refused = guesses.filter((g) => g.status === 429);
    assert.equal(checked, 5, 'only the attempts within the limit reached the password check');
    assert.equal(refused.length, 95);
    assert.ok(refused.every((g) => Number(g.retryAfter) >= 1));
    // The attacker's address stays locked out of "admin", even with the right password...
    assert.equal((await loginFrom('127.0.0.3', TEST_ADMIN)).status, 429);
    // ...while the real admin, from an address that never failed, is let in.
    assert.equal((await loginFrom('127.0.0.4', TEST_ADMIN)).status, 200);
    clock.advance(15 * 60_000);
  });
});

describe('login throttle', () => {
  /** Begins and fails one attempt; throws when the throttle refused it. */
  const fail = (throttle: LocalLoginThrottle, username: string, ip: string, nowMs: number) => {
    const reserved = throttle.begin(username, ip, nowMs);
    assert.ok('attempt' in reserved, `refused: ${JSON.stringify(reserved)}`);
    reserved.attempt.failed(nowMs);
  };
  const waitOf = (throttle: LocalLoginThrottle, username: string, ip: string, nowMs: number): number => {
    const reserved = throttle.begin(username, ip, nowMs);
    if ('retryAfterMs' in reserved) return reserved.retryAfterMs;
    reserved.attempt.release();
    return 0;
  };

  test('an address trying many usernames gets 4x the per-username allowance, then an exponential backoff', () => {
    const throttle = createLoginThrottle(5, 60_000);
    for (let i = 0; i < 20; i++) fail(throttle, `user${i}`, '10.0.0.1', 1_000 + i);
    assert.equal(waitOf(throttle, 'someone-else', '10.0.0.1', 1_019), 1_000, 'first backoff: 1 s after the last failure');
    fail(throttle, 'someone-else', '10.0.0.1', 2_019);
    assert.equal(waitOf(throttle, 'someone-else', '10.0.0.1', 2_019), 2_000, 'then 2 s');
    fail(throttle, 'someone-else', '10.0.0.1', 4_019);
    assert.equal(waitOf(throttle, 'someone-else', '10.0.0.1', 4_019), 4_000, 'then 4 s');
    assert.equal(waitOf(throttle, 'someone-else', '10.0.0.2', 4_019), 0, 'another address is not slowed');
  });

  test('a locked username refuses only addresses that have failed; a success clears it', () => {
    const throttle = createLoginThrottle(2, 60_000);
    fail(throttle, 'dave', '10.0.0.3', 0);
    fail(throttle, 'dave', '10.0.0.4', 1);
    assert.equal(waitOf(throttle, 'dave', '10.0.0.3', 2), 60_000 - 2);
    assert.equal(waitOf(throttle, 'dave', '10.0.0.5', 2), 0, 'an address that never failed may try');
    const clean = throttle.begin('dave', '10.0.0.5', 2);
    assert.ok('attempt' in clean);
    clean.attempt.succeeded();
    assert.equal(waitOf(throttle, 'dave', '10.0.0.3', 3), 0);
  });

  test('attempts in flight count: a burst is cut at the limit before any password is checked', () => {
    const throttle = createLoginThrottle(5, 60_000);
    const results = Array.from({ length: 100 }, () => throttle.begin('admin', '10.0.0.6', 0));
    const reserved = results.filter((r) => 'attempt' in r);
    assert.equal(reserved.length, 5);
    assert.ok(results.every((r) => 'attempt' in r || r.retryAfterMs === 1_000));
    for (const r of reserved) if ('attempt' in r) r.attempt.release();
    assert.equal(waitOf(throttle, 'admin', '10.0.0.6', 0), 0, 'released attempts free their places');
  });
});

describe('admin sessions', () => {
  test('without a session every admin call but login answers 401 session_required', async () => {
    for (const [method, path] of [['GET', '/admin/api/me'], ['GET', '/admin/api/users'], ['POST', '/admin/api/logout'], ['GET', '/admin/api/logs.csv']]) {
      const res = await adminFetch(origin, method!, path!, method === 'POST' ? {} : undefined);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.body.error.code, 'session_required');
      assert.equal(res.body.error.type, 'authentication_error');
    }
    const forged = await adminFetch(origin, 'GET', '/admin/api/me', undefined, { cookie: 'tollgate_session=forged' });
    assert.equal(forged.status, 401);
  });

  test('GET /admin/api/me names the admin, the session and the gateway', async () => {
    const admin = await loginAdmin(origin);
    const res = await admin.get('/admin/api/me');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.admin, { id: 1, username: 'admin', role: 'admin', teams: [] });
    assert.deepEqual(res.body.gateway.providers, [
      { id: 'openai', name: 'OpenAI', shared_key: 'configured' },
      { id: 'anthropic', name: 'Anthropic', shared_key: 'missing' },
      { id: 'ollama', name: 'Ollama', shared_key: 'not_needed' },
    ]);
    assert.equal(res.body.gateway.time_zone, 'UTC');
    assert.equal(typeof res.body.gateway.version, 'string');
  });

  test('GET /admin/api/session answers 200 either way: no admin without a session, else what /me says', async () => {
    for (const cookie of [undefined, 'tollgate_session=forged']) {
      const anonymous = await adminFetch(origin, 'GET', '/admin/api/session', undefined, cookie ? { cookie } : {});
      assert.equal(anonymous.status, 200);
      assert.deepEqual(anonymous.body, { admin: null, session: null, sign_in: { password: true, sso: null } });
    }
    const admin = await loginAdmin(origin);
    const signedIn = await admin.get('/admin/api/session');
    assert.equal(signedIn.status, 200);
    assert.deepEqual(signedIn.body, (await admin.get('/admin/api/me')).body);
  });

  test('ends after 120 idle minutes, and activity keeps it alive until the absolute 12 hours', async () => {
    const idle = await loginAdmin(origin);
    clock.advance(119 * 60_000);
    assert.equal((await idle.get('/admin/api/me')).status, 200);
    clock.advance(119 * 60_000);
    assert.equal((await idle.get('/admin/api/me')).status, 200, 'the previous call reset the idle timer');
    clock.advance(121 * 60_000);
    assert.equal((await idle.get('/admin/api/me')).status, 401, 'idle for 121 minutes');

    const busy = await loginAdmin(origin);
    for (let hour = 1; hour < 12; hour++) {
      clock.advance(60 * 60_000);
      assert.equal((await busy.get('/admin/api/me')).status, 200, `hour ${hour}`);
    }
    clock.advance(60 * 60_000);
    assert.equal((await busy.get('/admin/api/me')).status, 401, 'past the absolute lifetime');
  });

  test('logout ends the session and clears the cookie', async () => {
    const admin = await loginAdmin(origin);
    const res = await admin.post('/admin/api/logout');
    assert.equal(res.status, 204);
    assert.match(res.headers.get('set-cookie')!, /^tollgate_session=; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=0$/);
    assert.equal((await admin.get('/admin/api/me')).status, 401);
  });

  test('a mutating call from a foreign Origin answers 403 origin_mismatch, even with a valid session', async () => {
    const admin = await loginAdmin(origin);
    const foreign = await admin.post('/admin/api/logout', {}, { origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.deepEqual(foreign.body.error, {
      message: "This request came from another site (its Origin is not the gateway's own) and was refused.",
      type: 'permission_error', code: 'origin_mismatch', param: null,
    });
    const crossSite = await admin.post('/admin/api/logout', {}, { origin: null, headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSite.status, 403);
    const login = await adminFetch(origin, 'POST', '/admin/api/login', TEST_ADMIN, { origin: 'https://evil.example' });
    assert.equal(login.status, 403, 'login CSRF is refused too');
    assert.equal((await admin.get('/admin/api/me')).status, 200, 'the session is untouched');
    const script = await admin.post('/admin/api/logout', {}, { origin: null });
    assert.equal(script.status, 204, 'a client that sends no Origin and no Sec-Fetch-Site (curl) passes');
  });

  test('unknown admin paths answer 404 and wrong methods 405, as JSON error bodies', async () => {
    const admin = await loginAdmin(origin);
    const missing = await admin.get('/admin/api/nothing-here');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const wrong = await admin.call('PATCH', '/admin/api/me', {});
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
  });

  test('a body that is not JSON answers 400', async () => {
    const admin = await loginAdmin(origin);
    const res = await admin.call('POST', '/admin/api/logout', '{"oops', {});
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
  });

  test('sessions survive a restart of the gateway', async () => {
    const dataDir = tg.dataDir;
    const second = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl } }, dataDir, clock });
    try {
      const admin = await loginAdmin(second.gateway.origin);
      await second.close();
      const third = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl } }, dataDir, clock });
      try {
        const res = await adminFetch(third.gateway.origin, 'GET', '/admin/api/me', undefined, { cookie: admin.cookie });
        assert.equal(res.status, 200);
      } finally {
        await third.close();
      }
    } finally {
      await second.close();
    }
  });
});

describe('admin UI files', () => {
  test('/admin redirects to /admin/, which serves the page under a CSP allowing only its import map inline', async () => {
    const redirect = await rawGet('/admin');
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.location, '/admin/');
    const page = await rawGet('/admin/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page.body)![1]!;
    const hash = createHash('sha256').update(importMap).digest('base64');
    assert.match(String(page.headers['content-security-policy']), new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, '\\$&')}';`));
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    const map = JSON.parse(importMap) as { imports: Record<string, string> };
    for (const url of Object.values(map.imports)) {
      const vendor = await rawGet(url);
      assert.equal(vendor.status, 200, url);
      assert.equal(vendor.headers['content-type'], 'text/javascript; charset=utf-8');
    }
    assert.equal(page.body.match(/<script/g)!.length, 2, 'the import map and one module script');
  });

  test('serves the preact and htm modules from node_modules byte for byte, with ETag revalidation', async () => {
    const vendor = await rawGet('/admin/vendor/preact.mjs');
    assert.equal(vendor.body, readFileSync(new URL('../../../node_modules/preact/dist/preact.module.js', import.meta.url), 'utf8'));
    const again = await rawGet('/admin/vendor/preact.mjs', { 'if-none-match': String(vendor.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
  });

  test('serves nothing outside admin-static and the vendor allow-list', async () => {
    for (const path of ['/admin/../package.json', '/admin/%2e%2e/package.json', '/admin/app/../../schema.sql', '/admin/vendor/preact.js', '/admin/secret.key', '/admin/index.html/']) {
      const res = await rawGet(path);
      assert.equal(res.status, 404, path);
    }
  });
});
