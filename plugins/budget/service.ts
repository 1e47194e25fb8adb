/**
 * What the budget plugin offers other plugins (`ctx.services.get('budget')`): a user's budget now,
 * for `GET /api/account` and the admin UI, and a way to see a limit changed in this process.
 */
import type { BudgetStatus } from './ledger.ts';

export interface BudgetService {
  /** IANA timezone the periods are aligned in. */
  readonly timeZone: string;
  /** The user's budget now (amounts in nano-USD); undefined for an unknown user. */
  status(userId: number): BudgetStatus | undefined;
  /** Re-reads a user's budget settings after an in-process change (all users when omitted). */
  invalidate(userId?: number): void;
}

declare module '../../core/services.ts' {
  interface GatewayServices {
    budget: BudgetService;
  }
}
