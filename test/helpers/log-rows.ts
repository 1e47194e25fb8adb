/**
 * Log rows crafted by tests, written the way the gateway writes them: with their sums added to
 * `usage_rollups` in the same transaction. On SQLite through the write-behind queue's SQLite target;
 * on PostgreSQL through `store.db` (an insert and one rollup upsert per row, the writer's sums).
 */
import { sql, type Selectable } from 'kysely';
import type { LlmRequestsTable } from '../../core/store/db-types.ts';
import { openTestStore } from './test-store.ts';
import type { Store } from '../../core/store/store.ts';
import { createSqliteWriteTarget } from '../../core/request-log/write-target-sqlite.ts';
import { countsAsError, quarterOf } from '../../core/request-log/usage-rollup-writer.ts';
import type { RequestLogRow } from '../../core/request-log/request-log-row.ts';

let seq = 0;

/** `rows` over defaults (a 200 from openai/m1 now, 10 + 5 tokens, 1,000 nanos); one transaction. */
export async function writeLogRows(store: Store, rows: ReadonlyArray<Partial<RequestLogRow>>): Promise<void> {
  const full = rows.map((fields): RequestLogRow => ({
    request_id: `req_crafted_${process.pid}_${++seq}`, gateway_user_id: null, api_key_id: null, provider: 'openai',
    model_requested: 'm1', model_served: 'm1', status: 200, error_code: null, prompt_tokens: 10, completion_tokens: 5,
    cached_tokens: null, latency_ms: 100, ttft_ms: null, stream: 0, created_at: new Date().toISOString(),
    cache_write_tokens: null, cost_nanos: 1000, usage_estimated: 0, unpriced: 0, endpoint: 'chat.completions', attempts: null,
    usage_reported: null, billed_price: null, error_plugin: null, plugin_fields: null, tags: null, upstream_key: null,
    ...fields,
  }));
  if (store.engine === 'sqlite') {
    createSqliteWriteTarget(store).writeBatch(full.map((row) => ({ kind: 'request' as const, group: row.request_id, row })));
    return;
  }
  await store.db.transaction().execute(async (trx) => {
    // Batches keep each insert under PostgreSQL's 65,535 parameters.
    for (let i = 0; i < full.length; i += 1000) await trx.insertInto('llm_requests').values(full.slice(i, i + 1000)).execute();
    for (const row of full) {
      await sql`INSERT INTO usage_rollups AS t (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
          prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
        VALUES (${quarterOf(row.created_at)}, ${row.gateway_user_id ?? 0}, ${row.provider ?? ''}, ${row.model_requested ?? ''},
          ${row.model_served ?? ''}, 1, ${countsAsError(row.status, row.attempts) ? 1 : 0}, ${row.prompt_tokens ?? 0}, ${row.completion_tokens ?? 0},
          ${row.cached_tokens ?? 0}, ${row.cost_nanos ?? 0}, ${row.ttft_ms == null ? 0 : 1}, ${row.unpriced ? 1 : 0},
          ${row.unpriced ? row.created_at : null})
        ON CONFLICT (bucket_start, gateway_user_id, provider, model_requested, model_served) DO UPDATE SET
          requests = t.requests + 1, errors = t.errors + excluded.errors, prompt_tokens = t.prompt_tokens + excluded.prompt_tokens,
          completion_tokens = t.completion_tokens + excluded.completion_tokens, cached_tokens = t.cached_tokens + excluded.cached_tokens,
          cost_nanos = t.cost_nanos + excluded.cost_nanos, ttft_count = t.ttft_count + excluded.ttft_count,
          unpriced_requests = t.unpriced_requests + excluded.unpriced_requests,
          last_unpriced_at = greatest(t.last_unpriced_at, excluded.last_unpriced_at)`.execute(trx);
    }
  });
}

/**
 * The `llm_requests` row of `requestId` in the gateway whose data dir is `dataDir`, once its background
 * logger wrote it (polled; the test's own timeout bounds the wait).
 */
export async function waitForLogRow(dataDir: string, requestId: string): Promise<Selectable<LlmRequestsTable>> {
  const store = await openTestStore(dataDir);
  try {
    for (;;) {
      const row = await store.db.selectFrom('llm_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst();
      if (row) return row;
      await new Promise((r) => setTimeout(r, 30));
    }
  } finally {
    await store.close();
  }
}
