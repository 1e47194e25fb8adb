/**
 * The contract every provider's usage and cost report reader keeps (the door of `core/reconcile/`):
 * what the provider itself says was used and billed, per UTC day × model (× the provider's key or
 * project where its report has one), in the same canonical token kinds as the ledger.
 *
 * Token kinds are canonical (`core/money/cost.ts`): `inputTokens` INCLUDES cache reads
 * (`cachedInputTokens`) and cache writes (`cacheWriteTokens`). Money is integer nano-USD, converted
 * exactly from the provider's decimal amounts (`decimal-nanos.ts`), never through a float sum.
 *
 * OpenAI (`openai-usage-report.ts`) and Anthropic (`anthropic-usage-report.ts`) implement it today;
 * AWS Cost Explorer and Azure Cost Management fit the same shape (a day, a model or service, a cost
 * and, where they have them, usage quantities) once those providers exist.
 */

/** UTC days, inclusive, `YYYY-MM-DD`. */
export interface DayRange {
  fromDay: string;
  toDay: string;
}

/** Usage the provider reports for one day × model × key (one result of one daily bucket). */
export interface ReportedUsage {
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  model: string;
  /** The provider's own id of the key that made the calls (OpenAI `api_key_id`, Anthropic `api_key_id`); null when not given. */
  apiKeyId: string | null;
  /** OpenAI project id, Anthropic workspace id; null when not given. */
  projectId: string | null;
  /** Null when the report does not count requests (Anthropic's usage report). */
  requests: number | null;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** One line of the provider's cost report for one day: a model's share, or a line the report does not tie to a model. */
export interface ReportedCost {
  day: string;
  /** Null for a line not tied to a model (web search, fine-tuning, a tax). */
  model: string | null;
  /** What the line is for, as the provider words it (`gpt-4o-mini, input`, `output_tokens`). */
  lineItem: string;
  /** The canonical token kind the line bills, when it bills one. */
  tokenKind: TokenKind | null;
  projectId: string | null;
  /** Integer nano-USD. */
  costNanos: number;
}

export type TokenKind = 'input' | 'cached_input' | 'cache_write' | 'output';

/** A report of one provider over a day range. */
export interface UsageReport {
  usage: ReportedUsage[];
  costs: ReportedCost[];
  /** The days the report covers (every day of the range it returned a bucket for, with or without results). */
  daysCovered: Set<string>;
}

/** The admin credential a source reads the reports with, opened (`core/accounts/usage-report-credentials.ts`). */
export interface ReportCredential {
  /** The admin key in clear: held in memory for the calls, never logged. */
  adminKey: string;
  /** The report API's base URL, e.g. `https://api.openai.com`; null = the provider's public one. */
  baseUrl: string | null;
}

/** Reads one provider's usage and cost reports. Implementations page through every page of each report. */
export interface UsageReportSource {
  /** The report API it speaks (`openai`, `anthropic`). */
  readonly kind: string;
  /**
   * The provider's usage and cost over `range`.
   * @throws ReportFetchError when the provider refuses (bad admin key: 401/403) or answers something unreadable.
   */
  fetch(range: DayRange, signal?: AbortSignal): Promise<UsageReport>;
}

/** Builds a source for a credential: one per report API kind (`report-sources.ts`). */
export type UsageReportSourceFactory = (credential: ReportCredential, options: { timeoutMs: number }) => UsageReportSource;

/** A report that could not be read: the provider's status and message, never the admin key. */
export class ReportFetchError extends Error {
  constructor(message: string, readonly status: number | null = null) {
    super(message);
    this.name = 'ReportFetchError';
  }
}
