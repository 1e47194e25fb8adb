/**
 * Adds log rows to `usage_rollups` (schema.sql v9) from the writer, one upsert per rollup key and
 * batch instead of the per-row trigger it replaced (schema.sql v11): at 1,500 requests/s a 50 ms
 * batch holds ~75 rows but only a handful of keys (user × provider × model × quarter hour), and the
 * trigger's upsert cost ~32 µs per row, most of the log write. The same transaction as the rows, so
 * rollups and the log never disagree.
 */
import type { Sqlite } from './db.ts';
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

/** The UTC quarter hour `createdAtIso` (`YYYY-MM-DDTHH:MM:SS.sssZ`, as stored) falls in, as stored. */
export function quarterOf(createdAtIso: string): string {
  const minute = Math.floor(Number(createdAtIso.slice(14, 16)) / 15) * 15;
  return `${createdAtIso.slice(0, 14)}${minute < 10 ? '0' : ''}${minute}:00.000Z`;
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
      if (row.status >= 400) d.errors++;
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
    for (const d of sums.values()) {
      upsert.run(d.bucketStart, d.userId, d.provider, d.modelRequested, d.modelServed, d.requests, d.errors, d.promptTokens,
        d.completionTokens, d.cachedTokens, d.costNanos, d.ttftCount, d.unpricedRequests, d.lastUnpricedAt);
    }
  };
}

/**
 * Rebuilds `usage_rollups` from `llm_requests` (the same GROUP BY as schema.sql v9's backfill), in one
 * transaction: for rows written to the log by other means than the writer (tests, imports).
 */
export function rebuildUsageRollups(sqlite: Sqlite): void {
  sqlite.transaction(() => {
    sqlite.exec(`DELETE FROM usage_rollups;
      INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
        prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
      SELECT substr(created_at, 1, 14) || printf('%02d', (CAST(substr(created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z',
        coalesce(gateway_user_id, 0), coalesce(provider, ''), coalesce(model_requested, ''), coalesce(model_served, ''),
        count(*), sum(status >= 400), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
        coalesce(sum(cached_tokens), 0), coalesce(sum(cost_nanos), 0), count(ttft_ms), sum(unpriced),
        max(CASE WHEN unpriced = 1 THEN created_at END)
      FROM llm_requests GROUP BY 1, 2, 3, 4, 5;`);
  })();
}
