/**
 * The admin web UI and its JSON API, mounted by `core/gateway.ts` on `/admin`: `/admin/api/*` goes
 * to the router (sessions, CSRF, route modules), everything else under `/admin` to the static files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminSettings } from '../manifest.ts';
import type { AdminContext, AdminRoute } from './context.ts';
import { createAdminRouter, readCookie } from './router.ts';
import { createSessionStore, SESSION_COOKIE } from './sessions.ts';
import { createLoginThrottle } from './login-throttle.ts';
import { createAuthRoutes } from './auth-routes.ts';
import { createAdminStatic } from './static-routes.ts';

export interface AdminMount {
  /** Handles a request whose path is `/admin` or starts with `/admin/`. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void>;
  close(): void;
}

const PURGE_EVERY_MS = 60 * 60_000;

type RouteFactory = (ctx: AdminContext) => AdminRoute[];

// TEMPORARY during parallel development: route modules are loaded if present.
async function loadRouteFactories(): Promise<RouteFactory[]> {
  const modules: Array<[string, string]> = [
    ['./users-routes.ts', 'createUsersRoutes'], ['./keys-routes.ts', 'createKeysRoutes'],
    ['./credentials-routes.ts', 'createCredentialsRoutes'], ['./logs-routes.ts', 'createLogsRoutes'],
    ['./stats-routes.ts', 'createStatsRoutes'], ['./pricing-routes.ts', 'createPricingRoutes'],
  ];
  const factories: RouteFactory[] = [];
  for (const [file, name] of modules) {
    try {
      const mod = (await import(file)) as Record<string, RouteFactory>;
      if (mod[name]) factories.push(mod[name]);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    }
  }
  return factories;
}

export async function createAdminMount(ctx: AdminContext, settings: AdminSettings, version: string): Promise<AdminMount> {
  const sessionMaxMs = settings.sessionMaxHours * 3_600_000;
  const sessions = createSessionStore(ctx.store, ctx.clock, { idleMs: settings.sessionIdleMinutes * 60_000, maxMs: sessionMaxMs });
  const throttle = createLoginThrottle(settings.loginMaxFailures, settings.loginWindowMinutes * 60_000);
  const routes: AdminRoute[] = [...createAuthRoutes(ctx, { sessions, throttle, sessionMaxMs, version })];
  for (const factory of await loadRouteFactories()) routes.push(...factory(ctx));
  const api = createAdminRouter(
    routes,
    (req) => {
      const token = readCookie(req.headers.cookie, SESSION_COOKIE);
      return token ? sessions.verify(token)?.admin ?? null : null;
    },
    ctx.log,
  );
  const files = createAdminStatic();
  sessions.purgeExpired();
  const timer = setInterval(() => sessions.purgeExpired(), PURGE_EVERY_MS);
  timer.unref();
  return {
    handle(req, res, requestId, path) {
      return path.startsWith('/admin/api/') ? api(req, res, requestId) : files.handle(req, res, requestId, path);
    },
    close() {
      clearInterval(timer);
    },
  };
}
