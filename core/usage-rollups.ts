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
const QUARTER_MS = 15 * 60_000;
/** Later than any stored timestamp: an open upper bound. */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';

/** Columns of a rollup-shaped row (sentinels: user 0, '' for no provider / model). */
const COLUMNS = 'bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors, prompt_tokens, '
  + 'completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at';

/** One `llm_requests` row as a rollup row (the same expressions as `usage-rollup-writer.ts`). */
const RAW_AS_ROLLUP = `SELECT
    substr(created_at, 1, 14) || printf('%02d', (CAST(substr(created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z' AS bucket_start,
    coalesce(gateway_user_id, 0) AS gateway_user_id, coalesce(provider, '') AS provider,
    coalesce(model_requested, '') AS model_requested, coalesce(model_served, '') AS model_served,
    1 AS requests, status >= 400 AS errors, coalesce(prompt_tokens, 0) AS prompt_tokens,
    coalesce(completion_tokens, 0) AS completion_tokens, coalesce(cached_tokens, 0) AS cached_tokens,
    coalesce(cost_nanos, 0) AS cost_nanos, ttft_ms IS NOT NULL AS ttft_count, unpriced AS unpriced_requests,
    CASE WHEN unpriced = 1 THEN created_at END AS last_unpriced_at
  FROM llm_requests`;

/** A range of usage; absent bounds are open. Timestamps ISO-8601 UTC with ms, as stored; `toIso` exclusive. */
export interface UsageRange {
  fromIso?: string;
  toIso?: string;
  /** Only this gateway user's usage. */
  userId?: number;
}

/** A subquery (for `FROM (…) AS alias`) of rollup-shaped rows covering exactly `range`, with its parameters. */
export interface UsageSource {
  sql: string;
  params: unknown[];
}

/** `iso` rounded up (`up`) or down to a quarter hour, as stored. */
function quarter(iso: string, up: boolean): string {
  const ms = Date.parse(iso);
  const floor = Math.floor(ms / QUARTER_MS) * QUARTER_MS;
  return new Date(up && floor < ms ? floor + QUARTER_MS : floor).toISOString();
}

/**
 * The usage rows of `range`: whole quarters from `usage_rollups`, the partial quarters at its ends
 * from `llm_requests` (each arm filtered by user first, so SQLite uses the user indexes).
 */
export function usageSource(range: UsageRange): UsageSource {
  const from = range.fromIso ?? '';
  const to = range.toIso ?? END_OF_TIME;
  let wholeFrom = range.fromIso === undefined ? '' : quarter(range.fromIso, true);
  let wholeTo = range.toIso === undefined ? END_OF_TIME : quarter(range.toIso, false);
  // Inside one quarter: no whole quarter; the raw arm covers it all.
  if (wholeFrom > wholeTo) wholeFrom = wholeTo = to;
  const user = range.userId === undefined ? '' : 'gateway_user_id = ? AND ';
  const userParam = range.userId === undefined ? [] : [range.userId];
  const sql = `SELECT ${COLUMNS} FROM usage_rollups WHERE ${user}bucket_start >= ? AND bucket_start < ?
    UNION ALL ${RAW_AS_ROLLUP} WHERE ${user}created_at >= ? AND created_at < ?
    UNION ALL ${RAW_AS_ROLLUP} WHERE ${user}created_at >= ? AND created_at < ?`;
  return {
    sql,
    params: [...userParam, wholeFrom, wholeTo, ...userParam, from, wholeFrom, ...userParam, wholeTo, to],
  };
}
