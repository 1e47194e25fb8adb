/**
 * A flagged run's webhook, durable like budget alerts: the payload is committed to
 * `reconciliation_alerts` (schema.sql v25) as 'pending' with the run, then delivered by the shared
 * job of `core/money/webhook-delivery.ts` (signed, retried with exponential backoff and jitter,
 * `x-tollgate-alert-id: reconciliation-<run id>`). The run that flagged tries once at once; what is
 * still pending is retried by `tollgate serve`'s job (`reconcile-job.ts`), after a restart too. The
 * run's `alert_state` follows the row: 'pending' (read from the row), then 'delivered' or 'failed'.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { createWebhookDelivery, type WebhookDelivery, type WebhookQueue } from '../money/webhook-delivery.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Log } from '../runtime/log.ts';

/** Retries of a reconciliation alert: a run is once a day, so a receiver down for hours still gets it. */
export const RECONCILIATION_ALERT_RETRY = { maxAttempts: 10, backoffMs: 60_000, maxBackoffMs: 3_600_000, pollIntervalMs: 30_000 } as const;

/**
 * Queues the webhook of run `runId` (its exact body). The run's stored `alert_state` stays null while
 * the row is pending (v19's CHECK knows no 'pending'); the run views read 'pending' from this row.
 */
export async function enqueueReconciliationAlert(db: Kysely<Database>, runId: number, payload: string, nowIsoText: string): Promise<void> {
  await db.insertInto('reconciliation_alerts').values({ run_id: runId, payload, state: 'pending', next_attempt_at: nowIsoText, created_at: nowIsoText }).execute();
}

function queueOf(db: Kysely<Database>): WebhookQueue {
  return {
    async due(nowIsoText, limit) {
      const rows = await db.selectFrom('reconciliation_alerts').select(['run_id', 'payload', 'attempts'])
        .where('state', '=', 'pending').where('next_attempt_at', '<=', nowIsoText)
        .orderBy('next_attempt_at').orderBy('run_id').limit(limit).execute();
      return rows.map((row) => ({ id: Number(row.run_id), payload: row.payload, attempts: Number(row.attempts) }));
    },
    async delivered(id, atIso) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('reconciliation_alerts')
          .set((eb) => ({ state: 'delivered', attempts: eb('attempts', '+', 1), delivered_at: atIso, next_attempt_at: null, last_error: null }))
          .where('run_id', '=', id).execute();
        await trx.updateTable('reconciliation_runs').set({ alert_state: 'delivered' }).where('id', '=', id).execute();
      });
    },
    async failed(id, outcome) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('reconciliation_alerts')
          .set({ state: outcome.state, attempts: outcome.attempts, next_attempt_at: outcome.nextAttemptAt, last_error: outcome.error })
          .where('run_id', '=', id).execute();
        if (outcome.state === 'failed') await trx.updateTable('reconciliation_runs').set({ alert_state: 'failed' }).where('id', '=', id).execute();
      });
    },
  };
}

/**
 * The delivery job of reconciliation alerts to `webhookUrl`. `pollIntervalMs` 0: no timer, `drain`
 * only (a run's first attempt, the CLI).
 */
export function createReconciliationAlertDelivery(
  db: Kysely<Database>, settings: { webhookUrl: string; secret: string; timeoutMs: number; pollIntervalMs: number }, clock: Clock, log: Log,
): WebhookDelivery {
  return createWebhookDelivery(queueOf(db), { ...RECONCILIATION_ALERT_RETRY, ...settings }, {
    clock, log, userAgent: 'tollgate-reconciliation', noun: 'reconciliation alert', alertIdOf: (runId) => `reconciliation-${runId}`,
  });
}
