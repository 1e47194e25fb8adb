/**
 * The portal API's front door (`/portal/api/*`, docs/portal.md): matches method + pattern, refuses
 * cross-site mutating calls (403 `origin_mismatch`, the admin API's Origin / Fetch-Metadata check),
 * requires a live portal session on every route not marked `public` (401 `session_required`), parses
 * JSON bodies (64 KiB cap: nothing the portal takes is larger), and renders the handler's reply or
 * thrown `GatewayError` in the contract's error shape. Responses are never cached (`no-store`).
 *
 * Its own small router rather than the admin's: the admin router's identity is an `AdminIdentity`
 * with roles; the portal's is one gateway user, and every handler gets only that user's id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayError, toGatewayError } from '../errors.ts';
import { sendError, sendJson } from '../http/respond.ts';
import { compileRouteTable, readJsonBody } from '../admin/route-table.ts';
import type { Log } from '../runtime/log.ts';
import { isSameOrigin } from '../admin/origin-check.ts';
import { originMismatch } from '../admin/session-errors.ts';

const MAX_PORTAL_BODY_BYTES = 64 * 1024;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_STORE = { 'cache-control': 'no-store' };

export interface PortalRequest {
  readonly method: string;
  /** Path parameters, URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON body for POST/PATCH (`{}` when empty); undefined for GET/DELETE. */
  readonly body: unknown;
  /** The signed-in gateway user's id; null only on `public` routes without a session. */
  readonly userId: number | null;
  readonly requestId: string;
  readonly req: IncomingMessage;
}

/** A JSON reply (`status` 204: no body). */
export interface PortalReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface PortalRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** e.g. `/portal/api/keys/:id`; a `:name` matches one path segment. */
  pattern: string;
  /** Reachable without a session (the session probe, logout). */
  public?: boolean;
  handler(request: PortalRequest): Promise<PortalReply>;
}

/** The signed-in gateway user's id from a request's cookie, or null (a database read). */
export type PortalSessionLookup = (req: IncomingMessage) => Promise<number | null>;

export type PortalApiHandler = (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;

/** 401 on `/portal/api/*` without a live portal session. */
export function portalSessionRequired() {
  return gatewayError('session_required', { message: 'Sign in first: open /portal/ and sign in with your organisation\'s identity provider. Sessions end after inactivity.' });
}

export function createPortalRouter(routes: readonly PortalRoute[], lookupSession: PortalSessionLookup, log: Log): PortalApiHandler {
  const find = compileRouteTable(routes);

  return async function handlePortalApi(req, res, requestId) {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://portal.invalid');
    try {
      const { route, params } = find(method, url.pathname);
      if (MUTATING.has(method) && !isSameOrigin(req)) throw originMismatch();
      const userId = await lookupSession(req);
      if (userId === null && !route.public) throw portalSessionRequired();
      const body = (method === 'POST' || method === 'PATCH') && userId !== null ? await readJsonBody(req, MAX_PORTAL_BODY_BYTES) : undefined;
      const reply = await route.handler({ method, params, query: url.searchParams, body, userId, requestId, req });
      if (reply.status === 204) {
        res.writeHead(204, { ...NO_STORE, ...reply.headers, 'x-request-id': requestId });
        res.end();
        return;
      }
      sendJson(res, reply.status, reply.body ?? {}, requestId, NO_STORE, reply.headers);
    } catch (err) {
      const error = toGatewayError(err);
      if (error.code === 'internal_error') log.error('portal request failed', { requestId, method, path: url.pathname, err });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, error, requestId, NO_STORE);
    }
  };
}
