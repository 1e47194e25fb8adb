/**
 * Adds log rows to `usage_rollups` (schema.sql v9) from the writer, one upsert per rollup key and
 * batch instead of the per-row trigger it replaced (schema.sql v11): at 1,500 requests/s a 50 ms
 * batch holds ~75 rows but only a handful of keys (user × provider × model × quarter hour), and the
 * trigger's upsert cost ~32 µs per row, most of the log write. The same transaction as the rows, so
 * rollups and the log never disagree. SQLite: one prepared upsert per key (`createRollupWriter`);
 * PostgreSQL: one multi-row upsert per batch (`addToRollupsPostgres`), the same sums.
 */
import { sql, type Kysely } from 'kysely';
import type { Sqlite, Store } from '../store/store.ts';
import type { Database } from '../store/db-types.ts';
import type { RequestLogRow } from './request-log-row.ts';

/** The sums of one rollup key; the same expressions as the backfill in schema.sql v9. */
interface RollupDelta {
  bucketStart: string;
  userId: number;
  provider: string;
  modelRequested: string;
  modelServed: string;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costNanos: number;
  ttftCount: number;
  unpricedRequests: number;
  lastUnpricedAt: string | null;
}

/**
 * Which log rows count as errors in the rollups, hence on the dashboard (docs/admin-api.md
 * "Dashboard"): what the gateway or an upstream failed, not the client's own request. A status of 500
 * or more (the gateway's faults, and an upstream's: no answer, a timeout, a 5xx, 502/503/504), or a
 * 401, 402, 403 or 429 that came from an upstream (the row has attempts): it refused the gateway's
 * key, its account or its rate. Refusals of the request itself are not errors: an invalid request
 * (400, 404, 413, ...), a missing or revoked Tollgate key (401, 403), a budget (402) or rate limit
 * (429) of the gateway, an upstream's 400 or 404, and a client that hung up (499).
 */
export function countsAsError(status: number, attempts: string | null | undefined): boolean {
  return status >= 500 || (attempts != null && (status === 401 || status === 402 || status === 403 || status === 429));
}

/** `countsAsError` in SQL over an `llm_requests` row (either engine): 1 or 0. */
export const COUNTS_AS_ERROR_SQL = 'CASE WHEN status >= 500 OR (attempts IS NOT NULL AND status IN (401, 402, 403, 429)) THEN 1 ELSE 0 END';

/** The UTC quarter hour `createdAtIso` (`YYYY-MM-DDTHH:MM:SS.sssZ`, as stored) falls in, as stored. */
export function quarterOf(createdAtIso: string): string {
  const minute = Math.floor(Number(createdAtIso.slice(14, 16)) / 15) * 15;
  return `${createdAtIso.slice(0, 14)}${minute < 10 ? '0' : ''}${minute}:00.000Z`;
}

/** `rows` (as inserted: a detached user is null, i.e. user 0) summed per rollup key. */
function sumRollups(rows: readonly RequestLogRow[]): Iterable<RollupDelta> {
  const sums = new Map<string, RollupDelta>();
  for (const row of rows) {
    const bucketStart = quarterOf(row.created_at);
    const userId = row.gateway_user_id ?? 0;
    const provider = row.provider ?? '';
    const modelRequested = row.model_requested ?? '';
    const modelServed = row.model_served ?? '';
    // NUL does not occur in these values as the gateway writes them, so the key is unambiguous.
    const key = `${bucketStart}\0${userId}\0${provider}\0${modelRequested}\0${modelServed}`;
    let d = sums.get(key);
    if (!d) {
      d = { bucketStart, userId, provider, modelRequested, modelServed, requests: 0, errors: 0, promptTokens: 0,
        completionTokens: 0, cachedTokens: 0, costNanos: 0, ttftCount: 0, unpricedRequests: 0, lastUnpricedAt: null };
      sums.set(key, d);
    }
    d.requests++;
    if (countsAsError(row.status, row.attempts)) d.errors++;
    d.promptTokens += row.prompt_tokens ?? 0;
    d.completionTokens += row.completion_tokens ?? 0;
    d.cachedTokens += row.cached_tokens ?? 0;
    d.costNanos += row.cost_nanos ?? 0;
    if (row.ttft_ms != null) d.ttftCount++;
    if (row.unpriced) {
      d.unpricedRequests++;
      if (d.lastUnpricedAt === null || row.created_at > d.lastUnpricedAt) d.lastUnpricedAt = row.created_at;
    }
  }
  return sums.values();
}

/**
 * Returns `addToRollups(rows)`: sums `rows` (as inserted: a detached user is null, i.e. user 0) per
 * rollup key and upserts each sum. Call it inside the rows' transaction; it keeps no state between
 * calls, so a rolled-back batch leaves nothing behind.
 */
export function createRollupWriter(sqlite: Sqlite): (rows: readonly RequestLogRow[]) => void {
  const upsert = sqlite.prepare(`INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested,
      model_served, requests, errors, prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count,
      unpriced_requests, last_unpriced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, errors = errors + excluded.errors,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
      cached_tokens = cached_tokens + excluded.cached_tokens, cost_nanos = cost_nanos + excluded.cost_nanos,
      ttft_count = ttft_count + excluded.ttft_count, unpriced_requests = unpriced_requests + excluded.unpriced_requests,
      last_unpriced_at = nullif(max(coalesce(last_unpriced_at, ''), coalesce(excluded.last_unpriced_at, '')), '')`);
  return (rows) => {
    for (const d of sumRollups(rows)) {
      upsert.run(d.bucketStart, d.userId, d.provider, d.modelRequested, d.modelServed, d.requests, d.errors, d.promptTokens,
        d.completionTokens, d.cachedTokens, d.costNanos, d.ttftCount, d.unpricedRequests, d.lastUnpricedAt);
    }
  };
}

/**
 * Adds `rows` to `usage_rollups` on PostgreSQL: the same sums as `createRollupWriter`, one upsert
 * statement for the whole batch (every key once, so no row is updated twice by it). Run it on the
 * rows' transaction.
 */
export async function addToRollupsPostgres(trx: Kysely<Database>, rows: readonly RequestLogRow[]): Promise<void> {
  const values = [...sumRollups(rows)].map((d) => ({
    bucket_start: d.bucketStart, gateway_user_id: d.userId, provider: d.provider, model_requested: d.modelRequested,
    model_served: d.modelServed, requests: d.requests, errors: d.errors, prompt_tokens: d.promptTokens,
    completion_tokens: d.completionTokens, cached_tokens: d.cachedTokens, cost_nanos: d.costNanos, ttft_count: d.ttftCount,
    unpriced_requests: d.unpricedRequests, last_unpriced_at: d.lastUnpricedAt,
  }));
  if (values.length === 0) return;
  // In DO UPDATE the table's own columns must be qualified (PostgreSQL).
  const add = (column: string) => sql<number>`${sql.ref(`usage_rollups.${column}`)} + ${sql.ref(`excluded.${column}`)}`;
  await trx.insertInto('usage_rollups').values(values)
    .onConflict((oc) => oc.columns(['bucket_start', 'gateway_user_id', 'provider', 'model_requested', 'model_served']).doUpdateSet({
      requests: add('requests'), errors: add('errors'), prompt_tokens: add('prompt_tokens'),
      completion_tokens: add('completion_tokens'), cached_tokens: add('cached_tokens'), cost_nanos: add('cost_nanos'),
      ttft_count: add('ttft_count'), unpriced_requests: add('unpriced_requests'),
      last_unpriced_at: sql<string | null>`nullif(greatest(coalesce(usage_rollups.last_unpriced_at, ''), coalesce(excluded.last_unpriced_at, '')), '')`,
    }))
    .execute();
}

/** The quarter hour of `created_at` (`YYYY-MM-DDTHH:MM:…`), as `quarterOf` computes it, per engine. */
const QUARTER_SQL = {
  sqlite: `substr(created_at, 1, 14) || printf('%02d', (CAST(substr(created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z'`,
  postgres: `substr(created_at, 1, 14) || lpad(((CAST(substr(created_at, 15, 2) AS integer) / 15) * 15)::text, 2, '0') || ':00.000Z'`,
} as const;

/**
 * Rebuilds `usage_rollups` from `llm_requests` (the same GROUP BY as schema.sql v9's backfill), in one
 * transaction: for rows written to the log by other means than the writer (tests, imports).
 */
export async function rebuildUsageRollups(store: Store): Promise<void> {
  const quarter = sql.raw(QUARTER_SQL[store.engine]);
  await store.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('usage_rollups').execute();
    await sql`INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
        prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
      SELECT ${quarter},
        coalesce(gateway_user_id, 0), coalesce(provider, ''), coalesce(model_requested, ''), coalesce(model_served, ''),
        count(*), sum(${sql.raw(COUNTS_AS_ERROR_SQL)}), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
        coalesce(sum(cached_tokens), 0), coalesce(sum(cost_nanos), 0), count(ttft_ms), sum(unpriced),
        max(CASE WHEN unpriced = 1 THEN created_at END)
      FROM llm_requests GROUP BY 1, 2, 3, 4, 5`.execute(trx);
  });
}
