/**
 * Single sign-on for the admin UI (docs/admin-api.md "Single sign-on", README "Single sign-on"):
 * `GET /admin/api/oidc/login` sends the browser to the provider with a fresh PKCE/state/nonce flow
 * sealed in a short-lived cookie (`oidc-flow-cookie.ts`); `GET /admin/api/oidc/callback` verifies
 * the answer (`accounts/oidc-client.ts`), decides the role (`oidc-roles.ts`), finds or creates the
 * admin (username = email, no password: `ensureSsoAdmin`) and starts a session exactly as a password
 * sign-in does, then sends the browser to `/admin/`. Both are browser navigations, so a refusal is an
 * HTML page (status and code from `core/errors.ts`), not JSON. Both are GETs that change nothing
 * before the provider vouched for the caller, so the Origin check of mutating calls does not apply;
 * the state, bound to the flow cookie, is their CSRF defence (RFC 6749 §10.12).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayError, type GatewayError } from '../errors.ts';
import type { OidcSettings } from '../manifest.ts';
import { createOidcClient, OidcSignInError, type OidcClient } from '../accounts/oidc-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { ensureSsoAdmin } from '../accounts/admin-users.ts';
import type { AdminContext, AdminIdentity, AdminRoute } from './context.ts';
import { decideSsoRole } from './oidc-roles.ts';
import { ADMIN_FLOW, clearFlowCookie, flowCookie, readFlowCookie } from './oidc-flow-cookie.ts';
import { requestScheme } from './origin-check.ts';
import type { SessionStore } from './sessions.ts';
import { clientAddress, sessionCookie } from './auth-routes.ts';

export const OIDC_LOGIN_PATH = '/admin/api/oidc/login';
export const OIDC_CALLBACK_PATH = '/admin/api/oidc/callback';

export interface OidcRoutesDeps {
  settings: OidcSettings;
  client: OidcClient;
  sessions: SessionStore;
  /** Session cookie lifetime, in ms (the session's absolute lifetime). */
  sessionMaxMs: number;
}

/** `scheme://host` the browser reached this gateway at (a proxy's `X-Forwarded-Host` first, as the Origin check reads it). */
export function requestOrigin(req: IncomingMessage): string {
  const host = req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost';
  return `${requestScheme(req)}://${(Array.isArray(host) ? host[0]! : host).split(',')[0]!.trim()}`;
}

/**
 * The OpenID Connect client of `admin.oidc` (admin and portal sign-in share it), its secret read from
 * `env[settings.clientSecretEnv]`. Throws when that variable is named but unset.
 */
export function createSsoClient(settings: OidcSettings, env: NodeJS.ProcessEnv, clock: Clock): OidcClient {
  const clientSecret = settings.clientSecretEnv === undefined ? undefined : env[settings.clientSecretEnv];
  if (settings.clientSecretEnv !== undefined && !clientSecret) {
    throw new Error(`admin.oidc.clientSecretEnv names ${settings.clientSecretEnv}, which is not set: put the client secret registered at the identity provider in it`);
  }
  return createOidcClient({ issuer: settings.issuer, clientId: settings.clientId, ...(clientSecret ? { clientSecret } : {}), scopes: settings.scopes, clock });
}

export function createOidcRoutes(ctx: AdminContext, deps: OidcRoutesDeps): AdminRoute[] {
  const { settings, client } = deps;
  return [
    {
      method: 'GET',
      pattern: OIDC_LOGIN_PATH,
      public: true,
      async handler({ req, res, requestId }) {
        try {
          const redirectUrl = settings.redirectUrl ?? requestOrigin(req) + OIDC_CALLBACK_PATH;
          const { url, flow } = await client.beginSignIn({ redirectUrl });
          res.writeHead(302, { location: url, 'set-cookie': flowCookie(req, flow, ctx.keyring.get(), ctx.clock()), 'cache-control': 'no-store', 'x-request-id': requestId });
          res.end();
        } catch (err) {
          ctx.log.warn('admin sso: could not start a sign-in', { requestId, err: String(err) });
          sendSignInFailedPage(req, res, requestId, gatewayError('sso_failed', { message: 'The identity provider cannot be reached or is misconfigured. Try again later, or ask an operator to check admin.oidc.' }));
        }
        return 'sent' as const;
      },
    },
    {
      method: 'GET',
      pattern: OIDC_CALLBACK_PATH,
      public: true,
      async handler({ req, res, requestId, audit }) {
        const outcome = await finish(req, requestId);
        if ('error' in outcome) {
          sendSignInFailedPage(req, res, requestId, outcome.error);
          return 'sent' as const;
        }
        const { token } = await deps.sessions.create(outcome.admin, { ip: clientAddress(req), userAgent: req.headers['user-agent'] ?? null });
        audit({ action: 'session.login', objectType: 'admin', objectId: outcome.admin.id, after: { method: 'sso', role: outcome.admin.role, teams: outcome.admin.teams }, actor: { name: outcome.admin.username, kind: 'admin', role: outcome.admin.role } });
        ctx.log.info('admin signed in with sso', { username: outcome.admin.username, role: outcome.admin.role, teams: outcome.admin.teams, ip: clientAddress(req) });
        res.writeHead(302, {
          location: '/admin/', 'cache-control': 'no-store', 'x-request-id': requestId,
          'set-cookie': [sessionCookie(req, token, Math.floor(deps.sessionMaxMs / 1000)), clearFlowCookie(req)],
        });
        res.end();
        return 'sent' as const;
      },
    },
  ];

  /** The admin the callback signs in, or the error page to show. Logs why a sign-in failed (never a token). */
  async function finish(req: IncomingMessage, requestId: string): Promise<{ admin: AdminIdentity } | { error: GatewayError }> {
    const flow = readFlowCookie(req, ctx.keyring.get(), ctx.clock());
    if (!flow) {
      ctx.log.warn('admin sso: callback without a live sign-in flow', { requestId });
      return { error: gatewayError('sso_failed', { message: 'This sign-in expired or was started in another browser. Start again from the sign-in page.' }) };
    }
    let identity;
    try {
      identity = await client.finishSignIn(new URL(req.url ?? '/', 'http://callback.invalid'), flow);
    } catch (err) {
      ctx.log.warn('admin sso: sign-in refused', { requestId, reason: err instanceof OidcSignInError ? err.message : String(err) });
      return { error: gatewayError('sso_failed') };
    }
    const decision = decideSsoRole(identity, settings);
    if ('refused' in decision) {
      ctx.log.warn('admin sso: identity not allowed', { requestId, email: identity.email, sub: identity.sub, reason: decision.refused });
      return { error: gatewayError('sso_forbidden', { message: decision.refused }) };
    }
    const username = identity.email!;
    const id = await ensureSsoAdmin(ctx.store.db, username, ctx.clock());
    if (id === null) {
      ctx.log.warn('admin sso: a password admin has this username', { requestId, username });
      return { error: gatewayError('sso_forbidden', { message: `A password admin named ${username} already exists; single sign-on does not take it over. An operator can delete it (tollgate admins delete).` }) };
    }
    return { admin: { id, username, role: decision.role, teams: decision.teams } };
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * A small HTML page for a sign-in that failed (a navigation, not a fetch), and the flow cookie of
 * `scope` removed; `backTo` is the page to start again from.
 */
export function sendSignInFailedPage(req: IncomingMessage, res: ServerResponse, requestId: string, error: GatewayError, scope = ADMIN_FLOW, backTo = '/admin/'): void {
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Tollgate</title></head>
<body><main><h1>Sign-in failed</h1><p>${escape(error.message)}</p><p><small>Error code: ${escape(error.code)} · request ${escape(requestId)}</small></p>
<p><a href="${escape(backTo)}">Back to the sign-in page</a></p></main></body></html>`;
  res.writeHead(error.status, {
    'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId,
    'content-security-policy': "default-src 'none'", 'set-cookie': clearFlowCookie(req, scope),
  });
  res.end(body);
}
