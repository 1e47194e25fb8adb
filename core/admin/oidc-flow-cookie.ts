/**
 * The secrets of one sign-in in flight (PKCE verifier, state, nonce, redirect URL), kept in the
 * browser between `GET /admin/api/oidc/login` and the callback in a cookie sealed with the master key
 * (AES-256-GCM, `secret-box.ts`): any replica sharing the data dir's key can open it, nobody can read
 * or alter it, and nothing is written to the database for a sign-in that is never finished. The
 * cookie is HttpOnly, Path=/admin/api/oidc, lives `FLOW_TTL_MS`, and is SameSite=Lax: the callback
 * is a top-level navigation coming back from the provider's site, on which a Strict cookie is not sent.
 */
import type { IncomingMessage } from 'node:http';
import type { OidcFlow } from '../accounts/oidc-client.ts';
import { open, seal, type Keyring } from '../accounts/secret-box.ts';
import { readCookie } from './router.ts';
import { requestScheme } from './origin-check.ts';

export const FLOW_COOKIE = 'tollgate_oidc_flow';
/** How long a sign-in may take at the provider, in ms. */
export const FLOW_TTL_MS = 10 * 60_000;

/** Which sign-in a flow cookie belongs to: its name, its path, and the sealing context (a cookie of one cannot be replayed to the other). */
export interface FlowCookieScope {
  name: string;
  path: string;
  context: string;
}

export const ADMIN_FLOW: FlowCookieScope = { name: FLOW_COOKIE, path: '/admin/api/oidc', context: 'admin-oidc-flow' };
export const PORTAL_FLOW: FlowCookieScope = { name: 'tollgate_portal_flow', path: '/portal/auth', context: 'portal-oidc-flow' };

interface SealedFlow extends OidcFlow {
  startedAtMs: number;
}

/** `Set-Cookie` value holding `flow` sealed; `nowMs` bounds its life. */
export function flowCookie(req: IncomingMessage, flow: OidcFlow, keyring: Keyring, nowMs: number, scope: FlowCookieScope = ADMIN_FLOW): string {
  const sealed = seal(JSON.stringify({ ...flow, startedAtMs: nowMs } satisfies SealedFlow), keyring, scope.context);
  const value = [sealed.keyId, sealed.nonce, sealed.authTag, sealed.ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  return cookieWith(req, value, Math.floor(FLOW_TTL_MS / 1000), scope);
}

/** `Set-Cookie` value that removes the flow cookie (after the callback, whatever its outcome). */
export function clearFlowCookie(req: IncomingMessage, scope: FlowCookieScope = ADMIN_FLOW): string {
  return cookieWith(req, '', 0, scope);
}

/** The flow of this request's cookie, or null when it is missing, altered, sealed by an unknown key or older than `FLOW_TTL_MS`. */
export function readFlowCookie(req: IncomingMessage, keyring: Keyring, nowMs: number, scope: FlowCookieScope = ADMIN_FLOW): OidcFlow | null {
  const value = readCookie(req.headers.cookie, scope.name);
  const parts = value?.split('.');
  if (!parts || parts.length !== 4) return null;
  try {
    const [keyId, nonce, authTag, ciphertext] = parts as [string, string, string, string];
    const plain = open({ keyId, nonce: Buffer.from(nonce, 'base64url'), authTag: Buffer.from(authTag, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url') }, keyring, scope.context);
    const flow = JSON.parse(plain) as SealedFlow;
    if (!(nowMs >= flow.startedAtMs && nowMs - flow.startedAtMs <= FLOW_TTL_MS)) return null;
    return { state: flow.state, nonce: flow.nonce, codeVerifier: flow.codeVerifier, redirectUrl: flow.redirectUrl };
  } catch {
    return null;
  }
}

function cookieWith(req: IncomingMessage, value: string, maxAgeSec: number, scope: FlowCookieScope): string {
  const secure = requestScheme(req) === 'https' ? '; Secure' : '';
  return `${scope.name}=${value}; Path=${scope.path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}${secure}`;
}
