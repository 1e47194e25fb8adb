/**
 * The cap on bytes relayed from one upstream stream (`upstream.maxStreamBytes`, issue 14 item 10): a
 * stream that never ends, or ends too late, cannot hold a connection and a client's memory forever.
 * Past the cap the proxy stops reading, the stream ends with the dialect's error event
 * (`upstream_response_too_large`, 502), the exchange is logged and billed for what was generated (`stream-cut.ts`).
 */
import { gatewayError, GatewayError } from '../errors.ts';
import type { Exchange } from '../exchange.ts';
import type { Log } from '../runtime/log.ts';

/** `upstream.maxStreamBytes` when absent: 64 MiB, far above a real answer (a long one is a few MiB). */
export const DEFAULT_MAX_STREAM_BYTES = 64 * 1024 * 1024;

export interface StreamCap {
  /** Counts `bytes` more; throws `GatewayError` `upstream_response_too_large` once the total exceeds the cap. */
  add(bytes: number): void;
}

export function createStreamCap(provider: string, maxBytes = DEFAULT_MAX_STREAM_BYTES): StreamCap {
  let total = 0;
  return {
    add(bytes) {
      total += bytes;
      if (total > maxBytes) {
        throw gatewayError('upstream_response_too_large', {
          message: `Upstream "${provider}" streamed more than ${maxBytes} bytes (upstream.maxStreamBytes); the answer was cut there.`,
        });
      }
    },
  };
}

/**
 * Logs `err` when it is a size cap (the stream's or one event's). The cut answer is billed for what
 * was generated so far like every stream that ends early (`proxy.ts`).
 */
export function logOversized(ex: Exchange, err: unknown, log: Log): void {
  if (!(err instanceof GatewayError) || err.code !== 'upstream_response_too_large') return;
  log.warn('upstream response too large', { requestId: ex.id, message: err.message });
}
