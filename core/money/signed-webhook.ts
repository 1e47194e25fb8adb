/**
 * One signed webhook POST (`webhook-signature.ts`), as budget alerts and reconciliation alerts send
 * them: JSON body, `x-tollgate-timestamp` and `x-tollgate-signature`, the sender's own id header, the
 * whole attempt bounded by `timeoutMs`. Retries and their bookkeeping are the caller's.
 */
import { request } from 'undici';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signAlert } from './webhook-signature.ts';

export interface SignedWebhook {
  url: string;
  /** HMAC-SHA256 key. */
  secret: string;
  /** The exact JSON text sent (the signature covers these bytes). */
  body: string;
  /** Unix seconds the signature is made for. */
  timestampSec: number;
  userAgent: string;
  /** Extra headers, e.g. `x-tollgate-alert-id`. */
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Cuts the attempt (a stop). */
  signal?: AbortSignal;
}

/**
 * Sends `hook` once: null when the receiver took it (2xx), else what went wrong (`HTTP 500: <start of
 * its body>`). Throws on a network error, a timeout or an abort.
 */
export async function postSignedWebhook(hook: SignedWebhook): Promise<string | null> {
  const timeout = AbortSignal.timeout(hook.timeoutMs);
  const res = await request(hook.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': hook.userAgent,
      ...hook.headers,
      [TIMESTAMP_HEADER]: String(hook.timestampSec),
      [SIGNATURE_HEADER]: signAlert(hook.secret, hook.timestampSec, hook.body),
    },
    body: hook.body,
    headersTimeout: hook.timeoutMs,
    bodyTimeout: hook.timeoutMs,
    signal: hook.signal ? AbortSignal.any([hook.signal, timeout]) : timeout,
  });
  const text = await res.body.text();
  return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}${text ? `: ${text.slice(0, 100)}` : ''}`;
}
