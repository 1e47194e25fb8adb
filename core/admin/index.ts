/**
 * The admin web UI and its JSON API, mounted by `core/gateway.ts` on `/admin`: `/admin/api/*` goes
 * to the router (sessions, CSRF, route modules), everything else under `/admin` to the static files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminSettings } from '../manifest.ts';
import type { AdminContext, AdminRoute } from './context.ts';
import { createAdminRouter, readCookie } from './router.ts';
import { createSessionStore, SESSION_COOKIE } from './sessions.ts';
import { createLoginThrottle, type LoginThrottle } from '../coordination/login-throttle.ts';
import { createAuthRoutes } from './auth-routes.ts';
import { createAccountRoutes } from './account-routes.ts';
import { createAdminStatic } from './static-routes.ts';
import { createUsersRoutes } from './users-routes.ts';
import { createTeamsRoutes } from './teams-routes.ts';
import { createKeysRoutes } from './keys-routes.ts';
import { createCredentialsRoutes } from './credentials-routes.ts';
import { createLogsRoutes } from './logs-routes.ts';
import { createStatsRoutes } from './stats-routes.ts';
import { createPricingRoutes } from './pricing-routes.ts';
import { createAlertsRoutes } from './alerts-routes.ts';
import { createUpstreamHealthRoutes } from './upstream-health-routes.ts';
import { createReconciliationRoutes } from './reconciliation-routes.ts';
import { createOidcRoutes, createSsoClient, requestOrigin } from './oidc-routes.ts';
import type { OidcClient } from '../accounts/oidc-client.ts';
import { createAuditRoutes } from './audit-routes.ts';
import { appendAudit } from '../audit/append.ts';

export interface AdminMount {
  /** Handles a request whose path is `/admin` or starts with `/admin/`. Callable detached: the server mounts it as a function. */
  handle(this: void, req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void>;
  close(): void;
  /** Every route of the API, in match order (tests walk it to check each route's role rule). */
  readonly routes: readonly AdminRoute[];
}

const PURGE_EVERY_MS = 60 * 60_000;

/** Route modules besides login/logout/me, in the order their routes are matched. */
const ROUTE_MODULES: ReadonlyArray<(ctx: AdminContext) => AdminRoute[]> = [
  createUsersRoutes, createTeamsRoutes, createKeysRoutes, createCredentialsRoutes, createLogsRoutes, createStatsRoutes, createPricingRoutes,
  createAlertsRoutes, createUpstreamHealthRoutes, createReconciliationRoutes, createAuditRoutes,
];

/**
 * Mounts the admin UI and API. `anonymousBodyTimeoutMs`: how long a request without a session has to
 * send its body (`createAdminRouter`; the gateway passes `server.headersTimeoutMs`). `env` holds the
 * single sign-on client secret (`admin.oidc.clientSecretEnv`); throws when that variable is unset.
 * `ssoClient`: the gateway's one OpenID Connect client, shared with the portal; made from `env` when absent.
 */
export function createAdminMount(
  ctx: AdminContext, settings: AdminSettings, version: string, loginThrottle?: LoginThrottle, anonymousBodyTimeoutMs?: number, env: NodeJS.ProcessEnv = {},
  ssoClient?: OidcClient,
): AdminMount {
  const sessionMaxMs = settings.sessionMaxHours * 3_600_000;
  const sessions = createSessionStore(ctx.store, ctx.clock, { idleMs: settings.sessionIdleMinutes * 60_000, maxMs: sessionMaxMs });
  const throttle = loginThrottle ?? createLoginThrottle(settings.loginMaxFailures, settings.loginWindowMinutes * 60_000);
  const routes: AdminRoute[] = [];
  const oidc = settings.oidc;
  let sso: { name: string; endSessionUrl(req: IncomingMessage): Promise<string | null> } | undefined;
  if (oidc) {
    const client = ssoClient ?? createSsoClient(oidc, env, ctx.clock);
    sso = { name: oidc.name ?? new URL(oidc.issuer).host, endSessionUrl: (req) => client.endSessionUrl({ postLogoutRedirectUrl: `${requestOrigin(req)}/admin/` }) };
    routes.push(...createOidcRoutes(ctx, { settings: oidc, client, sessions, sessionMaxMs }));
  }
  const passwordLogin = oidc?.passwordLogin ?? true;
  routes.push(...createAuthRoutes(ctx, { sessions, throttle, sessionMaxMs, version, passwordLogin, ...(sso ? { sso } : {}) }), ...createAccountRoutes(ctx, { sessions, throttle }));
  for (const factory of ROUTE_MODULES) routes.push(...factory(ctx));
  const api = createAdminRouter(
    routes,
    async (req) => {
      const token = readCookie(req.headers.cookie, SESSION_COOKIE);
      return token ? (await sessions.verify(token))?.admin ?? null : null;
    },
    ctx.log,
    anonymousBodyTimeoutMs,
    (entry) => appendAudit(ctx.store, entry, ctx.clock()),
  );
  const files = createAdminStatic();
  const purge = () => {
    sessions.purgeExpired().catch((err: unknown) => ctx.log.warn('admin: could not delete ended sessions', { err: String(err) }));
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return {
    handle(req, res, requestId, path) {
      return path.startsWith('/admin/api/') ? api(req, res, requestId) : files.handle(req, res, requestId, path);
    },
    close() {
      clearInterval(timer);
    },
    routes,
  };
}
