/**
 * The comparison per provider key, where the report names the key (`api_key_id`: OpenAI's and
 * Anthropic's usage reports): one row per day × model × provider key id, beside the day × model rows
 * of `compare-usage.ts`, which stay as they are.
 *
 * Which keys are Tollgate's is the operator's word (`tollgate credentials set-admin`): the ids in
 * `--gateway-key-ids`, and those of `--key-map`, which also names the credential each one is by the
 * fingerprint the log records (`llm_requests.upstream_key`, `…a1b2`). Then:
 * - a key that is not Tollgate's, with usage → flagged `used_outside`, naming the key, its tokens,
 *   requests and spend;
 * - a mapped key → its report side compared with the log's rows served by that credential, flagged
 *   as the day × model rows are (cost beyond the tolerance): `used_outside` when the provider counted
 *   more (the key is also used elsewhere), `ledger_over` when the log did;
 * - a key listed without a fingerprint → shown, never flagged (nothing to compare it with).
 * Nothing is compared per key when the operator named no key.
 *
 * The reports bill no key (the cost reports group by line item and project or workspace): a key's
 * spend on the report's side is its tokens at the price table's price (`core/money/cost.ts`); null
 * when the model has no price.
 */
import { costOf } from '../money/cost.ts';
import type { ModelPrice } from '../money/price-table.ts';
import { beyondPercent, type Cause, type Tolerance } from './compare-usage.ts';
import { nanosToUsdText } from './decimal-nanos.ts';
import type { LedgerKeyUsage } from './ledger-usage.ts';
import type { UsageReport } from './usage-report-source.ts';

/** One compared row per provider key. Money in integer nano-USD. */
export interface KeyDifferenceRow {
  day: string;
  provider: string;
  model: string;
  /** The provider's own key id. */
  apiKeyId: string;
  /** The fingerprint of the Tollgate credential it is mapped to; null = not mapped. */
  upstreamKey: string | null;
  tollgateKey: boolean;
  ledger: { requests: number; inputTokens: number; outputTokens: number; costNanos: number };
  report: { requests: number | null; inputTokens: number; outputTokens: number; costNanos: number | null };
  flagged: boolean;
  causes: Cause[];
}

export interface CompareKeysOptions {
  provider: string;
  tolerance: Tolerance;
  priceOf(model: string): ModelPrice | null;
  gatewayKeyIds: readonly string[] | null;
  /** Provider key id → Tollgate credential fingerprint. */
  keyMap: Readonly<Record<string, string>> | null;
}

interface ReportKeySide {
  requests: number | null;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** Compares `report`'s usage per key with the ledger's per credential. Rows ordered by day, model, key id. */
export function compareKeys(ledger: readonly LedgerKeyUsage[], report: UsageReport, options: CompareKeysOptions): KeyDifferenceRow[] {
  const keyMap = options.keyMap ?? {};
  const known = new Set([...(options.gatewayKeyIds ?? []), ...Object.keys(keyMap)]);
  if (known.size === 0) return [];
  const reportRows = new Map<string, ReportKeySide>();
  for (const usage of report.usage) {
    if (usage.apiKeyId === null) continue;
    const key = `${usage.day}\u0000${usage.model}\u0000${usage.apiKeyId}`;
    const side = reportRows.get(key) ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
    side.requests = side.requests === null || usage.requests === null ? null : side.requests + usage.requests;
    side.inputTokens += usage.inputTokens;
    side.cachedInputTokens += usage.cachedInputTokens;
    side.cacheWriteTokens += usage.cacheWriteTokens;
    side.outputTokens += usage.outputTokens;
    reportRows.set(key, side);
  }
  // The log's rows per credential, under the provider key id the operator mapped it to.
  const idOf = new Map(Object.entries(keyMap).map(([id, fingerprint]) => [fingerprint, id]));
  const ledgerRows = new Map<string, LedgerKeyUsage>();
  for (const row of ledger) {
    const id = idOf.get(row.upstreamKey);
    if (id !== undefined) ledgerRows.set(`${row.day}\u0000${row.model}\u0000${id}`, row);
  }
  return [...new Set([...reportRows.keys(), ...ledgerRows.keys()])].sort().map((key) => {
    const [day, model, apiKeyId] = key.split('\u0000') as [string, string, string];
    return compareOne({ day, model, apiKeyId }, ledgerRows.get(key), reportRows.get(key), known.has(apiKeyId), keyMap[apiKeyId] ?? null, options);
  });
}

function compareOne(
  at: { day: string; model: string; apiKeyId: string }, own: LedgerKeyUsage | undefined, theirs: ReportKeySide | undefined,
  tollgateKey: boolean, upstreamKey: string | null, options: CompareKeysOptions,
): KeyDifferenceRow {
  const price = options.priceOf(at.model);
  const reportCost = theirs && price ? costOf(price, {
    promptTokens: theirs.inputTokens, cachedTokens: theirs.cachedInputTokens, cacheWriteTokens: theirs.cacheWriteTokens, completionTokens: theirs.outputTokens,
  }).totalNanos : null;
  const row: KeyDifferenceRow = {
    ...at, provider: options.provider, upstreamKey, tollgateKey,
    ledger: own ? { requests: own.requests, inputTokens: own.inputTokens, outputTokens: own.outputTokens, costNanos: own.costNanos }
      : { requests: 0, inputTokens: 0, outputTokens: 0, costNanos: 0 },
    report: theirs ? { requests: theirs.requests, inputTokens: theirs.inputTokens, outputTokens: theirs.outputTokens, costNanos: reportCost }
      : { requests: null, inputTokens: 0, outputTokens: 0, costNanos: null },
    flagged: false,
    causes: [],
  };
  const reportTokens = row.report.inputTokens + row.report.outputTokens;
  const ledgerTokens = row.ledger.inputTokens + row.ledger.outputTokens;
  const spend = reportCost === null ? 'no price in the price table' : `$${nanosToUsdText(reportCost)} at the price table's price`;
  const requests = row.report.requests === null ? '' : `${row.report.requests} requests, `;
  if (!tollgateKey) {
    row.flagged = reportTokens > 0;
    if (row.flagged) row.causes = [{ code: 'used_outside', message: `used outside Tollgate: key ${at.apiKeyId} is not Tollgate's; ${requests}${reportTokens} tokens, ${spend}` }];
    return row;
  }
  if (upstreamKey === null) return row;
  const theirCost = reportCost ?? 0;
  row.flagged = reportCost === null
    ? beyondPercent(ledgerTokens, reportTokens, options.tolerance.percent)
    : Math.abs(row.ledger.costNanos - theirCost) > options.tolerance.floorNanos && beyondPercent(row.ledger.costNanos, theirCost, options.tolerance.percent);
  if (!row.flagged) return row;
  row.causes = reportTokens > ledgerTokens
    ? [{ code: 'used_outside', message: `key ${at.apiKeyId} (Tollgate's ${upstreamKey}) is also used outside Tollgate: the provider counted ${reportTokens - ledgerTokens} more tokens on it than the log (${requests}${reportTokens} tokens, ${spend})` }]
    : [{ code: 'ledger_over', message: `the log counted ${ledgerTokens - reportTokens} more tokens on ${upstreamKey} than the provider on key ${at.apiKeyId} (usage estimated locally, a report not final yet, or a key map that names the wrong key)` }];
  return row;
}
