/**
 * What the rate-limit plugin offers other plugins (`ctx.services.get('rateLimit')`): a caller's
 * current limits, for `GET /api/account` and the admin UI.
 */
import type { Principal } from '../../core/exchange.ts';

/** One limit's state; the same figures as the `x-ratelimit-*` headers. */
export interface LimitState {
  /** Requests or tokens per minute. */
  limit: number;
  remaining: number;
  /** Ms until the limit is fully replenished (0 = full now). */
  resetMs: number;
}

export interface RateLimitService {
  /** The effective limits for this caller (user limits, or the tighter key limits); null = no such limit. */
  statusOf(principal: Principal): { requests: LimitState | null; tokens: LimitState | null };
}

declare module '../../core/services.ts' {
  interface GatewayServices {
    rateLimit: RateLimitService;
  }
}
