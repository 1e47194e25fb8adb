/**
 * Re-pricing on SQLite (`reprice.ts`): synchronous, in one IMMEDIATE transaction on the store's own
 * connection. Why not Kysely's async transaction: the gateway's log writer shares this connection
 * and writes synchronously; awaiting inside an open transaction would let its batch run inside ours
 * (and be rolled back with it). Synchronous, nothing else runs on the connection until the commit.
 */
import type { Sqlite } from '../store/store.ts';
import type { PriceBook } from '../services.ts';
import {
  affectedUserIds, planRows, repriceResult, spendChanges, RepriceTooLargeError, REPRICE_ROW_COLUMNS,
  type RepriceOptions, type RepriceResult, type RepriceRow, type RepriceUser,
} from './reprice-plan.ts';

/** Re-prices in one immediate transaction; `toIso` is the resolved end of the range. */
export function repriceSqlite(sqlite: Sqlite, book: PriceBook, options: RepriceOptions, toIso: string): RepriceResult {
  const provider = options.provider ?? null;
  const run = () => {
    const rows = sqlite.prepare<unknown[], RepriceRow>(`SELECT ${REPRICE_ROW_COLUMNS.join(', ')}
      FROM llm_requests WHERE created_at >= ? AND created_at < ? AND model_served = ? AND (? IS NULL OR provider = ?)
        AND (prompt_tokens IS NOT NULL OR completion_tokens IS NOT NULL)`).all(options.fromIso, toIso, options.model, provider, provider);
    if (options.maxRows !== undefined && rows.length > options.maxRows) throw new RepriceTooLargeError(rows.length, options.maxRows);
    const plan = planRows(rows, book);
    const readUser = sqlite.prepare<[number], RepriceUser>(
      'SELECT id, name, budget_period, budget_spent_nanos, budget_period_start FROM gateway_users WHERE id = ?',
    );
    const users = new Map<number, RepriceUser>();
    for (const id of affectedUserIds(rows, plan.updates)) {
      const user = readUser.get(id);
      if (user) users.set(id, user);
    }
    const spend = spendChanges(rows, plan.updates, users, options);
    if (!options.dryRun) {
      const updateRow = sqlite.prepare<[number, number, string | null, number]>(
        'UPDATE llm_requests SET cost_nanos = ?, unpriced = ?, billed_price = ? WHERE id = ?',
      );
      for (const update of plan.updates) updateRow.run(update.costNanos, update.unpriced, update.billedPrice, update.id);
      const updateRollup = sqlite.prepare(`UPDATE usage_rollups SET cost_nanos = cost_nanos + ?, unpriced_requests = unpriced_requests + ?
        WHERE bucket_start = ? AND gateway_user_id = ? AND provider = ? AND model_requested = ? AND model_served = ?`);
      for (const delta of plan.rollupDeltas) updateRollup.run(delta.costNanos, delta.unpriced, ...delta.key);
      const updateSpend = sqlite.prepare<[number, string, number]>(
        'UPDATE gateway_users SET budget_spent_nanos = ?, budget_period_start = ? WHERE id = ?',
      );
      for (const change of spend) updateSpend.run(change.spent_after_nanos, change.period_start, change.user_id);
    }
    return repriceResult(options, toIso, rows.length, plan, spend);
  };
  // Immediate: no other writer (a gateway's log batch in another process) slips between the reads and the writes.
  return sqlite.transaction(run).immediate();
}
