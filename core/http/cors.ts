/**
 * CORS for browser apps calling the API (`/api/*`) from another origin, off unless the manifest lists
 * origins (`server.cors.allowedOrigins`). Follows the Fetch standard's CORS protocol:
 * - a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed origin
 *   answers 204 with the allowed origin, methods, the requested headers (echoed: the SDKs send
 *   `x-stainless-*` headers that change between versions) and `Access-Control-Max-Age`;
 * - every other response to an allowed origin, errors and streams included, carries
 *   `Access-Control-Allow-Origin` and exposes the headers a client reads (`x-request-id`, the rate
 *   limits, `retry-after`).
 * A disallowed origin gets no CORS header at all, its preflight a bare 204, so the browser refuses
 * the call (the `cors` middleware's behaviour; a CORS failure is the browser's to report). The admin
 * UI (`/admin`) is same-origin only and never answers CORS.
 * `"*"` is answered as `*`, never by reflecting the request's origin, and never with credentials:
 * reflecting any origin with `Access-Control-Allow-Credentials: true` would let every site read the
 * answers to its visitors' cookie- or HTTP-auth-carrying calls (the manifest refuses the pair).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** `server.cors` of the manifest. */
export interface CorsSettings {
  /** Exact origins (`https://app.example`), or `"*"` for any; empty = CORS off. */
  allowedOrigins: string[];
  /** Send `Access-Control-Allow-Credentials: true` (cookies, HTTP auth) to the listed origins; never with `"*"`. */
  allowCredentials: boolean;
  /** How long a browser may cache a preflight answer, in seconds. */
  maxAgeSeconds: number;
}

/** Request headers allowed when a preflight names none: what the OpenAI and Anthropic SDKs send. */
const DEFAULT_ALLOWED_HEADERS = 'authorization, content-type, x-api-key, anthropic-version, anthropic-beta, openai-beta, openai-organization, openai-project';
const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS';
/** Response headers a browser app may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'x-request-id', 'retry-after', 'retry-after-ms', 'x-tollgate-max-tokens-capped',
  'x-ratelimit-limit-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens',
].join(', ');

export interface Cors {
  /**
   * Applies CORS to an `/api/*` request: answers a preflight itself (returns true: the request is
   * done), or sets the CORS headers on `res` for the response to come (returns false).
   */
  apply(req: IncomingMessage, res: ServerResponse, requestId: string): boolean;
}

/** The CORS policy of `settings`, or null when no origin is allowed (CORS off). */
export function createCors(settings: CorsSettings): Cors | null {
  if (settings.allowedOrigins.length === 0) return null;
  const any = settings.allowedOrigins.includes('*');
  const allowed = new Set(settings.allowedOrigins.map((o) => o.toLowerCase()));
  const withCredentials = settings.allowCredentials && !any;

  /** The `Access-Control-Allow-Origin` value for `origin`, or null when it is not allowed. */
  function allowOrigin(origin: string): string | null {
    if (any) return '*';
    return allowed.has(origin.toLowerCase()) ? origin : null;
  }

  return {
    apply(req, res, requestId) {
      const origin = req.headers.origin;
      const isPreflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
      // The answer depends on Origin unless every origin gets "*": caches must key on it.
      if (!any) res.setHeader('vary', isPreflight ? 'origin, access-control-request-headers' : 'origin');
      const allowedOrigin = origin === undefined ? null : allowOrigin(origin);
      if (allowedOrigin !== null) {
        res.setHeader('access-control-allow-origin', allowedOrigin);
        if (withCredentials) res.setHeader('access-control-allow-credentials', 'true');
      }
      if (!isPreflight) {
        if (allowedOrigin !== null) res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
        return false;
      }
      if (allowedOrigin !== null) {
        const requested = req.headers['access-control-request-headers'];
        res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
        res.setHeader('access-control-allow-headers', requested && requested.trim() !== '' ? requested : DEFAULT_ALLOWED_HEADERS);
        res.setHeader('access-control-max-age', String(settings.maxAgeSeconds));
      }
      res.writeHead(204, { 'x-request-id': requestId });
      res.end();
      return true;
    },
  };
}
