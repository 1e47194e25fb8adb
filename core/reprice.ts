/**
 * Re-pricing (`tollgate pricing reprice`, `POST /admin/api/pricing/reprice`): after a price is fixed,
 * the log rows of one model in a time range are billed again at the price in effect now, from the
 * token counts they keep. In one immediate transaction:
 * - each changed row gets its new `cost_nanos`, `unpriced` and `billed_price`;
 * - the usage rollups (`usage_rollups`, which the log writer sums per batch: no trigger follows an
 *   UPDATE) get the same cost and unpriced-count deltas, so reports stay equal to the log;
 * - each user's spend of the current budget period (`gateway_users.budget_spent_nanos`) moves by the
 *   delta of their rows in that period (never below 0). Rows of past periods change the log and the
 *   reports, not a budget that has been reset since.
 * A running gateway notices the commit (`store.onExternalChange`, or `invalidate()` when the admin API
 * ran it) and re-reads spends; its own spend writes are deltas (`write-behind.ts`), so none is lost.
 *
 * Amounts are integer nano-USD (`cost.ts`); the totals before and after are exact sums.
 */
import type { Sqlite } from './db.ts';
import { nowIso } from './db.ts';
import type { PriceBook } from './services.ts';
import type { BudgetPeriod } from './db-types.ts';
import { budgetWindow } from './calendar-period.ts';
import { quarterOf } from './usage-rollup-writer.ts';

/** What to re-price. Times ISO-8601 UTC; `toIso` exclusive (absent = now). */
export interface RepriceOptions {
  /** The served model id (`model_served`, without provider prefix). */
  model: string;
  /** Only rows of this gateway provider id; absent = every provider that served `model`. */
  provider?: string;
  fromIso: string;
  toIso?: string;
  /** Compute and report, write nothing. */
  dryRun: boolean;
  /** The budgets' time zone (the budget plugin's `timeZone`): which rows are in a user's current period. */
  timeZone: string;
  nowMs: number;
  /** Refuse (`RepriceTooLargeError`) when more rows match: the admin API's bound on synchronous work. */
  maxRows?: number;
}

/** One user's spend of the current budget period before and after, integer nano-USD. */
export interface RepricedSpend {
  user_id: number;
  user_name: string;
  period_start: string;
  spent_before_nanos: number;
  spent_after_nanos: number;
}

/** What a re-pricing did (or, dry, would do). */
export interface RepriceResult {
  model: string;
  provider: string | null;
  from: string;
  to: string;
  dry_run: boolean;
  /** Rows of the model in the range that have token counts. */
  rows: number;
  /** Rows whose cost or priced state changes. */
  changed_rows: number;
  /** Rows with no price now (they cost 0 and are marked unpriced). */
  unpriced_rows: number;
  cost_before_nanos: number;
  cost_after_nanos: number;
  spend: RepricedSpend[];
}

/** More rows than `maxRows` match: narrow the range or use the CLI. */
export class RepriceTooLargeError extends Error {
  constructor(readonly rows: number, readonly maxRows: number) {
    super(`${rows} log rows match; at most ${maxRows} are re-priced per call here: narrow the range or run \`tollgate pricing reprice\``);
    this.name = 'RepriceTooLargeError';
  }
}

interface LogRow {
  id: number;
  gateway_user_id: number | null;
  provider: string | null;
  model_requested: string | null;
  model_served: string;
  created_at: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  cost_nanos: number | null;
  unpriced: number;
}

interface RowUpdate {
  id: number;
  costNanos: number;
  unpriced: number;
  billedPrice: string | null;
}

/** Re-prices the rows `options` selects with `book`'s prices (see the module doc). */
export function reprice(sqlite: Sqlite, book: PriceBook, options: RepriceOptions): RepriceResult {
  const toIso = options.toIso ?? nowIso(options.nowMs);
  const provider = options.provider ?? null;
  const run = () => {
    const rows = sqlite.prepare<unknown[], LogRow>(`SELECT id, gateway_user_id, provider, model_requested, model_served, created_at,
        prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_nanos, unpriced
      FROM llm_requests WHERE created_at >= ? AND created_at < ? AND model_served = ? AND (? IS NULL OR provider = ?)
        AND (prompt_tokens IS NOT NULL OR completion_tokens IS NOT NULL)`).all(options.fromIso, toIso, options.model, provider, provider);
    if (options.maxRows !== undefined && rows.length > options.maxRows) throw new RepriceTooLargeError(rows.length, options.maxRows);

    const updates: RowUpdate[] = [];
    const rollupDeltas = new Map<string, { key: unknown[]; costNanos: number; unpriced: number }>();
    let before = 0;
    let after = 0;
    let unpricedRows = 0;
    for (const row of rows) {
      const price = row.provider === null ? null : book.priceFor(row.provider, row.model_served);
      const cost = book.costOf(price, {
        promptTokens: row.prompt_tokens ?? 0, completionTokens: row.completion_tokens ?? 0,
        cachedTokens: row.cached_tokens ?? 0, cacheWriteTokens: row.cache_write_tokens ?? 0,
      });
      const oldNanos = row.cost_nanos ?? 0;
      before += oldNanos;
      after += cost.totalNanos;
      const unpriced = cost.unpriced ? 1 : 0;
      unpricedRows += unpriced;
      if (cost.totalNanos === oldNanos && unpriced === row.unpriced) continue;
      updates.push({ id: row.id, costNanos: cost.totalNanos, unpriced, billedPrice: cost.price ? JSON.stringify(cost.price) : null });
      const key = [quarterOf(row.created_at), row.gateway_user_id ?? 0, row.provider ?? '', row.model_requested ?? '', row.model_served];
      const keyText = JSON.stringify(key);
      const rollup = rollupDeltas.get(keyText) ?? { key, costNanos: 0, unpriced: 0 };
      rollup.costNanos += cost.totalNanos - oldNanos;
      rollup.unpriced += unpriced - row.unpriced;
      rollupDeltas.set(keyText, rollup);
    }

    const spend = spendChanges(sqlite, rows, updates, options);
    if (!options.dryRun) {
      const updateRow = sqlite.prepare<[number, number, string | null, number]>(
        'UPDATE llm_requests SET cost_nanos = ?, unpriced = ?, billed_price = ? WHERE id = ?',
      );
      for (const update of updates) updateRow.run(update.costNanos, update.unpriced, update.billedPrice, update.id);
      const updateRollup = sqlite.prepare(`UPDATE usage_rollups SET cost_nanos = cost_nanos + ?, unpriced_requests = unpriced_requests + ?
        WHERE bucket_start = ? AND gateway_user_id = ? AND provider = ? AND model_requested = ? AND model_served = ?`);
      for (const delta of rollupDeltas.values()) updateRollup.run(delta.costNanos, delta.unpriced, ...delta.key);
      const updateSpend = sqlite.prepare<[number, string, number]>(
        'UPDATE gateway_users SET budget_spent_nanos = ?, budget_period_start = ? WHERE id = ?',
      );
      for (const change of spend) updateSpend.run(change.spent_after_nanos, change.period_start, change.user_id);
    }
    return {
      model: options.model, provider, from: options.fromIso, to: toIso, dry_run: options.dryRun,
      rows: rows.length, changed_rows: updates.length, unpriced_rows: unpricedRows,
      cost_before_nanos: before, cost_after_nanos: after, spend,
    };
  };
  // Immediate: no other writer (a gateway's log batch) slips between the reads and the writes.
  return sqlite.transaction(run).immediate();
}

/**
 * Each affected user's spend of their current budget period, before and after: moved by the cost
 * deltas of their changed rows created in that period. A spend stored for an earlier period counts
 * as 0 (the ledger's lazy rollover), so it restarts from the delta.
 */
function spendChanges(sqlite: Sqlite, rows: readonly LogRow[], updates: readonly RowUpdate[], options: RepriceOptions): RepricedSpend[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const users = sqlite.prepare<[number], { name: string; budget_period: BudgetPeriod; budget_spent_nanos: number; budget_period_start: string | null }>(
    'SELECT name, budget_period, budget_spent_nanos, budget_period_start FROM gateway_users WHERE id = ?',
  );
  const deltas = new Map<number, { delta: number; periodStart: string; user: NonNullable<ReturnType<typeof users.get>> }>();
  for (const update of updates) {
    const row = byId.get(update.id)!;
    if (row.gateway_user_id === null) continue;
    let entry = deltas.get(row.gateway_user_id);
    if (!entry) {
      const user = users.get(row.gateway_user_id);
      if (!user) continue;
      const window = budgetWindow(user.budget_period, options.nowMs, options.timeZone);
      entry = { delta: 0, periodStart: nowIso(window.startMs), user };
      deltas.set(row.gateway_user_id, entry);
    }
    if (row.created_at >= entry.periodStart) entry.delta += update.costNanos - (row.cost_nanos ?? 0);
  }
  const changes: RepricedSpend[] = [];
  for (const [userId, { delta, periodStart, user }] of deltas) {
    if (delta === 0) continue;
    const current = user.budget_period_start !== null && user.budget_period_start >= periodStart;
    const spentBefore = current ? user.budget_spent_nanos : 0;
    changes.push({
      user_id: userId, user_name: user.name, period_start: current ? user.budget_period_start! : periodStart,
      spent_before_nanos: spentBefore, spent_after_nanos: Math.max(0, spentBefore + delta),
    });
  }
  return changes.sort((a, b) => a.user_id - b.user_id);
}
