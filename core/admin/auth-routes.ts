/**
 * `POST /admin/api/login`, `POST /admin/api/logout`, `GET /admin/api/me`, `GET /admin/api/session` (docs/admin-api.md
 * "Session and protection"). Login checks the scrypt hash (`core/accounts/passwords.ts`) and is throttled per
 * username and per client address, each attempt counted before the hash is checked
 * (`login-throttle.ts`); a wrong username and a wrong password get the same answer, and an unknown
 * username still costs one scrypt, so response times do not reveal which names exist.
 */
import type { IncomingMessage } from 'node:http';
import { invalidRequest } from '../errors.ts';
import { invalidCredentials, passwordLoginDisabled, tooManyLoginAttempts } from './session-errors.ts';
import { decoyHash, verifyPassword } from '../accounts/passwords.ts';
import type { AdminContext, AdminIdentity, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { objectBody, onlyFields, stringField } from './fields.ts';
import type { LoginThrottle } from '../coordination/login-throttle.ts';
import { readCookie } from './router.ts';
import { SESSION_COOKIE, type SessionStore } from './sessions.ts';
import { requestScheme } from './origin-check.ts';
import { adminSignIn } from '../accounts/admin-users.ts';

/** Where the sign-in page's single sign-on button goes (`oidc-routes.ts`). */
const OIDC_LOGIN_URL = '/admin/api/oidc/login';

export interface AuthRoutesDeps {
  sessions: SessionStore;
  throttle: LoginThrottle;
  /** Cookie lifetime = the session's absolute lifetime. */
  sessionMaxMs: number;
  version: string;
  /** false: `POST /login` answers 403 `password_login_disabled` (manifest `admin.oidc.passwordLogin`). */
  passwordLogin: boolean;
  /** Single sign-on, when configured: the button's provider name, and the provider's logout URL for an SSO admin. */
  sso?: { name: string; endSessionUrl(req: IncomingMessage): Promise<string | null> };
}

/** The client's address as the login throttle counts it (the socket's peer; a proxy's own address behind one). */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** The session cookie's `Set-Cookie` value (SameSite=Strict; Secure over https); `maxAgeSec` 0 removes it. */
export function sessionCookie(req: IncomingMessage, value: string, maxAgeSec: number): string {
  const secure = requestScheme(req) === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSec}${secure}`;
}

export function createAuthRoutes(ctx: AdminContext, deps: AuthRoutesDeps): AdminRoute[] {
  const findAdmin = (username: string) =>
    ctx.store.db.selectFrom('admin_users').select(['id', 'username', 'password_hash']).where('username', '=', username).executeTakeFirst();
  // Compared against when the username is unknown, so both paths cost one scrypt. (Not hashed at
  // start: that scrypt's 128 MB landed right after the gateway began listening.)
  const decoy = decoyHash();

  return [
    {
      method: 'POST',
      pattern: '/admin/api/login',
      public: true,
      async handler({ body, req, audit }) {
        if (!deps.passwordLogin) throw passwordLoginDisabled();
        const fields = objectBody(body);
        onlyFields(fields, ['username', 'password']);
        const username = stringField(fields, 'username', { required: true, maxLength: 200 });
        const password = fields.password;
        if (typeof password !== 'string' || password === '') throw invalidRequest('"password" is required.', 'password');
        const ip = clientAddress(req);
        // Reserved before the (asynchronous) scrypt: concurrent guesses are each counted.
        const reserved = await deps.throttle.begin(username, ip, ctx.clock());
        if ('retryAfterMs' in reserved) throw tooManyLoginAttempts(reserved.retryAfterMs);
        const { attempt } = reserved;
        let row: { id: number; username: string; password_hash: string } | undefined;
        try {
          row = await findAdmin(username);
          const ok = await verifyPassword(password, row?.password_hash ?? decoy);
          if (!row || !ok) {
            attempt.failed(ctx.clock());
            ctx.log.warn('admin login failed', { username, ip });
            throw invalidCredentials();
          }
          attempt.succeeded();
        } finally {
          attempt.release();
        }
        const admin: AdminIdentity = { id: row.id, username: row.username, role: 'admin', teams: [] };
        const userAgent = req.headers['user-agent'] ?? null;
        const { token, times } = await deps.sessions.create(admin, { ip, userAgent });
        ctx.log.info('admin logged in', { username, ip });
        audit({ action: 'session.login', objectType: 'admin', objectId: admin.id, actor: { name: admin.username, kind: 'admin', role: admin.role } });
        return json(200, { admin, session: times }, { 'set-cookie': sessionCookie(req, token, Math.floor(deps.sessionMaxMs / 1000)) });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/logout',
      access: 'any',
      async handler({ req, admin, audit }) {
        const token = readCookie(req.headers.cookie, SESSION_COOKIE);
        if (token) await deps.sessions.destroy(token);
        audit({ action: 'session.logout', objectType: 'admin', objectId: admin!.id });
        const clear = { 'set-cookie': sessionCookie(req, '', 0) };
        // An SSO admin is still signed in at the provider: the UI goes on to its logout page when there is one.
        const endSessionUrl = deps.sso && (await adminSignIn(ctx.store.db, admin!.username)) === 'sso' ? await deps.sso.endSessionUrl(req).catch(() => null) : null;
        return endSessionUrl ? json(200, { end_session_url: endSessionUrl }, clear) : { status: 204, headers: clear };
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/me',
      access: 'any',
      handler: async ({ req, admin }) => json(200, await me(req, admin!)),
    },
    {
      // The UI's question at start, "is anyone signed in?": a 401 there would be logged as an error
      // by every browser console (a fetch cannot silence it), though it is the expected answer.
      method: 'GET',
      pattern: '/admin/api/session',
      public: true,
      handler: async ({ req, admin }) => json(200, admin ? await me(req, admin) : { admin: null, session: null, sign_in: signInOptions() }),
    },
  ];

  /** How one may sign in here, for the sign-in page: the password form, and/or a "Sign in with <name>" button. */
  function signInOptions() {
    return { password: deps.passwordLogin, sso: deps.sso ? { name: deps.sso.name, login_url: OIDC_LOGIN_URL } : null };
  }

  /** `GET /me`'s body: the admin, their session's times and what the UI needs of the gateway. */
  async function me(req: IncomingMessage, admin: AdminIdentity) {
    const token = readCookie(req.headers.cookie, SESSION_COOKIE);
    const session = token ? (await deps.sessions.verify(token))?.times ?? null : null;
    return {
      admin,
      session,
      sign_in: signInOptions(),
      gateway: {
        version: deps.version,
        time_zone: ctx.services.get('budget')?.timeZone ?? 'UTC',
        providers: (ctx.services.get('providers')?.list() ?? []).map((p) => ({ id: p.id, name: p.name, shared_key: p.sharedKey })),
      },
    };
  }
}
