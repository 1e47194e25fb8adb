/**
 * One reconciliation run: for every provider with an admin credential (or those asked for), read the
 * provider's usage and cost reports (`report-sources.ts`), sum the ledger over the same UTC days
 * (`ledger-usage.ts`), compare (`compare-usage.ts`), store the run and its rows
 * (`reconciliation-runs.ts`), and when a row is flagged send one signed webhook (the budget alerts'
 * signature and sender, `core/money/signed-webhook.ts`). `tollgate reconcile`, the daily job
 * (`reconcile-job.ts`) and the admin API run it.
 *
 * A provider whose report cannot be read fails the run (`state: 'failed'`, `error` says which and
 * why) without hiding the others' rows. The admin keys are opened in memory for the calls only and
 * appear in no message: a provider's error text is what it said, never the request.
 */
import type { Kysely } from 'kysely';
import type { Database, ReconciliationTrigger } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import type { Keyring } from '../accounts/secret-box.ts';
import { openUsageReportCredentials } from '../accounts/usage-report-credentials.ts';
import { listPrices, toModelPrice, type ModelPrice } from '../money/price-table.ts';
import { usd, usdToNanos } from '../money/money.ts';
import type { Clock } from '../runtime/clock.ts';
import { createLog, type Log } from '../runtime/log.ts';
import { compareUsage, type DifferenceRow } from './compare-usage.ts';
import { compareKeys, type KeyDifferenceRow } from './compare-keys.ts';
import { ledgerUsage, ledgerUsageByKey } from './ledger-usage.ts';
import { getRun, saveRun, setAlertState, type RunDetail } from './reconciliation-runs.ts';
import { createReconciliationAlertDelivery, enqueueReconciliationAlert } from './reconciliation-alerts.ts';
import { REPORT_SOURCES } from './report-sources.ts';
import type { DayRange, UsageReportSourceFactory } from './usage-report-source.ts';

/** The manifest's `reconciliation` settings that a run uses (`core/manifest-schema.ts`). */
export interface ReconcileSettings {
  /** Percent of the larger side a row may differ by (default 1). */
  tolerancePercent: number;
  /** USD a row may differ by per day (default 0.5); the larger of the two applies. */
  toleranceUsd: number;
  /** Where a flagged run is announced; none = the run is stored with alert_state 'unsent'. */
  webhookUrl?: string | undefined;
  /** HMAC-SHA256 key of the webhook's `x-tollgate-signature`. */
  secret?: string | undefined;
  /** Bound on each report call and each webhook attempt, ms. */
  timeoutMs: number;
}

export interface ReconcileDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  clock: Clock;
  log?: Log;
  /** The report readers by kind; tests keep the default. */
  sources?: ReadonlyMap<string, UsageReportSourceFactory>;
}

export interface ReconcileRequest {
  range: DayRange;
  /** Provider ids; empty or absent = every provider with an admin credential. */
  providers?: readonly string[];
  trigger: ReconciliationTrigger;
}

/** Thrown when there is nothing to reconcile with: no admin credential (for the providers asked). */
export class NoReportCredentialError extends Error {
  constructor(providers: readonly string[] | undefined) {
    super(providers && providers.length > 0
      ? `no usage report (admin) credential for ${providers.join(', ')}: store one with \`tollgate credentials set-admin --provider ID --kind openai|anthropic --admin-key-stdin\``
      : 'no usage report (admin) credential is stored: store one with `tollgate credentials set-admin --provider ID --kind openai|anthropic --admin-key-stdin`');
    this.name = 'NoReportCredentialError';
  }
}

/** Runs one reconciliation and returns the stored run with its rows. @throws NoReportCredentialError */
export async function runReconciliation(
  deps: ReconcileDeps, settings: ReconcileSettings, request: ReconcileRequest,
): Promise<RunDetail> {
  const startedAt = nowIso(deps.clock());
  const credentials = await openUsageReportCredentials(deps.db, deps.keyring, request.providers);
  if (credentials.length === 0) throw new NoReportCredentialError(request.providers);
  const sources = deps.sources ?? REPORT_SOURCES;
  const priceOf = await priceLookup(deps.db);
  const tolerance = { percent: settings.tolerancePercent, floorNanos: usdToNanos(settings.toleranceUsd) };
  const rows: DifferenceRow[] = [];
  const keyRows: KeyDifferenceRow[] = [];
  const errors: string[] = [];
  for (const credential of credentials) {
    const factory = sources.get(credential.kind);
    if (!factory) {
      errors.push(`${credential.provider}: no report reader for kind "${credential.kind}"`);
      continue;
    }
    try {
      const report = await factory({ adminKey: credential.adminKey, baseUrl: credential.baseUrl }, { timeoutMs: settings.timeoutMs }).fetch(request.range);
      const ledger = await ledgerUsage(deps.db, request.range, [credential.provider]);
      rows.push(...compareUsage(ledger, report, { provider: credential.provider, tolerance, priceOf, gatewayKeyIds: credential.gatewayKeyIds }));
      const byKey = await ledgerUsageByKey(deps.db, request.range, credential.provider);
      keyRows.push(...compareKeys(byKey, report, { provider: credential.provider, tolerance, priceOf, gatewayKeyIds: credential.gatewayKeyIds, keyMap: credential.keyMap }));
    } catch (err) {
      errors.push(`${credential.provider}: ${(err as Error).message}`);
    }
  }
  const flagged = [...rows, ...keyRows].filter((row) => row.flagged);
  const runId = await saveRun(deps.db, {
    startedAt, finishedAt: nowIso(deps.clock()), fromDay: request.range.fromDay, toDay: request.range.toDay,
    providers: credentials.map((c) => c.provider), trigger: request.trigger,
    state: errors.length > 0 ? 'failed' : flagged.length > 0 ? 'flagged' : 'ok',
    ledgerCostNanos: rows.reduce((sum, row) => sum + row.ledger.costNanos, 0),
    reportCostNanos: rows.reduce((sum, row) => sum + (row.report.costNanos ?? 0), 0),
    error: errors.length > 0 ? errors.join('; ') : null,
  }, rows, keyRows);
  if (errors.length > 0) deps.log?.warn('reconciliation could not read every report', { runId, errors });
  if (flagged.length > 0) await alert(deps, settings, runId);
  return (await getRun(deps.db, runId))!;
}

/**
 * The price table's row for a model the report names: by exact id, else by the id without a date
 * suffix (reports name the dated snapshot, `gpt-4o-mini-2024-07-18`; tables often the alias).
 */
async function priceLookup(db: Kysely<Database>): Promise<(model: string) => ModelPrice | null> {
  const map = new Map<string, ModelPrice>();
  for (const row of await listPrices(db)) map.set(row.model, toModelPrice(row));
  return (model) => map.get(model) ?? map.get(model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '')) ?? null;
}

/**
 * Queues the flagged run's webhook (durable, `reconciliation-alerts.ts`) and makes its first attempt
 * now; a failed one stays pending for `tollgate serve`'s retries.
 */
async function alert(deps: ReconcileDeps, settings: ReconcileSettings, runId: number): Promise<void> {
  if (!settings.webhookUrl || !settings.secret) {
    await setAlertState(deps.db, runId, 'unsent');
    return;
  }
  const run = (await getRun(deps.db, runId))!;
  await enqueueReconciliationAlert(deps.db, runId, JSON.stringify(alertPayload(run)), nowIso(deps.clock()));
  const log = deps.log ?? createLog('error', () => {});
  const delivery = createReconciliationAlertDelivery(deps.db, { webhookUrl: settings.webhookUrl, secret: settings.secret, timeoutMs: settings.timeoutMs, pollIntervalMs: 0 }, deps.clock, log);
  await delivery.drain();
  await delivery.close();
}

/** The webhook's JSON body: the run's totals and its flagged rows with their causes. */
export function alertPayload(run: RunDetail): Record<string, unknown> {
  return {
    type: 'reconciliation.flagged',
    run_id: run.id,
    from_day: run.from_day,
    to_day: run.to_day,
    providers: run.providers,
    flagged_rows: run.flagged_rows,
    ledger_cost_usd: run.ledger_cost_usd,
    ledger_cost_nanos: run.ledger_cost_nanos,
    report_cost_usd: run.report_cost_usd,
    report_cost_nanos: run.report_cost_nanos,
    differences: run.differences.filter((d) => d.flagged).map((d) => ({
      day: d.day, provider: d.provider, model: d.model,
      ledger_cost_usd: d.ledger.cost_usd, report_cost_usd: d.report.cost_usd,
      difference_usd: usd(((d.report.cost_nanos ?? 0) - d.ledger.cost_nanos)),
      causes: d.causes,
    })),
    key_differences: run.key_differences.filter((d) => d.flagged).map((d) => ({
      day: d.day, provider: d.provider, model: d.model, api_key_id: d.api_key_id, upstream_key: d.upstream_key, tollgate_key: d.tollgate_key,
      ledger_cost_usd: d.ledger.cost_usd, report_cost_usd: d.report.cost_usd, report_tokens: d.report.input_tokens + d.report.output_tokens,
      causes: d.causes,
    })),
  };
}
