/**
 * A real OpenID provider for tests: the `oidc-provider` package (the certified Node.js OP) on
 * 127.0.0.1 port 0, with its development login page (any login name, any password: the login name is
 * the account id), consent granted without a page, PKCE required, and RP-initiated logout on. Accounts
 * carry `email`, `email_verified`, `name` and `groups` (in the `profile` scope). The issuer is known
 * as soon as it listens, before the clients are registered, so a test can start the gateway with the
 * issuer and then register the gateway's callback URL (`setClients`).
 *
 * `signInOverHttp` drives a whole sign-in with fetch, following redirects by hand and carrying
 * cookies per host, as a browser would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestOidcAccount {
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestOidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly issuer: string;
  /** Accounts by login name; tests may add or change them at any time. */
  readonly accounts: Map<string, TestOidcAccount>;
  /** Registers the clients (replaces the previous ones); the provider answers 503 until called once. */
  setClients(clients: TestOidcClient[]): void;
  close(): Promise<void>;
}

export async function startOidcProvider(accounts: Record<string, TestOidcAccount> = {}): Promise<TestOidcProvider> {
  const accountMap = new Map(Object.entries(accounts));
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server: Server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503).end('no clients registered yet');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function configure(clients: TestOidcClient[]) {
    const provider = new Provider(issuer, {
      clients: clients.map((c) => ({ ...c, token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'] })),
      async findAccount(_ctx, id) {
        const account = accountMap.get(id);
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, email_verified: true, ...account }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      pkce: { required: () => true },
      cookies: { keys: ['tollgate test oidc cookie key'] },
      // Consent is not what these tests are about: grant every scope and claim asked for.
      async loadExistingGrant(ctx) {
        const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
        if (grantId) return ctx.oidc.provider.Grant.find(grantId);
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
    });
    provider.on('server_error', (_ctx, err) => process.stderr.write(`test oidc provider: ${err.stack ?? err}\n`));
    handler = provider.callback();
  }

  return {
    issuer,
    accounts: accountMap,
    setClients: configure,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Cookies per host (`host:port`), paths ignored: enough for one gateway and one provider on loopback. */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  store(url: string, res: Response): void {
    const host = new URL(url).host;
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    this.byHost.set(host, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const removed = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (removed) jar.delete(name);
      else jar.set(name, value);
    }
  }

  header(url: string): string {
    return [...(this.byHost.get(new URL(url).host) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).host)?.get(name);
  }
}

export interface HttpStep {
  url: string;
  status: number;
  location: string | null;
  text: string;
}

/** One request with the jar's cookies; no redirect followed. */
export async function jarFetch(jar: CookieJar, url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<HttpStep> {
  const headers: Record<string, string> = {};
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
  jar.store(url, res);
  const location = res.headers.get('location');
  return { url, status: res.status, location: location === null ? null : new URL(location, url).href, text: await res.text() };
}

/**
 * Follows redirects from `url` (GETs) until an answer is not a redirect, or the next hop starts with
 * `stopAt` (then that hop is returned unfetched as `location`). At most 20 hops.
 */
export async function followRedirects(jar: CookieJar, url: string, stopAt?: string): Promise<HttpStep> {
  let step = await jarFetch(jar, url);
  for (let hops = 0; hops < 20 && step.location && step.status >= 300 && step.status < 400; hops++) {
    if (stopAt && step.location.startsWith(stopAt)) return step;
    step = await jarFetch(jar, step.location);
  }
  return step;
}

/**
 * Signs in at the provider's login page: from the provider's authorization URL `authorizeUrl` to the
 * redirect back to the relying party (`redirectPrefix`), which is returned unfetched in `location`.
 * `login` is the account's login name (the account id).
 */
export async function signInAtProvider(jar: CookieJar, authorizeUrl: string, login: string, redirectPrefix: string): Promise<HttpStep> {
  const loginPage = await followRedirects(jar, authorizeUrl, redirectPrefix);
  if (loginPage.location?.startsWith(redirectPrefix)) return loginPage;
  const action = /<form[^>]*action="([^"]+)"/.exec(loginPage.text)?.[1];
  if (loginPage.status !== 200 || !action) throw new Error(`no login form at the provider (${loginPage.status}): ${loginPage.text.slice(0, 300)}`);
  const submitted = await jarFetch(jar, new URL(action, loginPage.url).href, { method: 'POST', form: { prompt: 'login', login, password: 'any' } });
  if (!submitted.location) throw new Error(`the provider's login answered ${submitted.status}: ${submitted.text.slice(0, 300)}`);
  const back = submitted.location.startsWith(redirectPrefix) ? submitted : await followRedirects(jar, submitted.location, redirectPrefix);
  if (!back.location?.startsWith(redirectPrefix)) throw new Error(`the provider did not send the browser back (${back.status}): ${back.text.slice(0, 300)}`);
  return back;
}
