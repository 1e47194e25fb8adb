/**
 * The admin API's front door (`/admin/api/*`, docs/admin-api.md): matches method + pattern, refuses
 * cross-site mutating calls (403 `origin_mismatch`), requires a live session on every route not marked
 * `public` (401 `session_required`), parses JSON bodies (1 MiB cap), URL-decodes path parameters, and
 * renders the handler's reply or thrown `GatewayError`. Responses are never cached (`no-store`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayError, toGatewayError, type GatewayError } from '../errors.ts';
import { CLOSE_GRACE_MS } from '../http/client-errors.ts';
import { originMismatch, sessionRequired } from './session-errors.ts';
import { assertRouteAllowed } from './roles.ts';
import { sendError, sendJson } from '../http/respond.ts';
import { compileRouteTable, readJsonBody } from './route-table.ts';
import type { Log } from '../runtime/log.ts';
import type { AdminIdentity, AdminRequest, AdminRoute, AuditReport } from './context.ts';
import type { AuditEntry } from '../audit/audit.ts';
import { isSameOrigin } from './origin-check.ts';

const MAX_ADMIN_BODY_BYTES = 1024 * 1024;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_STORE = { 'cache-control': 'no-store' };

/** Looks up the session cookie of a request: the signed-in admin, or null (a database read). */
export type SessionLookup = (req: IncomingMessage) => Promise<AdminIdentity | null>;

export type AdminApiHandler = (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;

/** Stores one audit-log row (`appendAudit` on the gateway's store). */
export type AuditSink = (entry: AuditEntry) => Promise<unknown>;

const DEFAULT_VERBS: Record<string, string> = { POST: 'create', PUT: 'set', PATCH: 'update', DELETE: 'delete' };

/**
 * The action, object type and id of a route that reported nothing: `POST /admin/api/users/:id/keys`
 * → `users.keys.create` on `users` (last parameter as id); a POST ending in a literal after a
 * parameter names its verb: `POST /admin/api/keys/:id/revoke` → `keys.revoke`.
 */
export function defaultAuditAction(method: string, pattern: string, params: Readonly<Record<string, string>>): { action: string; objectType: string; objectId: string | null } {
  const segments = pattern.replace(/^\/admin\/api\/?/, '').split('/').filter(Boolean);
  const literals = segments.filter((s) => !s.startsWith(':'));
  const last = segments[segments.length - 1] ?? '';
  const verbInPath = method === 'POST' && segments.length >= 2 && !last.startsWith(':') && segments[segments.length - 2]!.startsWith(':');
  const action = verbInPath ? literals.join('.') : [...literals, DEFAULT_VERBS[method] ?? method.toLowerCase()].join('.');
  const names = segments.filter((s) => s.startsWith(':'));
  const lastParam = names.length > 0 ? params[names[names.length - 1]!.slice(1)] ?? null : null;
  return { action, objectType: literals[0] ?? 'admin', objectId: lastParam };
}

/** Value of cookie `name` in a `Cookie` header, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * The admin API's handler. `anonymousBodyTimeoutMs`: how long a request without a session (the sign-in)
 * has to send its body, in ms; then 408 `request_timeout` and its connection closed. Without it, a
 * stranger's sign-in that declares a body and never sends it held its connection for the whole
 * `server.requestTimeoutMs` (5 min), counted as busy, so a few addresses could fill
 * `server.maxConnections` with no key (issue 39, item 4). The gateway passes `server.headersTimeoutMs`:
 * a stranger gets that long for its headers and its body alike.
 */
export function createAdminRouter(
  routes: readonly AdminRoute[], lookupSession: SessionLookup, log: Log, anonymousBodyTimeoutMs = 20_000, auditSink?: AuditSink,
): AdminApiHandler {
  const find = compileRouteTable(routes);

  function readBody(req: IncomingMessage, res: ServerResponse, anonymous: boolean): Promise<unknown> {
    return readJsonBody(req, MAX_ADMIN_BODY_BYTES, anonymous ? (reading) => withinDeadline(req, res, reading) : undefined);
  }

  /**
   * `reading`, or 408 `request_timeout` once `anonymousBodyTimeoutMs` passed: the answer then says
   * `connection: close`, and the socket is destroyed `CLOSE_GRACE_MS` after it (a client that never
   * reads nor closes would otherwise keep it half-open).
   */
  function withinDeadline(req: IncomingMessage, res: ServerResponse, reading: Promise<Buffer>): Promise<Buffer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        res.setHeader('connection', 'close');
        res.once('finish', () => setTimeout(() => req.socket.destroy(), CLOSE_GRACE_MS).unref());
        reject(gatewayError('request_timeout'));
      }, anonymousBodyTimeoutMs);
      timer.unref();
    });
    // The read still settles later (its socket closed): nobody waits for it then.
    reading.catch(() => {});
    return Promise.race([reading, late]).finally(() => clearTimeout(timer));
  }

  /**
   * Writes the audit row of a request that changed something. The change is already made, so a failed
   * write does not turn its answer into an error: it is logged with the whole entry instead.
   */
  async function record(route: AdminRoute, request: AdminRequest, report: AuditReport): Promise<void> {
    if (!auditSink) return;
    const fallback = defaultAuditAction(request.method, route.pattern, request.params);
    const actor = report.actor ?? (request.admin ? { name: request.admin.username, kind: 'admin' as const, role: request.admin.role } : { name: 'anonymous', kind: 'admin' as const, role: null });
    const entry: AuditEntry = {
      actor: actor.name, actorKind: actor.kind, role: actor.role ?? null, ip: request.req.socket.remoteAddress ?? null,
      action: report.action ?? fallback.action,
      objectType: report.objectType ?? fallback.objectType,
      objectId: report.objectId !== undefined ? report.objectId : fallback.objectId,
      before: report.before, after: report.after, requestId: request.requestId,
    };
    try {
      await auditSink(entry);
    } catch (err) {
      log.error('admin: could not write the audit-log row', { requestId: request.requestId, action: entry.action, actor: entry.actor, objectId: entry.objectId, err });
    }
  }

  return async function handleAdminApi(req, res, requestId) {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    try {
      const { route, params } = find(method, url.pathname);
      if (MUTATING.has(method) && !isSameOrigin(req)) throw originMismatch();
      const admin = await lookupSession(req);
      if (!admin && !route.public) throw sessionRequired();
      if (admin && !route.public) assertRouteAllowed(admin, route, url.pathname);
      let report: AuditReport | false | null = null;
      const request: AdminRequest = {
        method, params, query: url.searchParams, body: MUTATING.has(method) && method !== 'DELETE' ? await readBody(req, res, !admin) : undefined,
        admin, requestId, req, res,
        audit(stated) {
          report = stated;
        },
      };
      const reply = await route.handler(request);
      const status = reply === 'sent' ? res.statusCode : reply.status;
      if (status < 400 && report !== false && (report !== null || (MUTATING.has(method) && route.audit !== false))) {
        await record(route, request, report ?? {});
      }
      if (reply === 'sent') return;
      if (reply.status === 204) {
        res.writeHead(204, { ...NO_STORE, ...reply.headers, 'x-request-id': requestId });
        res.end();
        return;
      }
      sendJson(res, reply.status, reply.body ?? {}, requestId, NO_STORE, reply.headers);
    } catch (err) {
      const error: GatewayError = toGatewayError(err);
      if (error.code === 'internal_error') log.error('admin request failed', { requestId, method, path: url.pathname, err });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, error, requestId, NO_STORE);
    }
  };
}
