/**
 * The comparison: the ledger and a provider's report side by side per UTC day × model, a flag where
 * they differ beyond the tolerance, and the likely causes of each flagged row, by simple rules:
 *
 * - a day one side has nothing for → `missing_day`;
 * - the provider counted more tokens AND more requests (or counts none) → `used_outside`: keys used
 *   outside Tollgate (named when the credential lists the keys Tollgate uses);
 * - same requests, more tokens on the provider's side, failed rows in the ledger → `unbilled_failures`;
 * - tokens agree, cost does not → `price_differs`, naming the provider's implied price per token kind
 *   beside the price table's;
 * - the ledger counted more → `ledger_over` (usage estimated locally, or a report not final yet);
 * - cost lines the report ties to no model → `unattributed_cost`.
 *
 * The flag is on money: |ledger − report| cost beyond max(`tolerancePercent` of the larger, `toleranceNanos`)
 * per row; where the report has no cost for a row, on tokens beyond `tolerancePercent`. Integer
 * arithmetic throughout (basis points), money in nano-USD.
 */
import type { ModelPrice } from '../money/price-table.ts';
import { nanosToUsdText } from './decimal-nanos.ts';
import type { LedgerUsage } from './ledger-usage.ts';
import type { TokenKind, UsageReport } from './usage-report-source.ts';

/** What counts as a difference. */
export interface Tolerance {
  /** Percent of the larger side, e.g. 1. */
  percent: number;
  /** Integer nano-USD a day per row, e.g. 500_000_000 ($0.50). */
  floorNanos: number;
}

export type CauseCode = 'missing_day' | 'used_outside' | 'unbilled_failures' | 'price_differs' | 'ledger_over' | 'unattributed_cost' | 'unexplained';

export interface Cause {
  code: CauseCode;
  message: string;
}

/** One side's figures for a row. */
export interface SideFigures {
  /** Null when that side does not count requests. */
  requests: number | null;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** Integer nano-USD; null when the report has no cost for the row. */
  costNanos: number | null;
}

/** One compared row. */
export interface DifferenceRow {
  day: string;
  provider: string;
  /** '' for the report's cost lines tied to no model. */
  model: string;
  ledgerPresent: boolean;
  ledger: SideFigures & { requests: number; costNanos: number; failedRequests: number };
  reportPresent: boolean;
  report: SideFigures;
  flagged: boolean;
  causes: Cause[];
}

export interface CompareOptions {
  provider: string;
  tolerance: Tolerance;
  /** The price table's row for a model, to name beside the provider's implied price; null = none. */
  priceOf(model: string): ModelPrice | null;
  /** Provider-side ids of the keys Tollgate uses; null = not told. */
  gatewayKeyIds: readonly string[] | null;
}

interface ReportSide extends SideFigures {
  present: boolean;
  /** Cost per canonical token kind, where the report's lines say which. */
  costByKind: Map<TokenKind, number>;
  /** Tokens (input + output) per provider key id. */
  tokensByKey: Map<string, number>;
}

const EMPTY_LEDGER = { requests: 0, failedRequests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, costNanos: 0 };

/** Compares one provider's ledger rows with its report. Rows ordered by day, then model. */
export function compareUsage(ledger: readonly LedgerUsage[], report: UsageReport, options: CompareOptions): DifferenceRow[] {
  const reportRows = aggregateReport(report);
  const ledgerRows = new Map(ledger.map((row) => [`${row.day}\u0000${row.model}`, row]));
  const ledgerDays = new Set(ledger.map((row) => row.day));
  const reportDays = new Set([...reportRows.keys()].map((key) => key.split('\u0000')[0]!));
  const keys = [...new Set([...ledgerRows.keys(), ...reportRows.keys()])].sort();
  return keys.map((key) => {
    const [day, model] = key.split('\u0000') as [string, string];
    const own = ledgerRows.get(key);
    const theirs = reportRows.get(key);
    const row: DifferenceRow = {
      day, provider: options.provider, model,
      ledgerPresent: own !== undefined,
      ledger: own ? pickLedger(own) : { ...EMPTY_LEDGER },
      reportPresent: theirs !== undefined,
      report: theirs ? pickReport(theirs) : { requests: null, inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, costNanos: null },
      flagged: false,
      causes: [],
    };
    row.flagged = isFlagged(row, options.tolerance);
    if (row.flagged) row.causes = causesOf(row, theirs, { ledgerDays, reportDays }, options);
    return row;
  });
}

function pickLedger(row: LedgerUsage): DifferenceRow['ledger'] {
  return {
    requests: row.requests, failedRequests: row.failedRequests, inputTokens: row.inputTokens, cachedInputTokens: row.cachedInputTokens,
    cacheWriteTokens: row.cacheWriteTokens, outputTokens: row.outputTokens, costNanos: row.costNanos,
  };
}

function pickReport(side: ReportSide): SideFigures {
  return {
    requests: side.requests, inputTokens: side.inputTokens, cachedInputTokens: side.cachedInputTokens,
    cacheWriteTokens: side.cacheWriteTokens, outputTokens: side.outputTokens, costNanos: side.costNanos,
  };
}

/** The report summed per day × model (over keys and projects); cost lines tied to no model under model ''. */
function aggregateReport(report: UsageReport): Map<string, ReportSide> {
  const rows = new Map<string, ReportSide>();
  const rowOf = (day: string, model: string): ReportSide => {
    const key = `${day}\u0000${model}`;
    let row = rows.get(key);
    if (!row) {
      row = { present: true, requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, costNanos: null, costByKind: new Map(), tokensByKey: new Map() };
      rows.set(key, row);
    }
    return row;
  };
  for (const usage of report.usage) {
    const row = rowOf(usage.day, usage.model);
    row.requests = row.requests === null || usage.requests === null ? null : row.requests + usage.requests;
    row.inputTokens += usage.inputTokens;
    row.cachedInputTokens += usage.cachedInputTokens;
    row.cacheWriteTokens += usage.cacheWriteTokens;
    row.outputTokens += usage.outputTokens;
    const keyId = usage.apiKeyId ?? '(no key id)';
    row.tokensByKey.set(keyId, (row.tokensByKey.get(keyId) ?? 0) + usage.inputTokens + usage.outputTokens);
  }
  for (const cost of report.costs) {
    const row = rowOf(cost.day, cost.model ?? '');
    row.costNanos = (row.costNanos ?? 0) + cost.costNanos;
    if (cost.tokenKind) row.costByKind.set(cost.tokenKind, (row.costByKind.get(cost.tokenKind) ?? 0) + cost.costNanos);
  }
  // A model with cost lines but no usage results counts no requests either.
  for (const row of rows.values()) if (row.inputTokens === 0 && row.outputTokens === 0 && row.requests === 0) row.requests = null;
  return rows;
}

/** |a − b| beyond `percent` of the larger (integer basis points). */
export function beyondPercent(a: number, b: number, percent: number): boolean {
  const basisPoints = BigInt(Math.round(percent * 100));
  return BigInt(Math.abs(a - b)) * 10_000n > basisPoints * BigInt(Math.max(Math.abs(a), Math.abs(b)));
}

function isFlagged(row: DifferenceRow, tolerance: Tolerance): boolean {
  if (row.report.costNanos !== null || !row.reportPresent) {
    const theirs = row.report.costNanos ?? 0;
    const difference = Math.abs(row.ledger.costNanos - theirs);
    return difference > tolerance.floorNanos && beyondPercent(row.ledger.costNanos, theirs, tolerance.percent);
  }
  return beyondPercent(totalTokens(row.ledger), totalTokens(row.report), tolerance.percent);
}

function totalTokens(side: SideFigures): number {
  return side.inputTokens + side.outputTokens;
}

const KINDS: ReadonlyArray<{ kind: TokenKind; label: string; tokens: (s: SideFigures) => number; price: (p: ModelPrice) => number | null }> = [
  { kind: 'input', label: 'input', tokens: (s) => s.inputTokens - s.cachedInputTokens - s.cacheWriteTokens, price: (p) => p.input_price_per_million },
  { kind: 'cached_input', label: 'cached input', tokens: (s) => s.cachedInputTokens, price: (p) => p.cached_input_price_per_million ?? p.input_price_per_million },
  { kind: 'cache_write', label: 'cache write', tokens: (s) => s.cacheWriteTokens, price: (p) => p.cache_write_price_per_million ?? p.input_price_per_million },
  { kind: 'output', label: 'output', tokens: (s) => s.outputTokens, price: (p) => p.output_price_per_million },
];

function tokensAgree(row: DifferenceRow, percent: number): boolean {
  return KINDS.every(({ tokens }) => !beyondPercent(tokens(row.ledger), tokens(row.report), percent));
}

function causesOf(
  row: DifferenceRow, theirs: ReportSide | undefined, days: { ledgerDays: Set<string>; reportDays: Set<string> }, options: CompareOptions,
): Cause[] {
  const percent = options.tolerance.percent;
  if (row.model === '') {
    return [{ code: 'unattributed_cost', message: `the provider billed $${nanosToUsdText(row.report.costNanos ?? 0)} on lines tied to no model (tools, fine-tuning, storage, taxes): Tollgate does not log these` }];
  }
  if (!days.reportDays.has(row.day)) {
    return [{ code: 'missing_day', message: `missing day: the provider's report has nothing for ${row.provider} on ${row.day} (the report is not final yet, or the usage was billed to another organization)` }];
  }
  if (!days.ledgerDays.has(row.day)) {
    return [{ code: 'missing_day', message: `missing day: the ledger has no ${row.provider} request on ${row.day} while the provider billed $${nanosToUsdText(row.report.costNanos ?? 0)} (keys used outside Tollgate, or the log of that day was lost)` }];
  }
  const ledgerTokens = totalTokens(row.ledger);
  const reportTokens = totalTokens(row.report);
  const causes: Cause[] = [];
  if (reportTokens > ledgerTokens && beyondPercent(ledgerTokens, reportTokens, percent)) {
    const theirRequests = row.report.requests;
    const requestsMatch = theirRequests !== null && !beyondPercent(row.ledger.requests, theirRequests, percent);
    // The provider may count the failed calls as requests too: "the same requests" is either figure.
    const withFailures = row.ledger.requests + row.ledger.failedRequests;
    const matchWithFailures = theirRequests !== null && theirRequests >= row.ledger.requests
      && (theirRequests <= withFailures || !beyondPercent(withFailures, theirRequests, percent));
    if ((requestsMatch || matchWithFailures) && row.ledger.failedRequests > 0) {
      causes.push({ code: 'unbilled_failures', message: `unbilled failures: the provider counted ${reportTokens - ledgerTokens} more tokens for the same ${row.ledger.requests} requests, and the ledger has ${row.ledger.failedRequests} failed requests it did not bill` });
    } else if (!requestsMatch) {
      causes.push({ code: 'used_outside', message: usedOutsideMessage(row, theirs, options.gatewayKeyIds) });
    }
  } else if (ledgerTokens > reportTokens && beyondPercent(ledgerTokens, reportTokens, percent)) {
    causes.push({ code: 'ledger_over', message: `the ledger counted ${ledgerTokens - reportTokens} more tokens than the provider billed (usage estimated locally, or the report is not final yet)` });
  } else if (tokensAgree(row, percent)) {
    causes.push({ code: 'price_differs', message: priceMessage(row, theirs, options.priceOf(row.model)) });
  }
  if (causes.length === 0) causes.push({ code: 'unexplained', message: 'the token counts by kind differ in a way no simple rule explains: compare the rows of the log with the provider\'s report' });
  return causes;
}

function usedOutsideMessage(row: DifferenceRow, theirs: ReportSide | undefined, gatewayKeyIds: readonly string[] | null): string {
  const extraRequests = row.report.requests === null ? '' : `${row.report.requests - row.ledger.requests} more requests and `;
  const base = `keys used outside Tollgate: the provider counted ${extraRequests}${totalTokens(row.report) - totalTokens(row.ledger)} more tokens than the ledger`;
  if (!gatewayKeyIds || !theirs) return base;
  const known = new Set(gatewayKeyIds);
  const outside = [...theirs.tokensByKey].filter(([keyId]) => !known.has(keyId)).map(([keyId, tokens]) => `${keyId} (${tokens} tokens)`);
  return outside.length > 0 ? `${base}; keys Tollgate does not use: ${outside.join(', ')}` : base;
}

/** USD per million tokens of `costNanos` over `tokens`, as text with up to 6 decimals. */
function perMillionText(costNanos: number, tokens: number): string {
  // nanos per token × 1e6 / 1e9 = USD per million = costNanos / tokens / 1000
  return String(Number((costNanos / tokens / 1000).toFixed(6)));
}

function priceMessage(row: DifferenceRow, theirs: ReportSide | undefined, price: ModelPrice | null): string {
  const parts: string[] = [];
  for (const { kind, label, tokens, price: tablePrice } of KINDS) {
    const billed = theirs?.costByKind.get(kind);
    const count = tokens(row.report);
    if (billed === undefined || count <= 0) continue;
    const implied = perMillionText(billed, count);
    const table = price ? tablePrice(price) : null;
    if (table !== null && Number(implied) === table) continue;
    parts.push(`${label} $${implied}/M billed${table === null ? '' : `, $${table}/M in the price table`}`);
  }
  const detail = parts.length > 0 ? parts.join('; ')
    : `ledger $${nanosToUsdText(row.ledger.costNanos)}, provider $${nanosToUsdText(row.report.costNanos ?? 0)} for the same tokens`;
  return `price table differs from the provider's price for ${row.model}: ${detail}`;
}
