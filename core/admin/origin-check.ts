/**
 * CSRF defence for the admin API (OWASP CSRF cheat sheet, "Verifying origin with standard headers"
 * and "Fetch Metadata"): a mutating call is refused when its `Origin` names another site, or, when a
 * browser sent no `Origin`, when `Sec-Fetch-Site` says the request was cross-site. A call with neither
 * header is not from a browser (curl, scripts) and carries no ambient cookie risk, so it passes; the
 * session cookie is also SameSite=Strict.
 */
import type { IncomingMessage } from 'node:http';

/** `https` when the connection is TLS or a proxy says so (`X-Forwarded-Proto: https`). */
export function requestScheme(req: IncomingMessage): 'http' | 'https' {
  const forwarded = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  if (first === 'https') return 'https';
  return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
}

/** Whether a mutating request came from the gateway's own pages (or from no browser at all). */
export function isSameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const host = req.headers['x-forwarded-host'] ?? req.headers.host;
    if (!host || origin === 'null') return false;
    const hostValue = (Array.isArray(host) ? host[0]! : host).split(',')[0]!.trim().toLowerCase();
    return origin.toLowerCase() === `${requestScheme(req)}://${hostValue}`;
  }
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}
