/**
 * The ledger's side of a reconciliation: what Tollgate logged per UTC day × provider × model, summed
 * from `llm_requests` (the rollups keep no cache-write tokens) over an index range of
 * `llm_requests_by_time`. Only rows that reached an upstream count (`attempts` is set): a request the
 * gateway refused itself never reached the provider's report.
 *
 * Token kinds are canonical, as the report's (`usage-report-source.ts`): `prompt_tokens` includes
 * cached and cache-write tokens. The model is the one the upstream said it served (`model_served`),
 * which is how the providers' reports name it. The same SQL runs on SQLite and PostgreSQL.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { nextDay } from './report-pages.ts';
import type { DayRange } from './usage-report-source.ts';

/** The ledger's sums for one day × provider × model. Money in integer nano-USD. */
export interface LedgerUsage {
  day: string;
  provider: string;
  model: string;
  /** Rows the provider answered (status < 400), or that were billed tokens (a stream cut mid-way). */
  requests: number;
  /** Rows that reached the provider and failed (status >= 400). */
  failedRequests: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  costNanos: number;
}

interface SumRow {
  day: string;
  provider: string;
  model: string;
  requests: number | string;
  failed_requests: number | string;
  input_tokens: number | string | null;
  cached_input_tokens: number | string | null;
  cache_write_tokens: number | string | null;
  output_tokens: number | string | null;
  cost_nanos: number | string | null;
}

/** The ledger's sums over `range` (UTC days, inclusive) for `providers` (all when empty), ordered by day, provider, model. */
export async function ledgerUsage(db: Kysely<Database>, range: DayRange, providers: readonly string[] = []): Promise<LedgerUsage[]> {
  const from = `${range.fromDay}T00:00:00.000Z`;
  const to = `${nextDay(range.toDay)}T00:00:00.000Z`;
  const only = providers.length > 0 ? sql`AND provider IN (${sql.join([...providers])})` : sql``;
  const { rows } = await sql<SumRow>`
    SELECT substr(created_at, 1, 10) AS day, provider, coalesce(model_served, model_requested, '') AS model,
      sum(CASE WHEN status < 400 OR coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) > 0 THEN 1 ELSE 0 END) AS requests,
      sum(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS failed_requests,
      sum(coalesce(prompt_tokens, 0)) AS input_tokens, sum(coalesce(cached_tokens, 0)) AS cached_input_tokens,
      sum(coalesce(cache_write_tokens, 0)) AS cache_write_tokens, sum(coalesce(completion_tokens, 0)) AS output_tokens,
      sum(coalesce(cost_nanos, 0)) AS cost_nanos
    FROM llm_requests
    WHERE created_at >= ${from} AND created_at < ${to} AND attempts IS NOT NULL AND provider IS NOT NULL ${only}
    GROUP BY substr(created_at, 1, 10), provider, coalesce(model_served, model_requested, '')
    ORDER BY 1, 2, 3`.execute(db);
  // PostgreSQL sums bigints as numeric (text in node-postgres): every sum is read as a number.
  return rows.map((row) => ({
    day: row.day, provider: row.provider, model: row.model,
    requests: Number(row.requests), failedRequests: Number(row.failed_requests),
    inputTokens: Number(row.input_tokens ?? 0), cachedInputTokens: Number(row.cached_input_tokens ?? 0),
    cacheWriteTokens: Number(row.cache_write_tokens ?? 0), outputTokens: Number(row.output_tokens ?? 0),
    costNanos: Number(row.cost_nanos ?? 0),
  }));
}

/** The ledger's sums for one day × provider × model × upstream credential (its fingerprint). */
export interface LedgerKeyUsage {
  day: string;
  provider: string;
  model: string;
  /** The fingerprint of the credential that served (`llm_requests.upstream_key`, `…a1b2`). */
  upstreamKey: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Integer nano-USD. */
  costNanos: number;
}

/**
 * The ledger's sums over `range` for `provider` per upstream credential (rows logged before schema
 * v25, or that reached no upstream, have none and are left out), ordered by day, model, key.
 */
export async function ledgerUsageByKey(db: Kysely<Database>, range: DayRange, provider: string): Promise<LedgerKeyUsage[]> {
  const { rows } = await sql<{ day: string; model: string; upstream_key: string; requests: number | string; input_tokens: number | string | null; output_tokens: number | string | null; cost_nanos: number | string | null }>`
    SELECT substr(created_at, 1, 10) AS day, coalesce(model_served, model_requested, '') AS model, upstream_key,
      sum(CASE WHEN status < 400 OR coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) > 0 THEN 1 ELSE 0 END) AS requests,
      sum(coalesce(prompt_tokens, 0)) AS input_tokens, sum(coalesce(completion_tokens, 0)) AS output_tokens, sum(coalesce(cost_nanos, 0)) AS cost_nanos
    FROM llm_requests
    WHERE created_at >= ${`${range.fromDay}T00:00:00.000Z`} AND created_at < ${`${nextDay(range.toDay)}T00:00:00.000Z`}
      AND attempts IS NOT NULL AND provider = ${provider} AND upstream_key IS NOT NULL
    GROUP BY substr(created_at, 1, 10), coalesce(model_served, model_requested, ''), upstream_key
    ORDER BY 1, 2, 3`.execute(db);
  return rows.map((row) => ({
    day: row.day, provider, model: row.model, upstreamKey: row.upstream_key, requests: Number(row.requests),
    inputTokens: Number(row.input_tokens ?? 0), outputTokens: Number(row.output_tokens ?? 0), costNanos: Number(row.cost_nanos ?? 0),
  }));
}
