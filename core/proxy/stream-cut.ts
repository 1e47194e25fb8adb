/**
 * An upstream answer that ends early after its head (issue 42 item 1): the error it ends with. The
 * upstream accepted the request (2xx), so the exchange is billed for it whatever the cause
 * (`proxy.ts` settles the usage as cut); the code says whose side ended it:
 * - the upstream's: its socket reset or closed mid-body, or the stream closed without its terminal
 *   event (the codecs' `finish` throws), or its last event was cut off mid-way → 502
 *   `upstream_stream_truncated`; no byte within `upstream.bodyTimeoutMs` → 504 `upstream_timeout`.
 *   Both count against the deployment's circuit breaker (`verdictOf` in the router's health).
 * - ours: the client left (`client_disconnected`, set by the pipeline) or the shutdown drain cut it
 *   (`gateway_shutdown`): never the upstream's failure.
 */
import { gatewayError, GatewayError } from '../errors.ts';
import { transportError } from '../upstream/upstream-client.ts';

/**
 * The error a read of an upstream body failed with, after the head arrived: a `GatewayError` as it
 * is (a timeout, the size cap, an in-band error, a truncation), a socket failure (undici's
 * `UND_ERR_SOCKET`, `ECONNRESET`: `upstream_unreachable` before the head) as 502
 * `upstream_stream_truncated`.
 */
export function cutError(provider: string, err: unknown): GatewayError {
  const error = transportError(provider, err);
  if (error.code !== 'upstream_unreachable') return error;
  const cause = (err as { code?: string } | null)?.code;
  return gatewayError('upstream_stream_truncated', {
    message: `Provider "${provider}" ended the answer before it was complete (${cause ?? 'connection closed'}).`,
    cause: err,
  });
}

/**
 * The last event of a stream that closed mid-event (the framer delivers it at the end) is cut off,
 * not malformed: its `upstream_malformed_response` becomes `upstream_stream_truncated`.
 */
export function truncatedTail(provider: string, err: unknown): unknown {
  if (!(err instanceof GatewayError) || err.code !== 'upstream_malformed_response') return err;
  return gatewayError('upstream_stream_truncated', {
    message: `Provider "${provider}" ended the stream in the middle of an event.`,
    cause: err,
  });
}
