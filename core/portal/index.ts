/**
 * The self-service portal for gateway users (docs/portal.md), mounted by `core/gateway.ts` on
 * `/portal` when `portal.enabled`: `/portal/api/*` goes to the portal router (its own sessions, the
 * admin API's CSRF check), `/portal/auth/*` to the sign-in with the identity provider of `admin.oidc`
 * (`portal-auth.ts`; without it, a clear 404 saying sign-in is not configured), everything else under
 * `/portal` to the static page in `portal-static/`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PortalSettings } from '../manifest.ts';
import type { Store } from '../store/store.ts';
import type { Log } from '../runtime/log.ts';
import type { Clock } from '../runtime/clock.ts';
import type { ServiceRegistry } from '../services.ts';
import { gatewayError } from '../errors.ts';
import { sendError } from '../http/respond.ts';
import { readCookie } from '../admin/router.ts';
import { adminStaticDir, createAdminStatic } from '../admin/static-routes.ts';
import { createPortalRouter } from './router.ts';
import { createPortalRoutes } from './routes.ts';
import { createPortalKeysRoutes } from './keys-routes.ts';
import { createPortalSessionStore, PORTAL_COOKIE, portalSessionCookie, type PortalSessionStore } from './portal-sessions.ts';
import { createPortalAuth } from './portal-auth.ts';
import type { OidcClient } from '../accounts/oidc-client.ts';
import type { OidcSettings } from '../manifest.ts';
import type { KeyringSource } from '../store/data-dir.ts';

/** Single sign-on for the portal: the client and settings of `admin.oidc`, and the master keys that seal the flow cookie. */
export interface PortalSso {
  client: OidcClient;
  settings: OidcSettings;
  keyring: KeyringSource;
}

const PURGE_EVERY_MS = 60 * 60_000;

export interface PortalContext {
  readonly store: Store;
  readonly log: Log;
  readonly clock: Clock;
  readonly services: ServiceRegistry;
  /** Tells the caches that watch the database (auth-guard's keys) that this process wrote to it. */
  notifyChange(): void;
}

export interface PortalMount {
  /** Handles a request whose path is `/portal` or starts with `/portal/`. Callable detached. */
  handle(this: void, req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void>;
  /**
   * Starts a portal session for gateway user `gatewayUserId` (signed in by the caller, e.g. the OIDC
   * callback) and returns the `Set-Cookie` header value to answer with.
   */
  startSession(this: void, req: IncomingMessage, gatewayUserId: number): Promise<string>;
  readonly sessions: PortalSessionStore;
  close(): void;
}

/** `/portal/auth/*` until single sign-on is wired: a clear 404 instead of the page. */
function signInNotConfigured(res: ServerResponse, requestId: string): void {
  sendError(res, gatewayError('not_found', {
    message: 'Portal sign-in is not configured on this gateway yet: single sign-on with your organisation\'s identity provider is not set up. Ask an administrator.',
  }), requestId, { 'cache-control': 'no-store' });
}

export function createPortalMount(ctx: PortalContext, settings: PortalSettings, sso?: PortalSso): PortalMount {
  const maxMs = settings.sessionMaxHours * 3_600_000;
  const sessions = createPortalSessionStore(ctx.store, ctx.clock, { idleMs: settings.sessionIdleMinutes * 60_000, maxMs });
  const routes = [
    ...createPortalRoutes({ store: ctx.store, clock: ctx.clock, services: ctx.services, sessions }),
    ...createPortalKeysRoutes({ store: ctx.store, clock: ctx.clock, log: ctx.log, notifyChange: () => ctx.notifyChange() }),
  ];
  const api = createPortalRouter(routes, async (req) => {
    const token = readCookie(req.headers.cookie, PORTAL_COOKIE);
    return token ? (await sessions.verify(token))?.user.gatewayUserId ?? null : null;
  }, ctx.log);
  const files = createAdminStatic(adminStaticDir('portal-static'), '/portal');
  const startSession = async (req: IncomingMessage, gatewayUserId: number) => {
    const { token } = await sessions.create(gatewayUserId, { ip: req.socket.remoteAddress ?? null, userAgent: req.headers['user-agent'] ?? null });
    return portalSessionCookie(req, token, Math.floor(maxMs / 1000));
  };
  const auth = sso
    ? createPortalAuth({ store: ctx.store, log: ctx.log, clock: ctx.clock, keyring: sso.keyring, client: sso.client, settings: sso.settings, createUsers: settings.createUsers, startSession })
    : null;
  const purge = () => {
    sessions.purgeExpired().catch((err: unknown) => ctx.log.warn('portal: could not delete ended sessions', { err: String(err) }));
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return {
    sessions,
    handle(req, res, requestId, path) {
      if (path.startsWith('/portal/api/')) return api(req, res, requestId);
      if (path.startsWith('/portal/auth/')) {
        if (auth) return auth(req, res, requestId, path);
        signInNotConfigured(res, requestId);
        return Promise.resolve();
      }
      return files.handle(req, res, requestId, path);
    },
    startSession,
    close() {
      clearInterval(timer);
    },
  };
}
