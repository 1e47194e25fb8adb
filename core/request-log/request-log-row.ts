/**
 * The shape of one `llm_requests` row as the logger builds it and the write-behind queue persists it
 * (`write-behind.ts`): every column but the generated `id`, in the insert statement's order.
 */
import type { NewLlmRequest } from '../store/db-types.ts';

/** Every column the writer fills, in statement order. */
export const REQUEST_LOG_COLUMNS = [
  'request_id', 'gateway_user_id', 'api_key_id', 'provider', 'model_requested', 'model_served', 'status',
  'error_code', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'latency_ms', 'ttft_ms', 'stream', 'created_at',
  'cache_write_tokens', 'cost_nanos', 'usage_estimated', 'unpriced', 'endpoint', 'attempts', 'usage_reported', 'billed_price',
  'error_plugin', 'plugin_fields', 'tags', 'team_id', 'upstream_key',
] as const satisfies ReadonlyArray<keyof NewLlmRequest>;

/**
 * One log row: token counts and latencies are integers (ms), `cost_nanos` integer nano-USD, flags 0/1.
 * `team_id` (schema v23) may be left out: null (rows built before teams existed, tools, tests).
 */
export type RequestLogRow = { [K in Exclude<(typeof REQUEST_LOG_COLUMNS)[number], 'team_id'>]: NewLlmRequest[K] } & { team_id?: number | null };

/**
 * A row's values in `REQUEST_LOG_COLUMNS` order, for the positional insert. Spelled out rather than
 * `REQUEST_LOG_COLUMNS.map((c) => row[c])`: a lookup by a varying key costs ~0.5 µs a row where
 * these fixed ones cost next to nothing (a test checks the order against the list).
 */
export function requestLogValues(row: RequestLogRow): unknown[] {
  return [
    row.request_id, row.gateway_user_id, row.api_key_id, row.provider, row.model_requested, row.model_served, row.status,
    row.error_code, row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.latency_ms, row.ttft_ms, row.stream, row.created_at,
    row.cache_write_tokens, row.cost_nanos, row.usage_estimated, row.unpriced, row.endpoint, row.attempts, row.usage_reported, row.billed_price,
    row.error_plugin, row.plugin_fields, row.tags, row.team_id ?? null, row.upstream_key,
  ];
}
