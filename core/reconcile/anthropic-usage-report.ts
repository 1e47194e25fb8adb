/**
 * Anthropic's Usage and Cost Admin API, read with an admin key (`sk-ant-admin...`, header `x-api-key`,
 * plus `anthropic-version`):
 * - `GET /v1/organizations/usage_report/messages`: daily buckets (`bucket_width=1d`, `starting_at` /
 *   `ending_at` RFC 3339) of results grouped by `model`, `api_key_id`, `workspace_id`:
 *   `uncached_input_tokens`, `cache_read_input_tokens`, `cache_creation.ephemeral_5m_input_tokens` and
 *   `ephemeral_1h_input_tokens`, `output_tokens` (and `server_tool_use`). It counts no requests.
 * - `GET /v1/organizations/cost_report`: daily buckets of `{currency, amount, model, token_type,
 *   description, workspace_id, ...}` grouped by `description` and `workspace_id`; `amount` is a decimal
 *   string of CENTS (`"123.78912"` = $1.2378912).
 * Both page with `page` / `has_more` / `next_page` (`report-pages.ts`).
 * Source: docs.anthropic.com/en/api/admin-api/usage-cost/get-messages-usage-report and get-cost-report.
 */
import { decimalToNanos } from './decimal-nanos.ts';
import { dayOf, fetchAllPages, nextDay } from './report-pages.ts';
import {
  ReportFetchError, type DayRange, type ReportCredential, type ReportedCost, type ReportedUsage, type TokenKind, type UsageReport, type UsageReportSource,
} from './usage-report-source.ts';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const ANTHROPIC_VERSION = '2023-06-01';
/** Daily buckets per page: the API's most for `bucket_width=1d`. */
const BUCKETS_PER_PAGE = '31';
/** Cents → nano-USD: 1 cent = 1e7 nanos. */
const CENTS_SCALE = 7;

interface Bucket<R> {
  starting_at: string;
  results?: R[];
}

interface UsageResult {
  model?: string | null;
  api_key_id?: string | null;
  workspace_id?: string | null;
  uncached_input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  output_tokens?: number;
}

interface CostResult {
  currency?: string;
  amount?: string;
  model?: string | null;
  token_type?: string | null;
  description?: string | null;
  workspace_id?: string | null;
}

/** The canonical kind of a cost line's `token_type`. */
const TOKEN_KINDS: Readonly<Record<string, TokenKind>> = {
  uncached_input_tokens: 'input',
  cache_read_input_tokens: 'cached_input',
  'cache_creation.ephemeral_5m_input_tokens': 'cache_write',
  'cache_creation.ephemeral_1h_input_tokens': 'cache_write',
  output_tokens: 'output',
};

/** Anthropic's reports as a `UsageReportSource`. */
export function createAnthropicUsageReport(credential: ReportCredential, options: { timeoutMs: number }): UsageReportSource {
  const base = (credential.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers = { 'x-api-key': credential.adminKey, 'anthropic-version': ANTHROPIC_VERSION };
  return {
    kind: 'anthropic',
    async fetch(range: DayRange, signal?: AbortSignal): Promise<UsageReport> {
      const window = { starting_at: `${range.fromDay}T00:00:00Z`, ending_at: `${nextDay(range.toDay)}T00:00:00Z`, bucket_width: '1d', limit: BUCKETS_PER_PAGE };
      const [usageBuckets, costBuckets] = await Promise.all([
        fetchAllPages<Bucket<UsageResult>>(`${base}/v1/organizations/usage_report/messages`,
          { ...window, 'group_by[]': ['model', 'api_key_id', 'workspace_id'] }, headers, options.timeoutMs, signal),
        fetchAllPages<Bucket<CostResult>>(`${base}/v1/organizations/cost_report`,
          { starting_at: window.starting_at, ending_at: window.ending_at, 'group_by[]': ['description', 'workspace_id'] }, headers, options.timeoutMs, signal),
      ]);
      const daysCovered = new Set<string>();
      const usage: ReportedUsage[] = [];
      for (const bucket of usageBuckets) {
        const day = dayOf(bucket.starting_at);
        daysCovered.add(day);
        for (const result of bucket.results ?? []) usage.push(usageOf(day, result));
      }
      const costs: ReportedCost[] = [];
      for (const bucket of costBuckets) {
        const day = dayOf(bucket.starting_at);
        daysCovered.add(day);
        for (const result of bucket.results ?? []) costs.push(costOf(day, result));
      }
      return { usage, costs, daysCovered };
    },
  };
}

function usageOf(day: string, result: UsageResult): ReportedUsage {
  const uncached = count(result.uncached_input_tokens);
  const cached = count(result.cache_read_input_tokens);
  const written = count(result.cache_creation?.ephemeral_5m_input_tokens) + count(result.cache_creation?.ephemeral_1h_input_tokens);
  return {
    day,
    model: result.model ?? '',
    apiKeyId: result.api_key_id ?? null,
    projectId: result.workspace_id ?? null,
    requests: null,
    inputTokens: uncached + cached + written,
    cachedInputTokens: cached,
    cacheWriteTokens: written,
    outputTokens: count(result.output_tokens),
  };
}

function costOf(day: string, result: CostResult): ReportedCost {
  if (typeof result.amount !== 'string') throw new ReportFetchError('/v1/organizations/cost_report answered a result without an amount string');
  if (result.currency && result.currency.toUpperCase() !== 'USD') {
    throw new ReportFetchError(`/v1/organizations/cost_report answered an amount in ${result.currency}; only USD is reconciled`);
  }
  return {
    day,
    model: result.model ?? null,
    lineItem: result.description ?? result.token_type ?? '',
    tokenKind: (result.token_type && TOKEN_KINDS[result.token_type]) || null,
    projectId: result.workspace_id ?? null,
    costNanos: decimalToNanos(result.amount, CENTS_SCALE),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}
