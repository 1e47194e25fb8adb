/**
 * What a re-pricing changes (`reprice.ts`), computed from the rows it read, with no database access:
 * both engines' runners (`reprice-sqlite.ts`, `reprice-postgres.ts`) read, plan here, then write.
 * Amounts are integer nano-USD (`cost.ts`).
 */
import { nowIso } from '../store/store.ts';
import type { PriceBook } from '../services.ts';
import type { BudgetPeriod } from '../store/db-types.ts';
import { budgetWindow } from './calendar-period.ts';
import { quarterOf } from '../request-log/usage-rollup-writer.ts';

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

/** The columns of a log row that re-pricing reads (the runners select exactly these). */
export const REPRICE_ROW_COLUMNS = [
  'id', 'gateway_user_id', 'provider', 'model_requested', 'model_served', 'created_at',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cache_write_tokens', 'cost_nanos', 'unpriced',
] as const;

/** A log row as re-pricing reads it. */
export interface RepriceRow {
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

/** A user as the spend correction reads them. */
export interface RepriceUser {
  id: number;
  name: string;
  budget_period: BudgetPeriod;
  budget_spent_nanos: number;
  budget_period_start: string | null;
}

export interface RowUpdate {
  id: number;
  costNanos: number;
  unpriced: number;
  billedPrice: string | null;
}

/** A cost and unpriced-count delta of one rollup row; `key` in primary-key order. */
export interface RollupDelta {
  key: [bucketStart: string, userId: number, provider: string, modelRequested: string, modelServed: string];
  costNanos: number;
  unpriced: number;
}

/** The row-level part of a plan: what changes in the log and the rollups. */
export interface RowPlan {
  updates: RowUpdate[];
  rollupDeltas: RollupDelta[];
  costBeforeNanos: number;
  costAfterNanos: number;
  unpricedRows: number;
}

/** Prices every row again with `book`; rows whose cost and priced state stay are left out of `updates`. */
export function planRows(rows: readonly RepriceRow[], book: PriceBook): RowPlan {
  const updates: RowUpdate[] = [];
  const deltas = new Map<string, RollupDelta>();
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
    const key: RollupDelta['key'] = [quarterOf(row.created_at), row.gateway_user_id ?? 0, row.provider ?? '', row.model_requested ?? '', row.model_served];
    const keyText = JSON.stringify(key);
    const delta = deltas.get(keyText) ?? { key, costNanos: 0, unpriced: 0 };
    delta.costNanos += cost.totalNanos - oldNanos;
    delta.unpriced += unpriced - row.unpriced;
    deltas.set(keyText, delta);
  }
  return { updates, rollupDeltas: [...deltas.values()], costBeforeNanos: before, costAfterNanos: after, unpricedRows };
}

/** The users whose spend may move: those of the changed rows, ascending (the order rows are locked in). */
export function affectedUserIds(rows: readonly RepriceRow[], updates: readonly RowUpdate[]): number[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const ids = new Set<number>();
  for (const update of updates) {
    const userId = byId.get(update.id)!.gateway_user_id;
    if (userId !== null) ids.add(userId);
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Each affected user's spend of their current budget period, before and after: moved by the cost
 * deltas of their changed rows created in that period. A spend stored for an earlier period counts
 * as 0 (the ledger's lazy rollover), so it restarts from the delta. Users absent from `users`
 * (deleted) are skipped.
 */
export function spendChanges(
  rows: readonly RepriceRow[], updates: readonly RowUpdate[], users: ReadonlyMap<number, RepriceUser>, options: RepriceOptions,
): RepricedSpend[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const deltas = new Map<number, { delta: number; periodStart: string; user: RepriceUser }>();
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

/** The result of a plan over `rows`. */
export function repriceResult(options: RepriceOptions, toIso: string, rows: number, plan: RowPlan, spend: RepricedSpend[]): RepriceResult {
  return {
    model: options.model, provider: options.provider ?? null, from: options.fromIso, to: toIso, dry_run: options.dryRun,
    rows, changed_rows: plan.updates.length, unpriced_rows: plan.unpricedRows,
    cost_before_nanos: plan.costBeforeNanos, cost_after_nanos: plan.costAfterNanos, spend,
  };
}
