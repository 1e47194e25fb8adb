/**
 * Re-pricing (`tollgate pricing reprice`, `POST /admin/api/pricing/reprice`): after a price is fixed,
 * the log rows of one model in a time range are billed again at the price in effect now, from the
 * token counts they keep. In one transaction:
 * - each changed row gets its new `cost_nanos`, `unpriced` and `billed_price`;
 * - the usage rollups (`usage_rollups`, which the log writer sums per batch: no trigger follows an
 *   UPDATE) get the same cost and unpriced-count deltas, so reports stay equal to the log;
 * - each user's spend of the current budget period (`gateway_users.budget_spent_nanos`) moves by the
 *   delta of their rows in that period (never below 0). Rows of past periods change the log and the
 *   reports, not a budget that has been reset since.
 * A running gateway notices the commit (`store.onExternalChange`, or `invalidate()` when the admin API
 * ran it) and re-reads spends; its own spend writes are deltas (`write-behind.ts`), so none is lost.
 *
 * The plan is engine-neutral (`reprice-plan.ts`); the transaction is the engine's: SQLite's is
 * synchronous and IMMEDIATE (`reprice-sqlite.ts`), PostgreSQL's locks the rows it rewrites
 * (`reprice-postgres.ts`). Amounts are integer nano-USD (`cost.ts`); the totals before and after are exact sums.
 */
import type { Store } from '../store/store.ts';
import { nowIso } from '../store/store.ts';
import type { PriceBook } from '../services.ts';
import type { RepriceOptions, RepriceResult } from './reprice-plan.ts';
import { repriceSqlite } from './reprice-sqlite.ts';
import { repricePostgres } from './reprice-postgres.ts';

export { RepriceTooLargeError, type RepriceOptions, type RepriceResult, type RepricedSpend } from './reprice-plan.ts';

/**
 * Re-prices the rows `options` selects with `book`'s prices (see the module doc). Rejects with
 * `RepriceTooLargeError` when more than `options.maxRows` rows match (nothing is written).
 */
export async function reprice(store: Store, book: PriceBook, options: RepriceOptions): Promise<RepriceResult> {
  const toIso = options.toIso ?? nowIso(options.nowMs);
  return store.engine === 'sqlite' ? repriceSqlite(store.sqlite, book, options, toIso) : repricePostgres(store.db, book, options, toIso);
}
