/**
 * Log rows crafted by tests, written the way the gateway writes them: through the SQLite write target
 * of the write-behind queue, so `usage_rollups` gets them in the same transaction.
 */
import type { Store } from '../../core/db.ts';
import { createSqliteWriteTarget } from '../../core/sqlite-write-target.ts';
import type { RequestLogRow } from '../../core/request-log-row.ts';

let seq = 0;

/** `rows` over defaults (a 200 from openai/m1 now, 10 + 5 tokens, 1,000 nanos); one transaction. */
export function writeLogRows(store: Store, rows: ReadonlyArray<Partial<RequestLogRow>>): void {
  const full = rows.map((fields): RequestLogRow => ({
    request_id: `req_crafted_${process.pid}_${++seq}`, gateway_user_id: null, api_key_id: null, provider: 'openai',
    model_requested: 'm1', model_served: 'm1', status: 200, error_code: null, prompt_tokens: 10, completion_tokens: 5,
    cached_tokens: null, latency_ms: 100, ttft_ms: null, stream: 0, created_at: new Date().toISOString(),
    cache_write_tokens: null, cost_nanos: 1000, usage_estimated: 0, unpriced: 0, endpoint: 'chat.completions', attempts: null,
    usage_reported: null, billed_price: null,
    ...fields,
  }));
  createSqliteWriteTarget(store).writeBatch(full.map((row) => ({ kind: 'request' as const, group: row.request_id, row })));
}
