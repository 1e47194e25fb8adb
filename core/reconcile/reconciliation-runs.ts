/**
 * Reconciliation runs and their difference rows, stored (`reconciliation_runs`,
 * `reconciliation_differences`, schema.sql v19) and read back for the admin API and the CLI. Either
 * engine (Kysely). Money crosses this boundary in integer nano-USD and, for display, USD.
 */
import type { Kysely } from 'kysely';
import type { Database, ReconciliationAlertState, ReconciliationState, ReconciliationTrigger } from '../store/db-types.ts';
import { usd } from '../money/money.ts';
import type { KeyDifferenceRow } from './compare-keys.ts';
import type { Cause, DifferenceRow } from './compare-usage.ts';

/** A run as stored, before its id. Days UTC `YYYY-MM-DD` inclusive; timestamps ISO-8601 UTC. */
export interface NewRun {
  startedAt: string;
  finishedAt: string;
  fromDay: string;
  toDay: string;
  providers: string[];
  trigger: ReconciliationTrigger;
  state: ReconciliationState;
  ledgerCostNanos: number;
  reportCostNanos: number;
  error: string | null;
}

/** A run as the admin API and `--json` show it. */
export interface RunView {
  id: number;
  started_at: string;
  finished_at: string;
  from_day: string;
  to_day: string;
  providers: string[];
  trigger: ReconciliationTrigger;
  state: ReconciliationState;
  flagged_rows: number;
  ledger_cost_nanos: number;
  ledger_cost_usd: number;
  report_cost_nanos: number;
  report_cost_usd: number;
  error: string | null;
  alert_state: ReconciliationAlertState | null;
}

/** One difference row as shown; the report's figures are null where it gives none. */
export interface DifferenceView {
  day: string;
  provider: string;
  model: string;
  flagged: boolean;
  causes: Cause[];
  ledger: { present: boolean; requests: number; failed_requests: number; input_tokens: number; cached_input_tokens: number; cache_write_tokens: number; output_tokens: number; cost_nanos: number; cost_usd: number };
  report: { present: boolean; requests: number | null; input_tokens: number; cached_input_tokens: number; cache_write_tokens: number; output_tokens: number; cost_nanos: number | null; cost_usd: number | null };
}

/** One row per provider key as shown (`compare-keys.ts`); the report's cost is its tokens at the price table's price. */
export interface KeyDifferenceView {
  day: string;
  provider: string;
  model: string;
  api_key_id: string;
  upstream_key: string | null;
  tollgate_key: boolean;
  flagged: boolean;
  causes: Cause[];
  ledger: { requests: number; input_tokens: number; output_tokens: number; cost_nanos: number; cost_usd: number };
  report: { requests: number | null; input_tokens: number; output_tokens: number; cost_nanos: number | null; cost_usd: number | null };
}

/** A run with its rows, as `GET /admin/api/reconciliation/runs/:id` shows it. */
export type RunDetail = RunView & { differences: DifferenceView[]; key_differences: KeyDifferenceView[] };

/** Stores a run, its rows and its rows per provider key in one transaction; returns the run's id. */
export async function saveRun(db: Kysely<Database>, run: NewRun, rows: readonly DifferenceRow[], keyRows: readonly KeyDifferenceRow[] = []): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { id } = await trx.insertInto('reconciliation_runs').values({
      started_at: run.startedAt, finished_at: run.finishedAt, from_day: run.fromDay, to_day: run.toDay,
      providers: JSON.stringify(run.providers), trigger: run.trigger, state: run.state,
      flagged_rows: rows.filter((r) => r.flagged).length, ledger_cost_nanos: run.ledgerCostNanos, report_cost_nanos: run.reportCostNanos,
      error: run.error, alert_state: null,
    }).returning('id').executeTakeFirstOrThrow();
    for (const row of rows) {
      await trx.insertInto('reconciliation_differences').values({
        run_id: id, day: row.day, provider: row.provider, model: row.model,
        ledger_present: row.ledgerPresent ? 1 : 0, ledger_requests: row.ledger.requests, ledger_failed_requests: row.ledger.failedRequests,
        ledger_input_tokens: row.ledger.inputTokens, ledger_cached_input_tokens: row.ledger.cachedInputTokens,
        ledger_cache_write_tokens: row.ledger.cacheWriteTokens, ledger_output_tokens: row.ledger.outputTokens, ledger_cost_nanos: row.ledger.costNanos,
        report_present: row.reportPresent ? 1 : 0, report_requests: row.report.requests,
        report_input_tokens: row.report.inputTokens, report_cached_input_tokens: row.report.cachedInputTokens,
        report_cache_write_tokens: row.report.cacheWriteTokens, report_output_tokens: row.report.outputTokens, report_cost_nanos: row.report.costNanos,
        flagged: row.flagged ? 1 : 0, causes: JSON.stringify(row.causes),
      }).execute();
    }
    for (const row of keyRows) {
      await trx.insertInto('reconciliation_key_differences').values({
        run_id: id, day: row.day, provider: row.provider, model: row.model, api_key_id: row.apiKeyId, upstream_key: row.upstreamKey,
        tollgate_key: row.tollgateKey ? 1 : 0, ledger_requests: row.ledger.requests, ledger_input_tokens: row.ledger.inputTokens,
        ledger_output_tokens: row.ledger.outputTokens, ledger_cost_nanos: row.ledger.costNanos, report_requests: row.report.requests,
        report_input_tokens: row.report.inputTokens, report_output_tokens: row.report.outputTokens, report_cost_nanos: row.report.costNanos,
        flagged: row.flagged ? 1 : 0, causes: JSON.stringify(row.causes),
      }).execute();
    }
    return Number(id);
  });
}

/** Records how a run's alert went. */
export async function setAlertState(db: Kysely<Database>, runId: number, state: ReconciliationAlertState): Promise<void> {
  await db.updateTable('reconciliation_runs').set({ alert_state: state }).where('id', '=', runId).execute();
}

type RunRow = Awaited<ReturnType<typeof selectRuns>>[number];

function selectRuns(db: Kysely<Database>, limit: number, id?: number) {
  let query = db.selectFrom('reconciliation_runs')
    .leftJoin('reconciliation_alerts', 'reconciliation_alerts.run_id', 'reconciliation_runs.id')
    .selectAll('reconciliation_runs').select('reconciliation_alerts.state as queued_alert_state');
  if (id !== undefined) query = query.where('reconciliation_runs.id', '=', id);
  return query.orderBy('reconciliation_runs.started_at', 'desc').orderBy('reconciliation_runs.id', 'desc').limit(limit).execute();
}

function toRunView(row: RunRow): RunView {
  return {
    id: Number(row.id), started_at: row.started_at, finished_at: row.finished_at, from_day: row.from_day, to_day: row.to_day,
    providers: JSON.parse(row.providers) as string[], trigger: row.trigger, state: row.state, flagged_rows: Number(row.flagged_rows),
    ledger_cost_nanos: Number(row.ledger_cost_nanos), ledger_cost_usd: usd(Number(row.ledger_cost_nanos)),
    report_cost_nanos: Number(row.report_cost_nanos), report_cost_usd: usd(Number(row.report_cost_nanos)),
    error: row.error, alert_state: row.alert_state ?? (row.queued_alert_state === 'pending' ? 'pending' : null),
  };
}

/** The latest runs, newest first. */
export async function listRuns(db: Kysely<Database>, limit: number): Promise<RunView[]> {
  return (await selectRuns(db, limit)).map(toRunView);
}

/** One run with its rows (ordered by day, provider, model; the key rows then by key id), or null. */
export async function getRun(db: Kysely<Database>, id: number): Promise<RunDetail | null> {
  const [row] = await selectRuns(db, 1, id);
  if (!row) return null;
  const keyRows = await db.selectFrom('reconciliation_key_differences').selectAll().where('run_id', '=', id)
    .orderBy('day').orderBy('provider').orderBy('model').orderBy('api_key_id').execute();
  const rows = await db.selectFrom('reconciliation_differences').selectAll().where('run_id', '=', id)
    .orderBy('day').orderBy('provider').orderBy('model').execute();
  return {
    ...toRunView(row),
    differences: rows.map((d) => ({
      day: d.day, provider: d.provider, model: d.model, flagged: d.flagged === 1, causes: JSON.parse(d.causes) as Cause[],
      ledger: {
        present: d.ledger_present === 1, requests: Number(d.ledger_requests), failed_requests: Number(d.ledger_failed_requests),
        input_tokens: Number(d.ledger_input_tokens), cached_input_tokens: Number(d.ledger_cached_input_tokens),
        cache_write_tokens: Number(d.ledger_cache_write_tokens), output_tokens: Number(d.ledger_output_tokens),
        cost_nanos: Number(d.ledger_cost_nanos), cost_usd: usd(Number(d.ledger_cost_nanos)),
      },
      report: {
        present: d.report_present === 1, requests: d.report_requests === null ? null : Number(d.report_requests),
        input_tokens: Number(d.report_input_tokens), cached_input_tokens: Number(d.report_cached_input_tokens),
        cache_write_tokens: Number(d.report_cache_write_tokens), output_tokens: Number(d.report_output_tokens),
        cost_nanos: d.report_cost_nanos === null ? null : Number(d.report_cost_nanos),
        cost_usd: d.report_cost_nanos === null ? null : usd(Number(d.report_cost_nanos)),
      },
    })),
    key_differences: keyRows.map((k) => ({
      day: k.day, provider: k.provider, model: k.model, api_key_id: k.api_key_id, upstream_key: k.upstream_key, tollgate_key: k.tollgate_key === 1,
      flagged: k.flagged === 1, causes: JSON.parse(k.causes) as Cause[],
      ledger: {
        requests: Number(k.ledger_requests), input_tokens: Number(k.ledger_input_tokens), output_tokens: Number(k.ledger_output_tokens),
        cost_nanos: Number(k.ledger_cost_nanos), cost_usd: usd(Number(k.ledger_cost_nanos)),
      },
      report: {
        requests: k.report_requests === null ? null : Number(k.report_requests), input_tokens: Number(k.report_input_tokens),
        output_tokens: Number(k.report_output_tokens), cost_nanos: k.report_cost_nanos === null ? null : Number(k.report_cost_nanos),
        cost_usd: k.report_cost_nanos === null ? null : usd(Number(k.report_cost_nanos)),
      },
    })),
  };
}
