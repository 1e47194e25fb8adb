/**
 * Which failed attempts are worth another, and how long to wait before one (the manifest's
 * `retry`, docs/routing.md). Only failures before the first byte reach here
 * (`core/proxy/upstream-attempts.ts` stops at the first byte).
 *
 * - Retryable: no upstream answer because the connection failed or timed out (`upstream_unreachable`,
 *   `upstream_timeout` with no status), or an upstream status in `retryOnStatus` (by default 429,
 *   500, 502, 503, 504, 529). Never an answer the upstream accepted (2xx: it may have billed), never
 *   another 4xx (the request caused it: the next deployment would refuse it too).
 * - Backoff before round `r` ≥ 1 over the deployments: the upstream's `retry-after-ms` /
 *   `retry-after` when it sent one (a longer one than `maxRetryAfterMs` ends the retries: waiting
 *   that long would hold the client), else full jitter: random in [0, min(maxBackoffMs, backoffMs × 2^(r-1))).
 *   Moving on to a deployment not tried yet waits nothing.
 */
import type { FailedAttempt } from '../../../core/upstream/upstream-call.ts';
import type { RetryConfig } from '../schema.ts';

const TRANSPORT_FAILURES = new Set(['upstream_unreachable', 'upstream_timeout']);

/** True when `failed` may be tried again (elsewhere, or later). */
export function isRetryable(failed: FailedAttempt, retryOnStatus: ReadonlySet<number>): boolean {
  if (failed.upstreamStatus === null) return TRANSPORT_FAILURES.has(failed.error.code);
  return retryOnStatus.has(failed.upstreamStatus);
}

/**
 * The wait before round `round` (≥ 1), in ms; null when the upstream asked for longer than
 * `maxRetryAfterMs`. `random` returns [0, 1).
 */
export function backoffMs(round: number, failed: FailedAttempt, config: RetryConfig, random: () => number = Math.random): number | null {
  const asked = retryAfterMs(failed.error.headers);
  if (asked !== null) return asked > config.maxRetryAfterMs ? null : asked;
  const ceiling = Math.min(config.maxBackoffMs, config.backoffMs * 2 ** (round - 1));
  return Math.floor(random() * ceiling);
}

/** The delay an upstream asked for in ms, from the headers the upstream-error policy kept (`retry-after-ms`, else `retry-after` seconds); null when none. */
export function retryAfterMs(headers: Readonly<Record<string, string>>): number | null {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const seconds = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  return null;
}
