/**
 * Usage over a time range, read from the quarter-hour rollups (`usage_rollups`, schema.sql v7) instead
 * of the whole log: the dashboard and `GET /api/account` sum a few thousand rollup rows whatever the
 * size of `llm_requests`.
 *
 * Why it is exact for any range: the whole quarter hours inside `[from, to)` come from the rollups;
 * the partial quarters at either end (at most 15 minutes each) come from `llm_requests` through its
 * `(created_at, id)` or `(gateway_user_id, created_at)` index, shaped like rollup rows. Ranges that
 * start at a local midnight (a day, a budget period) have no partial quarter: every time zone's offset
 * is a multiple of 15 minutes.
 */
import { sql, type RawBuilder } from 'kysely';
import { COUNTS_AS_ERROR_SQL } from './usage-rollup-writer.ts';

const QUARTER_MS = 15 * 60_000;
/** Later than any stored timestamp: an open upper bound. */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/**
 * The columns of a rollup-shaped row (sentinels: user 0, '' for no provider / model), each with the
 * expression that gives it from one `llm_requests` row (the same as `usage-rollup-writer.ts`).
 *
 * Written to mean the same on SQLite and PostgreSQL: comparisons are wrapped in CASE (a boolean is
 * not a number in PostgreSQL), and the quarter hour compares the two minute digits as text (bytes
 * on both: `created_at` is BINARY / COLLATE "C") instead of SQLite's `printf`.
 */
const RAW_AS_ROLLUP = {
  bucket_start: `substr(created_at, 1, 14) || CASE WHEN substr(created_at, 15, 2) < '15' THEN '00'
    WHEN substr(created_at, 15, 2) < '30' THEN '15' WHEN substr(created_at, 15, 2) < '45' THEN '30' ELSE '45' END || ':00.000Z'`,
  gateway_user_id: 'coalesce(gateway_user_id, 0)',
  provider: "coalesce(provider, '')",
  model_requested: "coalesce(model_requested, '')",
  model_served: "coalesce(model_served, '')",
  requests: '1',
  errors: COUNTS_AS_ERROR_SQL,
  prompt_tokens: 'coalesce(prompt_tokens, 0)',
  completion_tokens: 'coalesce(completion_tokens, 0)',
  cached_tokens: 'coalesce(cached_tokens, 0)',
  cost_nanos: 'coalesce(cost_nanos, 0)',
  ttft_count: 'CASE WHEN ttft_ms IS NOT NULL THEN 1 ELSE 0 END',
  unpriced_requests: 'unpriced',
  last_unpriced_at: 'CASE WHEN unpriced = 1 THEN created_at END',
} as const;

/** A column of the rollup-shaped rows. */
export type RollupColumn = keyof typeof RAW_AS_ROLLUP;
const ALL_COLUMNS = Object.keys(RAW_AS_ROLLUP) as RollupColumn[];

/** A range of usage; absent bounds are open. Timestamps ISO-8601 UTC with ms, as stored; `toIso` exclusive. */
export interface UsageRange {
  fromIso?: string;
  toIso?: string;
  /** Only this gateway user's usage. */
  userId?: number;
}

/**
 * A subquery of rollup-shaped rows covering exactly a range, for `FROM (${source}) AS u` inside a
 * Kysely `sql` template (PostgreSQL requires the alias); its placeholders compile per dialect.
 */
export type UsageSource = RawBuilder<unknown>;

/** `iso` rounded up (`up`) or down to a quarter hour, as stored. */
function quarter(iso: string, up: boolean): string {
  const ms = Date.parse(iso);
  const floor = Math.floor(ms / QUARTER_MS) * QUARTER_MS;
  return new Date(up && floor < ms ? floor + QUARTER_MS : floor).toISOString();
}

/**
 * The usage rows of `range`: whole quarters from `usage_rollups`, the partial quarters at its ends
 * from `llm_requests` (each arm filtered by user first, so SQLite uses the user indexes). The same SQL
 * on SQLite and PostgreSQL.
 *
 * `columns` (default all) are the only ones the subquery yields: SQLite does not prune a compound
 * subquery's columns, and the few a caller needs can come from a covering index (`usage_rollups_by_user`
 * holds the request, token and cost columns: a user's month is an index range, 5× faster than with
 * table lookups).
 */
export function usageSource(range: UsageRange, columns: readonly RollupColumn[] = ALL_COLUMNS): UsageSource {
  const from = range.fromIso ?? '';
  const to = range.toIso ?? END_OF_TIME;
  let wholeFrom = range.fromIso === undefined ? '' : quarter(range.fromIso, true);
  let wholeTo = range.toIso === undefined ? END_OF_TIME : quarter(range.toIso, false);
  // Inside one quarter: no whole quarter; the raw arm covers it all.
  if (wholeFrom > wholeTo) wholeFrom = wholeTo = to;
  const user = range.userId === undefined ? sql`` : sql`gateway_user_id = ${range.userId} AND `;
  const raw = sql.raw(`SELECT ${columns.map((column) => `${RAW_AS_ROLLUP[column]} AS ${column}`).join(', ')} FROM llm_requests`);
  return sql`SELECT ${sql.raw(columns.join(', '))} FROM usage_rollups WHERE ${user}bucket_start >= ${wholeFrom} AND bucket_start < ${wholeTo}
    UNION ALL ${raw} WHERE ${user}created_at >= ${from} AND created_at < ${wholeFrom}
    UNION ALL ${raw} WHERE ${user}created_at >= ${wholeTo} AND created_at < ${to}`;
}
