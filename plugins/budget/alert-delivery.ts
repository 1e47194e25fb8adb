/**
 * Budget alerts, the delivery side: the durable queue `budget_alerts` (`schema.sql` v12) delivered by
 * the shared job of `core/money/webhook-delivery.ts` (signed POSTs, exponential backoff with jitter
 * until `maxAttempts`, rows pending at a stop sent after the restart, at-least-once with
 * `x-tollgate-alert-id` = the row's id). This file only says which table and columns the queue is.
 */
import type { Store } from '../../core/store/store.ts';
import type { Clock } from '../../core/runtime/clock.ts';
import type { Log } from '../../core/runtime/log.ts';
import type { BudgetAlertsConfig } from './schema.ts';
import { createWebhookDelivery, retryDelayMs, type WebhookDelivery, type WebhookQueue } from '../../core/money/webhook-delivery.ts';

export { retryDelayMs };

export type AlertDelivery = Pick<WebhookDelivery, 'wake' | 'close'>;

/**
 * The job over `store` (either engine: Kysely queries, off the request path); `beforeRound` runs
 * first each round (flushes queued alert writes; awaited).
 */
export function createAlertDelivery(
  store: Store, config: BudgetAlertsConfig & { webhookUrl: string; secret: string }, clock: Clock, log: Log, beforeRound: () => void | Promise<void>,
): AlertDelivery {
  const { db } = store;
  const queue: WebhookQueue = {
    due: (nowIsoText, limit) => db.selectFrom('budget_alerts').select(['id', 'payload', 'attempts'])
      .where('state', '=', 'pending').where('next_attempt_at', '<=', nowIsoText)
      .orderBy('next_attempt_at').orderBy('id').limit(limit).execute(),
    delivered: async (id, atIso) => {
      await db.updateTable('budget_alerts')
        .set((eb) => ({ state: 'delivered', attempts: eb('attempts', '+', 1), delivered_at: atIso, next_attempt_at: null, last_error: null }))
        .where('id', '=', id).execute();
    },
    failed: async (id, outcome) => {
      await db.updateTable('budget_alerts')
        .set({ state: outcome.state, attempts: outcome.attempts, next_attempt_at: outcome.nextAttemptAt, last_error: outcome.error }).where('id', '=', id).execute();
    },
  };
  return createWebhookDelivery(queue, config, {
    clock, log, userAgent: 'tollgate-budget-alerts', noun: 'budget alert', alertIdOf: String, beforeRound,
    // SQLite: a closed file cannot be read; PostgreSQL: the pool's errors are logged like any other.
    storeOpen: store.engine === 'sqlite' ? () => store.sqlite.open : () => true,
  });
}
