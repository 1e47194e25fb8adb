/**
 * The signature of the gateway's webhooks (budget alerts, reconciliation alerts), Stripe-style so a
 * receiver can refuse replays: `x-tollgate-timestamp: <unix seconds>` and
 * `x-tollgate-signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`.
 * Signing the timestamp with the body means an old delivery cannot be replayed with a fresh timestamp.
 */
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-tollgate-signature';
export const TIMESTAMP_HEADER = 'x-tollgate-timestamp';

/** `sha256=<hex>`: HMAC-SHA256 with `secret` of `"<timestampSec>.<body>"` (`body` as the exact bytes sent). */
export function signAlert(secret: string, timestampSec: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSec}.${body}`).digest('hex')}`;
}
