/**
 * The daily reconciliation in `tollgate serve`: once a day, after `timeOfDay` (UTC), one replica
 * compares the last `lookbackDays` whole UTC days (`reconcile-run.ts`). Several replicas agree on who
 * runs through a lease (`core/coordination/leases.ts`); a replica that restarts the same day, or a
 * lease that let two replicas through while Redis was away, finds the day's scheduled run already
 * stored and does nothing. Off while no admin credential is stored: nothing to read the reports with.
 *
 * Never throws out of its timer: a failed run is stored as such (or logged when even that fails).
 * With a webhook configured it also retries the flagged runs' alerts still pending
 * (`reconciliation-alerts.ts`), those of `tollgate reconcile` and of before a restart included.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import type { Keyring } from '../accounts/secret-box.ts';
import { countUsageReportCredentials } from '../accounts/usage-report-credentials.ts';
import type { Leases } from '../coordination/leases.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Log } from '../runtime/log.ts';
import { dayOf, dayStartSec } from './report-pages.ts';
import { runReconciliation, type ReconcileSettings } from './reconcile-run.ts';
import { createReconciliationAlertDelivery, RECONCILIATION_ALERT_RETRY } from './reconciliation-alerts.ts';

/** The manifest's `reconciliation` section (`core/manifest-schema.ts`), defaults applied. */
export interface ReconciliationSettings extends ReconcileSettings {
  enabled: boolean;
  /** `HH:MM`, UTC. */
  timeOfDay: string;
  lookbackDays: number;
}

export interface ReconcileJobDeps {
  db: Kysely<Database>;
  keyring: () => Keyring;
  clock: Clock;
  log: Log;
  leases: Leases;
}

export interface ReconcileJob {
  /** Checks now whether the day's run is due (the timer does it every `CHECK_INTERVAL_MS`); resolves when that check (and a run it started) ends. */
  tick(): Promise<void>;
  /** Sends the reconciliation alerts due now (the job's timer does it every 30 s); resolves when that round ends. */
  retryAlerts(): Promise<void>;
  /** Stops the timer and waits for a run in progress. */
  close(): Promise<void>;
}

const CHECK_INTERVAL_MS = 60_000;
const LEASE_NAME = 'reconciliation-daily';
/** The lease outlives any run and ends before the next day's. */
const LEASE_TTL_MS = 6 * 60 * 60_000;

/** The UTC days a run started on `nowMs` compares: the `lookbackDays` whole days before today. */
export function dailyRange(nowMs: number, lookbackDays: number): { fromDay: string; toDay: string } {
  const today = dayStartSec(dayOf(Math.floor(nowMs / 1000)));
  return { fromDay: dayOf(today - lookbackDays * 86_400), toDay: dayOf(today - 86_400) };
}

/** Starts the daily job (a timer; nothing when `settings.enabled` is false). */
export function createReconcileJob(deps: ReconcileJobDeps, settings: ReconciliationSettings): ReconcileJob {
  let running: Promise<void> | null = null;
  let closed = false;
  const [hours, minutes] = settings.timeOfDay.split(':').map(Number) as [number, number];

  async function check(): Promise<void> {
    const nowMs = deps.clock();
    const today = dayOf(Math.floor(nowMs / 1000));
    if (nowMs < (dayStartSec(today) + hours * 3600 + minutes * 60) * 1000) return;
    // Most gateways store no admin credential: one small count a minute is all the job costs them.
    if ((await countUsageReportCredentials(deps.db)) === 0) return;
    if (await ranToday(deps.db, today)) return;
    if (!(await deps.leases.tryAcquire(`${LEASE_NAME}:${today}`, LEASE_TTL_MS))) return;
    const run = await runReconciliation({ db: deps.db, keyring: deps.keyring(), clock: deps.clock, log: deps.log }, settings,
      { range: dailyRange(nowMs, settings.lookbackDays), trigger: 'schedule' });
    deps.log.info('daily reconciliation done', { runId: run.id, state: run.state, flaggedRows: run.flagged_rows });
  }

  function tick(): Promise<void> {
    if (closed || !settings.enabled) return Promise.resolve();
    running ??= check()
      .catch((err: unknown) => deps.log.error('daily reconciliation failed', { err }))
      .finally(() => {
        running = null;
      });
    return running;
  }

  const timer = settings.enabled ? setInterval(() => void tick(), CHECK_INTERVAL_MS) : null;
  timer?.unref();
  const alerts = settings.webhookUrl && settings.secret
    ? createReconciliationAlertDelivery(deps.db, {
      webhookUrl: settings.webhookUrl, secret: settings.secret, timeoutMs: settings.timeoutMs, pollIntervalMs: RECONCILIATION_ALERT_RETRY.pollIntervalMs,
    }, deps.clock, deps.log)
    : null;
  return {
    tick,
    retryAlerts: () => alerts?.drain() ?? Promise.resolve(),
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      await running;
      await alerts?.close();
    },
  };
}

/** True when a scheduled run already started today (UTC). */
async function ranToday(db: Kysely<Database>, today: string): Promise<boolean> {
  const row = await db.selectFrom('reconciliation_runs').select('id')
    .where('trigger', '=', 'schedule').where('started_at', '>=', `${today}T00:00:00.000Z`).limit(1).executeTakeFirst();
  return row !== undefined;
}
