/**
 * The route matching and JSON body reading shared by the admin API's router (`router.ts`) and the
 * portal's (`core/portal/router.ts`): method + pattern (`/admin/api/users/:id`, a `:name` matching one
 * URL-decoded path segment), 405 with the methods the path allows, 404 otherwise.
 */
import type { IncomingMessage } from 'node:http';
import { invalidRequest, methodNotAllowed, routeNotFound } from '../errors.ts';
import { parseJsonBody, readRequestBody } from '../http/request-body.ts';

/** What a route table needs of a route. */
export interface RoutePattern {
  method: string;
  pattern: string;
}

/** Finds the route of `method` + `path` and its parameters; throws 405 `method_not_allowed` or 404 `route_not_found`. */
export type RouteFinder<R extends RoutePattern> = (method: string, path: string) => { route: R; params: Record<string, string> };

function match(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const expected = pattern[i]!;
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

/** A finder over `routes`, matched in order. */
export function compileRouteTable<R extends RoutePattern>(routes: readonly R[]): RouteFinder<R> {
  const compiled = routes.map((route) => ({ route, segments: route.pattern.split('/').filter(Boolean) }));
  return (method, path) => {
    const segments = path.split('/').filter(Boolean);
    const allowed: string[] = [];
    for (const candidate of compiled) {
      const params = match(candidate.segments, segments);
      if (!params) continue;
      if (candidate.route.method === method) return { route: candidate.route, params };
      allowed.push(candidate.route.method);
    }
    if (allowed.length > 0) throw methodNotAllowed(method, path, allowed.join(', '));
    throw routeNotFound(method, path);
  };
}

/**
 * A request's JSON body (`{}` when empty), at most `maxBytes`; `reading` lets the caller bound the read
 * (a deadline). Throws 400 `invalid_request` without `Content-Type: application/json`, and the body
 * reader's and parser's errors (413, 400).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number, reading: (read: Promise<Buffer>) => Promise<Buffer> = (read) => read): Promise<unknown> {
  const raw = await reading(readRequestBody(req, maxBytes));
  if (raw.length === 0) return {};
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw invalidRequest('Send the body as JSON with "Content-Type: application/json".');
  return parseJsonBody(raw);
}
