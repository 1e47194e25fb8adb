/**
 * What auth-guard offers the rest of the gateway (`ctx.services.get('authGuard')`): single-use test
 * tickets, so the admin API can make a real request as a key it never sees (only the key's SHA-256
 * is stored).
 */

/** Every ticket starts with this, so auth-guard tells it from a key (`tg_…`) before hashing. */
export const TEST_TICKET_PREFIX = 'tgt_';

/** How long an issued ticket can be redeemed, ms. */
export const TEST_TICKET_TTL_MS = 10_000;

export interface AuthGuardService {
  /**
   * A random single-use ticket (`tgt_` + 43 base64url characters) that authenticates exactly as the
   * API key `apiKeyId` would (revoked → 401, expired → 401, disabled user → 403) for one request
   * within `TEST_TICKET_TTL_MS` of the gateway clock, without touching the key's `last_used_at`.
   * Null when no key has that id.
   */
  issueTestTicket(apiKeyId: number): string | null;
}

declare module '../../core/services.ts' {
  interface GatewayServices {
    authGuard: AuthGuardService;
  }
}
