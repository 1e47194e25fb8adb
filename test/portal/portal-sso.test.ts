/**
 * Portal sign-in with a real OpenID provider (`oidc-provider` on loopback, the same client and
 * provider as the admin UI's single sign-on): a gateway user signs in by their verified email, creates
 * a key, uses it, sees the request and revokes it; an unknown email is refused unless
 * `portal.createUsers`; an unverified email or another domain is refused; and a sign-in flow started
 * for the admin UI cannot finish a portal sign-in.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { CookieJar, jarFetch, signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';

const SECRET = 'portal test client secret';
const CALLBACK = '/portal/auth/callback';

let sim: OpenAISimulator;
let provider: TestOidcProvider;
let tg: TestGateway;
let open: TestGateway;
let aliceId: number;

async function gatewayWith(createUsers: boolean): Promise<TestGateway> {
  return startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
    portal: { enabled: true, createUsers },
    admin: { oidc: { issuer: provider.issuer, clientId: 'tollgate', clientSecretEnv: 'TEST_OIDC_SECRET', allowedDomains: ['corp.example'], roleMapping: { admin: ['tollgate-admins'] } } },
    env: { TEST_OIDC_SECRET: SECRET },
  });
}

interface PortalSignIn {
  status: number;
  location: string | null;
  text: string;
  /** `tollgate_portal=…`, when the sign-in set it. */
  cookie: string | undefined;
}

/** The browser round trip: /portal/auth/login → the provider's login page as `login` → /portal/auth/callback. */
async function signIn(gateway: TestGateway, login: string): Promise<PortalSignIn> {
  const origin = gateway.gateway.origin;
  const jar = new CookieJar();
  const start = await jarFetch(jar, `${origin}/portal/auth/login`);
  assert.equal(start.status, 302, start.text);
  const authorize = new URL(start.location!);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorize.searchParams.get('redirect_uri'), origin + CALLBACK);
  const back = await signInAtProvider(jar, authorize.href, login, origin + CALLBACK);
  const callback = await jarFetch(jar, back.location!);
  const session = jar.get(origin, 'tollgate_portal');
  return { status: callback.status, location: callback.location, text: callback.text, cookie: session ? `tollgate_portal=${session}` : undefined };
}

async function portal(gateway: TestGateway, cookie: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gateway.gateway.origin}/portal/api${path}`, {
    method, headers: { cookie, origin: gateway.gateway.origin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() as any };
}

before(async () => {
  sim = await startOpenAISimulator();
  provider = await startOidcProvider({
    alice: { email: 'Alice@corp.example', name: 'Alice' },
    newbie: { email: 'newbie@corp.example', name: 'New Person' },
    unverified: { email: 'ghost@corp.example', email_verified: false },
    outsider: { email: 'eve@elsewhere.example' },
  });
  tg = await gatewayWith(false);
  open = await gatewayWith(true);
  provider.setClients([{ client_id: 'tollgate', client_secret: SECRET, redirect_uris: [tg, open].flatMap((g) => [g.gateway.origin + CALLBACK, `${g.gateway.origin}/admin/api/oidc/callback`]) }]);
  aliceId = (await createGatewayUser(tg.gateway.store.db, { name: 'alice', email: 'alice@corp.example' })).id;
});

after(async () => {
  await tg?.close();
  await open?.close();
  await provider?.close();
  await sim?.close();
});

describe('portal sign-in with OpenID Connect', () => {
  test('a user signs in by email, creates a key, uses it, sees the request and revokes it', async () => {
    const signedIn = await signIn(tg, 'alice');
    assert.equal(signedIn.status, 302, signedIn.text);
    assert.equal(new URL(signedIn.location!, tg.gateway.origin).pathname, '/portal/');
    assert.ok(signedIn.cookie, 'the portal session cookie is set');
    const me = await portal(tg, signedIn.cookie, 'GET', '/me');
    assert.equal(me.status, 200);
    assert.deepEqual([me.body.user.id, me.body.user.email], [aliceId, 'alice@corp.example']);

    const created = await portal(tg, signedIn.cookie, 'POST', '/keys', { name: 'laptop' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const client = new OpenAI({ apiKey: created.body.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    await tg.logRow(requestId);
    const requests = await portal(tg, signedIn.cookie, 'GET', '/requests');
    assert.deepEqual(requests.body.data.map((r: any) => [r.request_id, r.api_key_id]), [[requestId, created.body.id]]);

    const revoked = await portal(tg, signedIn.cookie, 'DELETE', `/keys/${created.body.id}`);
    assert.equal(revoked.body.status, 'revoked');
    await assert.rejects(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }), (err: any) => err.status === 401);

    // The user's key changes are in the audit log, as theirs, with no key in clear.
    const rows = await tg.gateway.store.db.selectFrom('audit_log').selectAll().where('actor_kind', '=', 'portal').orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.actor, r.action, String(r.object_id)]), [
      ['alice@corp.example', 'keys.create', String(created.body.id)], ['alice@corp.example', 'keys.revoke', String(created.body.id)],
    ]);
    assert.ok(!JSON.stringify(rows).includes(created.body.key));
  });

  test('an email no gateway user has is refused, unless portal.createUsers creates the user', async () => {
    const refused = await signIn(tg, 'newbie');
    assert.equal(refused.status, 403);
    assert.match(refused.text, /sso_forbidden/);
    assert.equal(refused.cookie, undefined);
    const created = await signIn(open, 'newbie');
    assert.equal(created.status, 302, created.text);
    const me = await portal(open, created.cookie!, 'GET', '/me');
    assert.equal(me.body.user.email, 'newbie@corp.example');
  });

  test('an unverified email or an email of another domain is refused, with no session', async () => {
    const ghost = await signIn(open, 'unverified');
    assert.equal(ghost.status, 403);
    assert.match(ghost.text, /not verified/);
    assert.equal(ghost.cookie, undefined);
    const eve = await signIn(open, 'outsider');
    assert.equal(eve.status, 403);
    assert.match(eve.text, /elsewhere\.example may not use this gateway&#39;s portal/);
    assert.equal(eve.cookie, undefined);
  });

  test('a flow started for the admin UI cannot finish a portal sign-in', async () => {
    const origin = tg.gateway.origin;
    const jar = new CookieJar();
    const start = await jarFetch(jar, `${origin}/admin/api/oidc/login`);
    const back = await signInAtProvider(jar, start.location!, 'alice', `${origin}/admin/api/oidc/callback`);
    // The provider's answer, replayed to the portal's callback with the admin flow's cookie.
    const code = new URL(back.location!).search;
    const replay = await jarFetch(jar, `${origin}${CALLBACK}${code}`);
    assert.equal(replay.status, 400);
    assert.match(replay.text, /sso_failed/);
    assert.equal(jar.get(origin, 'tollgate_portal'), undefined);
  });
});
