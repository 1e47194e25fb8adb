/**
 * The portal API's read routes and its session routes (docs/portal.md): `GET /portal/api/session`
 * (who is signed in, or nobody: no 401 for the page's first question), `GET /portal/api/me` (the
 * user, their budget and spend this period, as `GET /api/account` shows them), `GET
 * /portal/api/requests` (their own request log, newest first, keyset pages), `GET /portal/api/models`
 * (what they may call, as `GET /api/v1/models` lists it for a key without an allow-list), `GET
 * /portal/api/snippets` (base URLs and ready-to-paste configuration) and `POST /portal/api/logout`.
 * Every query takes the user from the session, never from the request: no admin data, no other user's.
 */
import type { IncomingMessage } from 'node:http';
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import type { ServiceRegistry } from '../services.ts';
import { getGatewayUser } from '../accounts/gateway-users.ts';
import { teamOfUser } from '../accounts/teams.ts';
import { budgetView, usageSince } from '../accounts/account-view.ts';
import { budgetWindow } from '../money/calendar-period.ts';
import { decodeCursor, parseLogFilters, queryLogPage } from '../admin/logs-query.ts';
import { queryInt, queryString } from '../admin/fields.ts';
import { readCookie } from '../admin/router.ts';
import { requestScheme } from '../admin/origin-check.ts';
import { PORTAL_COOKIE, portalSessionCookie, type PortalSessionStore } from './portal-sessions.ts';
import { portalSessionRequired, type PortalRoute } from './router.ts';
import { agentSnippets } from './snippets.ts';

/** `limit` of a requests page: 1..200, default 50. */
const PAGE_LIMIT = { default: 50, min: 1, max: 200 } as const;

export interface PortalRoutesDeps {
  store: Store;
  clock: Clock;
  services: ServiceRegistry;
  sessions: PortalSessionStore;
}

/** The gateway's address as the browser reached it (`X-Forwarded-Host`/`-Proto` behind a proxy). */
function browserOrigin(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-host'];
  const host = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || req.headers.host || '127.0.0.1:8787';
  return `${requestScheme(req)}://${host}`;
}

export function createPortalRoutes(deps: PortalRoutesDeps): PortalRoute[] {
  const { db } = deps.store;
  /** The allow-list of the user's team (null: no team, or one that allows every model). */
  const teamModelsOf = async (userId: number): Promise<readonly string[] | null> => (await teamOfUser(db, userId))?.models ?? null;
  const flushRequestLog = () => deps.services.get('requestLog')?.flush();

  async function requireUser(userId: number) {
    const user = await getGatewayUser(db, userId);
    // Deleted between the session check and now: as if signed out.
    if (!user) throw portalSessionRequired();
    return user;
  }

  return [
    {
      method: 'GET',
      pattern: '/portal/api/session',
      public: true,
      async handler({ userId }) {
        if (userId === null) return { status: 200, body: { user: null } };
        const user = await requireUser(userId);
        return { status: 200, body: { user: { id: user.id, name: user.name, email: user.email } } };
      },
    },
    {
      method: 'POST',
      pattern: '/portal/api/logout',
      public: true,
      async handler({ req }) {
        const token = readCookie(req.headers.cookie, PORTAL_COOKIE);
        if (token) await deps.sessions.destroy(token);
        return { status: 204, headers: { 'set-cookie': portalSessionCookie(req, '', 0) } };
      },
    },
    {
      method: 'GET',
      pattern: '/portal/api/me',
      async handler({ userId }) {
        const user = await requireUser(userId!);
        const budgets = deps.services.get('budget');
        const timeZone = budgets?.timeZone ?? 'UTC';
        const status = await budgets?.status(user.id);
        const window = status?.window ?? budgetWindow(user.budget_period, deps.clock(), timeZone);
        await flushRequestLog();
        return {
          status: 200,
          body: {
            user: { id: user.id, name: user.name, email: user.email, rpm: user.rpm, tpm: user.tpm, max_concurrent: user.max_concurrent },
            budget: budgetView(status, timeZone),
            usage: await usageSince(db, user.id, window.startMs),
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: '/portal/api/requests',
      async handler({ userId, query }) {
        // The admin log query with the user fixed: a `user_id` in the query string is overridden.
        const filters = { ...parseLogFilters(query, deps.clock()), userId: userId! };
        const limit = queryInt(query, 'limit', PAGE_LIMIT);
        const cursorParam = queryString(query, 'cursor');
        await flushRequestLog();
        const page = await queryLogPage(deps.store, filters, { limit, ...(cursorParam === undefined ? {} : { cursor: decodeCursor(cursorParam) }) });
        return { status: 200, body: { data: page.rows, next_cursor: page.nextCursor } };
      },
    },
    {
      method: 'GET',
      pattern: '/portal/api/models',
      async handler({ userId }) {
        const providers = deps.services.get('providers');
        const models = providers ? await providers.allowedModels(userId!, null, await teamModelsOf(userId!)) : [];
        return { status: 200, body: { data: models.map((m) => ({ id: m.id, owned_by: m.owned_by, display_name: m.display_name })) } };
      },
    },
    {
      method: 'GET',
      pattern: '/portal/api/snippets',
      async handler({ userId, req }) {
        const providers = deps.services.get('providers');
        const models = providers ? await providers.allowedModels(userId!, null, await teamModelsOf(userId!)) : [];
        return { status: 200, body: agentSnippets(browserOrigin(req), models.map((m) => m.id)) };
      },
    },
  ];
}
