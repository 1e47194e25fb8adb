/**
 * Admin single sign-on against a real OpenID provider (`oidc-provider` on loopback, its login page
 * driven over HTTP): the code flow with PKCE end to end, roles mapped from the groups claim, a viewer
 * refused on every mutating admin route, a code issued to another client and an expired ID token
 * refused, allowedDomains, logout with the provider's end-session URL, and password login turned off.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { manualClock, startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { adminFetch, assertError, TEST_ADMIN } from '../../helpers/admin-client.ts';
import { CookieJar, jarFetch, signInAtProvider, startOidcProvider, type TestOidcProvider } from '../../helpers/oidc-provider.ts';
import { createAdminMount } from '../../../core/admin/index.ts';
import { createServiceRegistry } from '../../../core/services.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createKeyringSource } from '../../../core/store/data-dir.ts';
import { SSO_PASSWORD_HASH } from '../../../core/accounts/admin-users.ts';
import { runCli } from '../../helpers/cli.ts';
import { eventually } from '../../helpers/eventually.ts';
import type { AdminSettings } from '../../../core/manifest.ts';

const CALLBACK = '/admin/api/oidc/callback';
const SECRET = 'tollgate test client secret';

let sim: OpenAISimulator;
let provider: TestOidcProvider;
const gateways: TestGateway[] = [];

function oidcSettings(extra: Record<string, unknown> = {}) {
  return {
    issuer: provider.issuer, name: 'Test IdP', clientId: 'tollgate-admin', clientSecretEnv: 'TEST_OIDC_SECRET',
    allowedDomains: ['corp.example'],
    roleMapping: { admin: ['tollgate-admins'], viewer: ['tollgate-viewers'] },
    ...extra,
  };
}

async function gatewayWith(oidc: Record<string, unknown>, clock?: ReturnType<typeof manualClock>): Promise<TestGateway> {
  const tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
    admin: { oidc }, env: { TEST_OIDC_SECRET: SECRET }, ...(clock ? { clock } : {}),
  });
  gateways.push(tg);
  return tg;
}

/** Registers the gateways' callbacks at the provider: `tollgate-admin` for all, `intruder` (same callbacks) for the wrong-client test. */
function registerClients() {
  const redirect_uris = gateways.map((g) => g.gateway.origin + CALLBACK);
  const post_logout_redirect_uris = gateways.map((g) => `${g.gateway.origin}/admin/`);
  provider.setClients([
    { client_id: 'tollgate-admin', client_secret: SECRET, redirect_uris, post_logout_redirect_uris },
    { client_id: 'intruder', client_secret: 'intruder secret', redirect_uris },
  ]);
}

interface SignIn {
  jar: CookieJar;
  /** The callback's answer. */
  status: number;
  location: string | null;
  text: string;
  cookie: string | undefined;
}

/** The whole browser round trip: gateway login → provider login page → gateway callback. `tamper` edits the provider URL. */
async function signIn(origin: string, login: string, tamper?: (url: URL) => void): Promise<SignIn> {
  const jar = new CookieJar();
  const start = await jarFetch(jar, `${origin}/admin/api/oidc/login`);
  assert.equal(start.status, 302, start.text);
  const authorize = new URL(start.location!);
  tamper?.(authorize);
  const back = await signInAtProvider(jar, authorize.href, login, origin + CALLBACK);
  const callback = await jarFetch(jar, back.location!);
  const session = jar.get(origin, 'tollgate_session');
  return { jar, status: callback.status, location: callback.location, text: callback.text, cookie: session ? `tollgate_session=${session}` : undefined };
}

let tg: TestGateway;
let origin: string;
let offline: TestGateway;
let expired: TestGateway;
const aheadClock = manualClock(Date.now() + 3 * 3_600_000);

before(async () => {
  sim = await startOpenAISimulator();
  provider = await startOidcProvider({
    alice: { email: 'Alice@corp.example', name: 'Alice', groups: ['tollgate-admins'] },
    victor: { email: 'victor@corp.example', groups: ['tollgate-viewers', 'engineering'] },
    tess: { email: 'tess@corp.example', groups: ['tollgate-team-admin:search', 'tollgate-team-admin:ads', 'tollgate-viewers'] },
    nobody: { email: 'nobody@corp.example', groups: ['engineering'] },
    mallory: { email: 'mallory@elsewhere.example', groups: ['tollgate-admins'] },
    unverified: { email: 'unverified@corp.example', email_verified: false, groups: ['tollgate-admins'] },
  });
  tg = await gatewayWith(oidcSettings());
  origin = tg.gateway.origin;
  offline = await gatewayWith(oidcSettings({ passwordLogin: false }));
  // This gateway's clock is 3 hours ahead: every ID token the provider issues (1 hour) has expired for it.
  expired = await gatewayWith(oidcSettings(), aheadClock);
  registerClients();
});

after(async () => {
  for (const g of gateways) await g.close();
  await provider?.close();
  await sim?.close();
});

describe('admin sign-in with OpenID Connect', () => {
  test('an admin signs in with the code flow and PKCE, lands on /admin/ with a Strict session cookie, and may write', async () => {
    const jar = new CookieJar();
    const start = await jarFetch(jar, `${origin}/admin/api/oidc/login`);
    assert.equal(start.status, 302);
    const authorize = new URL(start.location!);
    assert.equal(authorize.origin, provider.issuer);
    assert.equal(authorize.searchParams.get('client_id'), 'tollgate-admin');
    assert.equal(authorize.searchParams.get('response_type'), 'code');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.match(authorize.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce'));
    assert.equal(authorize.searchParams.get('redirect_uri'), origin + CALLBACK);
    assert.equal(authorize.searchParams.get('scope'), 'openid email profile');
    const flowCookie = (await fetch(`${origin}/admin/api/oidc/login`, { redirect: 'manual' })).headers.get('set-cookie')!;
    assert.match(flowCookie, /^tollgate_oidc_flow=[^;]+; Path=\/admin\/api\/oidc; HttpOnly; SameSite=Lax; Max-Age=600/);
    assert.ok(!flowCookie.includes(authorize.searchParams.get('state')!), 'the flow cookie is sealed');

    const back = await signInAtProvider(jar, authorize.href, 'alice', origin + CALLBACK);
    const callbackRes = await fetch(back.location!, { headers: { cookie: jar.header(origin) }, redirect: 'manual' });
    assert.equal(callbackRes.status, 302);
    assert.equal(callbackRes.headers.get('location'), '/admin/');
    const cookies = callbackRes.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith('tollgate_session='))!;
    assert.match(session, /; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=\d+/);
    assert.ok(cookies.some((c) => /^tollgate_oidc_flow=; .*Max-Age=0/.test(c)), 'the flow cookie is removed');
    const cookie = session.split(';')[0]!;
    // The callback's redirect is sent before its audit row is written (a handler that answers itself): wait for the row.
    await eventually(async () => {
      const login = await tg.gateway.store.db.selectFrom('audit_log').selectAll().where('action', '=', 'session.login').orderBy('id', 'desc').executeTakeFirstOrThrow();
      assert.deepEqual([login.actor, login.actor_kind, login.role, JSON.parse(login.after!).method], ['alice@corp.example', 'admin', 'admin', 'sso']);
    });

    const me = await adminFetch(origin, 'GET', '/admin/api/me', undefined, { cookie });
    assert.equal(me.status, 200);
    assert.deepEqual({ ...me.body.admin, id: 0 }, { id: 0, username: 'alice@corp.example', role: 'admin', teams: [] });
    const created = await adminFetch(origin, 'POST', '/admin/api/users', { name: 'made-by-sso' }, { cookie });
    assert.equal(created.status, 201, created.text);

    // The same callback cannot be replayed: the code is spent and the flow cookie gone.
    const replay = await fetch(back.location!, { headers: { cookie: jar.header(origin) }, redirect: 'manual' });
    assert.equal(replay.status, 400);
    assert.match(await replay.text(), /sso_failed/);
  });

  test('the SSO admin exists with no password: password login fails and neither setAdminPassword (the account page) nor `tollgate admins passwd` gives it one', async () => {
    const row = await tg.gateway.store.db.selectFrom('admin_users').select(['password_hash']).where('username', '=', 'alice@corp.example').executeTakeFirstOrThrow();
    assert.equal(row.password_hash, SSO_PASSWORD_HASH);
    for (const password of [SSO_PASSWORD_HASH, 'sso', '']) {
      const res = await adminFetch(origin, 'POST', '/admin/api/login', { username: 'alice@corp.example', password: password || 'x' });
      assertError(res, 401, 'invalid_credentials', null);
    }
    const { setAdminPassword } = await import('../../../core/accounts/admin-users.ts');
    assert.equal(await setAdminPassword(tg.gateway.store.db, 'alice@corp.example', 'a new long password'), null);
    const cli = await runCli(['admins', 'passwd', 'alice@corp.example', '--password-stdin'], { dataDir: tg.dataDir, input: 'a long enough password' });
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /signs in with single sign-on and can have no password/);
    const after = await tg.gateway.store.db.selectFrom('admin_users').select(['password_hash']).where('username', '=', 'alice@corp.example').executeTakeFirstOrThrow();
    assert.equal(after.password_hash, SSO_PASSWORD_HASH);
  });

  test('roles come from the groups claim: viewer, and team-admin with the teams of its prefixed values', async () => {
    const viewer = await signIn(origin, 'victor');
    assert.equal(viewer.status, 302, viewer.text);
    const viewerMe = await adminFetch(origin, 'GET', '/admin/api/me', undefined, { cookie: viewer.cookie! });
    assert.equal(viewerMe.body.admin.role, 'viewer');
    assert.deepEqual(viewerMe.body.admin.teams, []);

    const teamAdmin = await signIn(origin, 'tess');
    const tessMe = await adminFetch(origin, 'GET', '/admin/api/me', undefined, { cookie: teamAdmin.cookie! });
    assert.equal(tessMe.body.admin.role, 'team-admin');
    assert.deepEqual([...tessMe.body.admin.teams].sort(), ['ads', 'search']);
    // Sessions are database rows: the role and teams are stored with them.
    const rows = await tg.gateway.store.db.selectFrom('admin_sessions as s').innerJoin('admin_users as a', 'a.id', 's.admin_user_id')
      .select(['a.username', 's.role', 's.teams']).where('a.username', '=', 'tess@corp.example').execute();
    assert.equal(rows.at(-1)!.role, 'team-admin');
    // A team-admin may not call an admin-only write either.
    assertError(await adminFetch(origin, 'POST', '/admin/api/users', { name: 'x' }, { cookie: teamAdmin.cookie! }), 403, 'role_forbidden', null);
  });

  test('a viewer is refused with 403 role_forbidden on every mutating admin route', async () => {
    const viewer = await signIn(origin, 'victor');
    const admin = tg.gateway;
    const mount = createAdminMount(
      { store: admin.store, log: createLog('error', () => {}), clock: Date.now, services: createServiceRegistry(), keyring: createKeyringSource(tg.dataDir, {}), selfOrigin: () => origin, notifyChange: () => {} },
      { enabled: true, sessionIdleMinutes: 60, sessionMaxHours: 1, loginMaxFailures: 5, loginWindowMinutes: 15 } satisfies AdminSettings,
      'test',
    );
    mount.close();
    const mutating = mount.routes.filter((r) => r.method !== 'GET' && !r.public && r.access !== 'any');
    assert.ok(mutating.length >= 15, `only ${mutating.length} mutating routes found`);
    for (const route of mutating) {
      const path = route.pattern.replace(/:[a-zA-Z]+/g, '1');
      const res = await adminFetch(origin, route.method, path, route.method === 'DELETE' ? undefined : {}, { cookie: viewer.cookie! });
      assert.equal(res.status, 403, `${route.method} ${route.pattern}: ${res.text}`);
      assert.equal(res.body.error.code, 'role_forbidden', `${route.method} ${route.pattern}`);
    }
    // Reads stay open to a viewer.
    assert.equal((await adminFetch(origin, 'GET', '/admin/api/users', undefined, { cookie: viewer.cookie! })).status, 200);
  });

  test('an identity outside allowedDomains, with an unverified email, or with no mapped role is refused with a page saying why', async () => {
    const mallory = await signIn(origin, 'mallory');
    assert.equal(mallory.status, 403);
    assert.match(mallory.text, /sso_forbidden/);
    assert.match(mallory.text, /elsewhere\.example may not sign in/);
    assert.equal(mallory.cookie, undefined);

    const unverified = await signIn(origin, 'unverified');
    assert.equal(unverified.status, 403);
    assert.match(unverified.text, /not verified/);

    const nobody = await signIn(origin, 'nobody');
    assert.equal(nobody.status, 403);
    assert.match(nobody.text, /no Tollgate admin role/);
    const rows = await tg.gateway.store.db.selectFrom('admin_users').select('username').where('username', 'in', ['mallory@elsewhere.example', 'nobody@corp.example']).execute();
    assert.deepEqual(rows, [], 'a refused identity gets no admin row');
  });

  test('a code issued to another client is refused at the exchange, and so is a callback without the flow cookie', async () => {
    const intruder = await signIn(origin, 'alice', (url) => url.searchParams.set('client_id', 'intruder'));
    assert.equal(intruder.status, 400);
    assert.match(intruder.text, /sso_failed/);
    assert.equal(intruder.cookie, undefined);

    const jar = new CookieJar();
    const start = await jarFetch(jar, `${origin}/admin/api/oidc/login`);
    const back = await signInAtProvider(jar, start.location!, 'alice', origin + CALLBACK);
    const withoutFlow = await jarFetch(new CookieJar(), back.location!);
    assert.equal(withoutFlow.status, 400);
    assert.match(withoutFlow.text, /expired or was started in another browser/);
  });

  test('an ID token already expired by the gateway\'s clock is refused', async () => {
    const res = await signIn(expired.gateway.origin, 'alice');
    assert.equal(res.status, 400, res.text);
    assert.match(res.text, /sso_failed/);
    assert.equal(res.cookie, undefined);
    assert.ok(expired.serverLog.some((line) => line.includes('sign-in refused') && /exp|timestamp|expired/i.test(line)), 'the log says the token expired');
  });

  test('logout ends the SSO session and answers the provider\'s end-session URL', async () => {
    const alice = await signIn(origin, 'alice');
    const out = await adminFetch(origin, 'POST', '/admin/api/logout', undefined, { cookie: alice.cookie! });
    assert.equal(out.status, 200, out.text);
    const end = new URL(out.body.end_session_url);
    assert.equal(end.origin, provider.issuer);
    assert.equal(end.searchParams.get('client_id'), 'tollgate-admin');
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${origin}/admin/`);
    assert.match(out.headers.get('set-cookie')!, /^tollgate_session=; .*Max-Age=0/);
    assertError(await adminFetch(origin, 'GET', '/admin/api/me', undefined, { cookie: alice.cookie! }), 401, 'session_required', null);
    // A password admin's logout stays a 204.
    const login = await adminFetch(origin, 'POST', '/admin/api/login', TEST_ADMIN);
    const pw = await adminFetch(origin, 'POST', '/admin/api/logout', undefined, { cookie: login.headers.get('set-cookie')!.split(';')[0]! });
    assert.equal(pw.status, 204);
  });

  test('GET /session tells the sign-in page which ways are on; password login turned off answers 403', async () => {
    const on = await adminFetch(origin, 'GET', '/admin/api/session');
    assert.deepEqual(on.body.sign_in, { password: true, sso: { name: 'Test IdP', login_url: '/admin/api/oidc/login' } });
    const off = await adminFetch(offline.gateway.origin, 'GET', '/admin/api/session');
    assert.deepEqual(off.body.sign_in, { password: false, sso: { name: 'Test IdP', login_url: '/admin/api/oidc/login' } });
    const refused = await adminFetch(offline.gateway.origin, 'POST', '/admin/api/login', TEST_ADMIN);
    assertError(refused, 403, 'password_login_disabled', null);
    // Single sign-on still works there.
    const alice = await signIn(offline.gateway.origin, 'alice');
    assert.equal(alice.status, 302, alice.text);
  });

  test('mutating calls keep the Origin check for SSO sessions', async () => {
    const alice = await signIn(origin, 'alice');
    assertError(await adminFetch(origin, 'POST', '/admin/api/users', { name: 'csrf' }, { cookie: alice.cookie!, origin: 'https://evil.example' }), 403, 'origin_mismatch', null);
  });
});

test('the gateway refuses to start when the variable named by clientSecretEnv is unset, naming it', async () => {
  await assert.rejects(
    startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl } }, admin: { oidc: oidcSettings({ clientSecretEnv: 'MISSING_OIDC_SECRET' }) } }),
    /admin\.oidc\.clientSecretEnv names MISSING_OIDC_SECRET, which is not set/,
  );
});
