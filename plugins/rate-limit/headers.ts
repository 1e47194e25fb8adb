/**
 * The OpenAI-style rate-limit response headers (docs/contract.md, "HTTP API"):
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`. Reset values use the duration format
 * OpenAI sends (`1s`, `6m0s`, `59.5s`, `20ms`), which is Go's `time.Duration.String()`.
 */
import type { LimitState } from '../../core/services.ts';

/**
 * Whole ms as a Go-style duration: `0s`; below a second `20ms`; otherwise `[Nh][Nm]N[.fff]s` with the
 * larger units carried once present (`1h0m0s`, `6m0s`, `59.5s`, `1m0.25s`).
 */
export function formatResetDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const secondsMs = total % 60_000;
  const fraction = secondsMs % 1000;
  const seconds = `${Math.floor(secondsMs / 1000)}${fraction ? `.${String(fraction).padStart(3, '0').replace(/0+$/, '')}` : ''}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/**
 * The state to show when several limits apply (the user's and the key's): the one with fewer units
 * remaining; on a tie, the one that takes longer to refill. Null when none applies.
 */
export function tighterOf(states: readonly LimitState[]): LimitState | null {
  let shown: LimitState | null = null;
  for (const state of states) if (!shown || isTighter(state, shown)) shown = state;
  return shown;
}

/** `tighterOf`'s rule for two states: `a` has fewer units remaining, or as many and a later reset. */
export function isTighter(a: Pick<LimitState, 'remaining' | 'resetMs'>, b: Pick<LimitState, 'remaining' | 'resetMs'>): boolean {
  return a.remaining < b.remaining || (a.remaining === b.remaining && a.resetMs > b.resetMs);
}

// Built once: a name made per response is a string built and hashed per response.
const NAMES = {
  requests: { limit: 'x-ratelimit-limit-requests', remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests' },
  tokens: { limit: 'x-ratelimit-limit-tokens', remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens' },
} as const;

/** Sets one dimension's trio in `headers`; does nothing when no limit applies (`state` null). */
export function setRateLimitHeaders(headers: Record<string, string>, dimension: 'requests' | 'tokens', state: LimitState | null): void {
  if (!state) return;
  const names = NAMES[dimension];
  headers[names.limit] = String(state.limit);
  headers[names.remaining] = String(state.remaining);
  headers[names.reset] = formatResetDuration(state.resetMs);
}
