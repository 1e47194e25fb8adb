/**
 * OpenAI's usage and cost reports, read with an organization admin key (`sk-admin-...`):
 * - `GET /v1/organization/usage/completions` and `/usage/embeddings`: daily buckets (`bucket_width=1d`,
 *   `start_time`/`end_time` unix seconds, end exclusive) of results grouped by `model`, `api_key_id`,
 *   `project_id`: `input_tokens` (cached and cache-write tokens included), `input_cached_tokens`,
 *   `input_cache_write_tokens` (30-minute retention) and `input_cache_write_12h_tokens` (12-hour), both
 *   optional and absent from older reports, `output_tokens`, `num_model_requests`.
 * - `GET /v1/organization/costs`: daily buckets of `{amount: {value, currency}, line_item, project_id}`
 *   grouped by `line_item` and `project_id`; a model's line items read `"<model>, input"`,
 *   `"<model>, cached input"`, `"<model>, output"`.
 * Every endpoint pages with `page` / `has_more` / `next_page` (`report-pages.ts`).
 * Source: platform.openai.com/docs/api-reference/usage (the `UsageCompletionsResult` schema of OpenAI's
 * OpenAPI document) and /costs; the OpenAI cookbook's
 * "How to use the Usage API and Cost API".
 */
import { decimalToNanos } from './decimal-nanos.ts';
import { dayOf, dayStartSec, fetchAllPages, nextDay } from './report-pages.ts';
import {
  ReportFetchError, type DayRange, type ReportCredential, type ReportedCost, type ReportedUsage, type TokenKind, type UsageReport, type UsageReportSource,
} from './usage-report-source.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Daily buckets per page: the API's most for `bucket_width=1d`. */
const BUCKETS_PER_PAGE = '31';

interface Bucket<R> {
  start_time: number;
  results?: R[];
}

interface UsageResult {
  model?: string | null;
  api_key_id?: string | null;
  project_id?: string | null;
  input_tokens?: number;
  input_cached_tokens?: number;
  input_cache_write_tokens?: number | null;
  input_cache_write_12h_tokens?: number | null;
  output_tokens?: number;
  num_model_requests?: number;
}

interface CostResult {
  amount?: { value?: number | string; currency?: string };
  line_item?: string | null;
  project_id?: string | null;
}

/** The token kind of a line item's suffix (`"gpt-4o, cached input"`). */
const LINE_KINDS: Readonly<Record<string, TokenKind>> = { input: 'input', 'cached input': 'cached_input', output: 'output' };

/** OpenAI's reports as a `UsageReportSource`. */
export function createOpenAiUsageReport(credential: ReportCredential, options: { timeoutMs: number }): UsageReportSource {
  const base = (credential.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${credential.adminKey}` };
  return {
    kind: 'openai',
    async fetch(range: DayRange, signal?: AbortSignal): Promise<UsageReport> {
      const window = { start_time: String(dayStartSec(range.fromDay)), end_time: String(dayStartSec(nextDay(range.toDay))), bucket_width: '1d', limit: BUCKETS_PER_PAGE };
      const grouped = { ...window, group_by: ['model', 'api_key_id', 'project_id'] };
      const [completions, embeddings, costs] = await Promise.all([
        fetchAllPages<Bucket<UsageResult>>(`${base}/organization/usage/completions`, grouped, headers, options.timeoutMs, signal),
        fetchAllPages<Bucket<UsageResult>>(`${base}/organization/usage/embeddings`, grouped, headers, options.timeoutMs, signal),
        fetchAllPages<Bucket<CostResult>>(`${base}/organization/costs`, { ...window, group_by: ['line_item', 'project_id'] }, headers, options.timeoutMs, signal),
      ]);
      const daysCovered = new Set<string>();
      const usage: ReportedUsage[] = [];
      for (const bucket of [...completions, ...embeddings]) {
        const day = dayOf(bucket.start_time);
        daysCovered.add(day);
        for (const result of bucket.results ?? []) usage.push(usageOf(day, result));
      }
      const reportedCosts: ReportedCost[] = [];
      for (const bucket of costs) {
        const day = dayOf(bucket.start_time);
        daysCovered.add(day);
        for (const result of bucket.results ?? []) reportedCosts.push(costOf(day, result));
      }
      return { usage, costs: reportedCosts, daysCovered };
    },
  };
}

function usageOf(day: string, result: UsageResult): ReportedUsage {
  return {
    day,
    model: result.model ?? '',
    apiKeyId: result.api_key_id ?? null,
    projectId: result.project_id ?? null,
    requests: count(result.num_model_requests),
    inputTokens: count(result.input_tokens),
    cachedInputTokens: count(result.input_cached_tokens),
    cacheWriteTokens: count(result.input_cache_write_tokens) + count(result.input_cache_write_12h_tokens),
    outputTokens: count(result.output_tokens),
  };
}

function costOf(day: string, result: CostResult): ReportedCost {
  const value = result.amount?.value;
  if (value === undefined) throw new ReportFetchError('/organization/costs answered a result without amount.value');
  if (result.amount?.currency && result.amount.currency.toLowerCase() !== 'usd') {
    throw new ReportFetchError(`/organization/costs answered an amount in ${result.amount.currency}; only USD is reconciled`);
  }
  const lineItem = result.line_item ?? '';
  const comma = lineItem.lastIndexOf(', ');
  const kind = comma === -1 ? undefined : LINE_KINDS[lineItem.slice(comma + 2)];
  return {
    day,
    model: kind ? lineItem.slice(0, comma) : null,
    lineItem,
    tokenKind: kind ?? null,
    projectId: result.project_id ?? null,
    costNanos: decimalToNanos(value, 9),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}
