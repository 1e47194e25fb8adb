/**
 * The admin API's front door (`/admin/api/*`, docs/admin-api.md): matches method + pattern, refuses
 * cross-site mutating calls (403 `origin_mismatch`), requires a live session on every route not marked
 * `public` (401 `session_required`), parses JSON bodies (1 MiB cap), URL-decodes path parameters, and
 * renders the handler's reply or thrown `GatewayError`. Responses are never cached (`no-store`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { methodNotAllowed, invalidRequest, routeNotFound, toGatewayError, type GatewayError } from '../errors.ts';
import { originMismatch, sessionRequired } from './session-errors.ts';
import { sendError, sendJson } from '../http/respond.ts';
import { parseJsonBody, readRequestBody } from '../http/request-body.ts';
import type { Log } from '../runtime/log.ts';
import type { AdminIdentity, AdminRequest, AdminRoute } from './context.ts';
import { isSameOrigin } from './origin-check.ts';

const MAX_ADMIN_BODY_BYTES = 1024 * 1024;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_STORE = { 'cache-control': 'no-store' };

interface CompiledRoute {
  route: AdminRoute;
  /** Literal segments, or `:name` for a parameter. */
  segments: string[];
}

/** Looks up the session cookie of a request: the signed-in admin, or null (a database read). */
export type SessionLookup = (req: IncomingMessage) => Promise<AdminIdentity | null>;

export type AdminApiHandler = (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;

/** Value of cookie `name` in a `Cookie` header, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function match(compiled: CompiledRoute, segments: string[]): Record<string, string> | null {
  if (compiled.segments.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const expected = compiled.segments[i]!;
    if (expected.startsWith(':')) {
      try {
        params[expected.slice(1)] = decodeURIComponent(segments[i]!);
      } catch {
        return null;
      }
    } else if (expected !== segments[i]) return null;
  }
  return params;
}

export function createAdminRouter(routes: readonly AdminRoute[], lookupSession: SessionLookup, log: Log): AdminApiHandler {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: route.pattern.split('/').filter(Boolean) }));

  function find(method: string, path: string): { route: AdminRoute; params: Record<string, string> } {
    const segments = path.split('/').filter(Boolean);
    const allowed: string[] = [];
    for (const candidate of compiled) {
      const params = match(candidate, segments);
      if (!params) continue;
      if (candidate.route.method === method) return { route: candidate.route, params };
      allowed.push(candidate.route.method);
    }
    if (allowed.length > 0) throw methodNotAllowed(method, path, allowed.join(', '));
    throw routeNotFound(method, path);
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const raw = await readRequestBody(req, MAX_ADMIN_BODY_BYTES);
    if (raw.length === 0) return {};
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) throw invalidRequest('Send the body as JSON with "Content-Type: application/json".');
    return parseJsonBody(raw);
  }

  return async function handleAdminApi(req, res, requestId) {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    try {
      const { route, params } = find(method, url.pathname);
      if (MUTATING.has(method) && !isSameOrigin(req)) throw originMismatch();
      const admin = await lookupSession(req);
      if (!admin && !route.public) throw sessionRequired();
      const request: AdminRequest = {
        method, params, query: url.searchParams, body: MUTATING.has(method) && method !== 'DELETE' ? await readBody(req) : undefined,
        admin, requestId, req, res,
      };
      const reply = await route.handler(request);
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
