/**
 * Budget alerts, the delivery side: a background job that POSTs each 'pending' row of `budget_alerts`
 * (the durable queue, `schema.sql` v12) to the webhook, signed (`core/money/signed-webhook.ts`), and records the
 * outcome on the row. A failed attempt (network error, timeout, non-2xx) is retried after an
 * exponential backoff with jitter, until `maxAttempts`, then the row is 'failed'.
 *
 * Why nothing is lost: the row is committed before it is sent, and only an answered attempt changes
 * it, so rows pending at a stop or a crash are sent after the restart. The price is at-least-once: an
 * attempt cut by the stop (or a crash) after the receiver took it is sent again; receivers dedupe on
 * `x-tollgate-alert-id`.
 *
 * Why it never stalls or kills the gateway: each attempt is bounded by `timeoutMs`, the database work
 * is a few small statements per alert (Kysely, on either engine), one run at a time, and every error is logged, never thrown out of
 * a timer.
 */
import type { Store } from '../../core/store/store.ts';
import { nowIso } from '../../core/store/store.ts';
import type { Clock } from '../../core/runtime/clock.ts';
import type { Log } from '../../core/runtime/log.ts';
import type { BudgetAlertsConfig } from './schema.ts';
import { postSignedWebhook } from '../../core/money/signed-webhook.ts';

/** Alerts sent at once per round. */
const ROUND_SIZE = 20;
/** Longest `last_error` kept (a receiver's error page is not worth storing whole). */
const MAX_ERROR_CHARS = 300;

export interface AlertDelivery {
  /** Sends what is due soon (call after a new alert was committed). */
  wake(): void;
  /** Stops the job: attempts in flight are cut and left pending, for the next start. */
  close(): Promise<void>;
}

/**
 * Delay before the attempt after `attempts` failed ones, ms: `backoffMs` × 2^(attempts − 1), times a
 * jitter factor from 0.5 to 1.5 (`random` in [0, 1)), at most `maxBackoffMs`. Jitter spreads the
 * retries of many alerts that failed together (a receiver that was down).
 */
export function retryDelayMs(attempts: number, backoffMs: number, maxBackoffMs: number, random: () => number = Math.random): number {
  const exponential = backoffMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30);
  return Math.max(1, Math.round(Math.min(maxBackoffMs, exponential * (0.5 + random()))));
}

interface DueRow {
  id: number;
  payload: string;
  attempts: number;
}

/**
 * The job over `store` (either engine: Kysely queries, off the request path); `beforeRound` runs
 * first each round (flushes queued alert writes; awaited).
 */
export function createAlertDelivery(
  store: Store, config: BudgetAlertsConfig & { webhookUrl: string; secret: string }, clock: Clock, log: Log, beforeRound: () => void | Promise<void>,
): AlertDelivery {
  const { db } = store;
  // SQLite: a closed file cannot be read; PostgreSQL: the pool's errors are logged like any other.
  const storeOpen = store.engine === 'sqlite' ? () => store.sqlite.open : () => true;
  const due = (nowIsoText: string, limit: number): Promise<DueRow[]> => db.selectFrom('budget_alerts').select(['id', 'payload', 'attempts'])
    .where('state', '=', 'pending').where('next_attempt_at', '<=', nowIsoText)
    .orderBy('next_attempt_at').orderBy('id').limit(limit).execute();
  const delivered = (atIso: string, id: number) => db.updateTable('budget_alerts')
    .set((eb) => ({ state: 'delivered', attempts: eb('attempts', '+', 1), delivered_at: atIso, next_attempt_at: null, last_error: null }))
    .where('id', '=', id).execute();
  const failed = (state: 'pending' | 'failed', attempts: number, next: string | null, error: string, id: number) => db.updateTable('budget_alerts')
    .set({ state, attempts, next_attempt_at: next, last_error: error }).where('id', '=', id).execute();
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  let again = false;

  /** One attempt: null when the receiver took it (2xx), else what went wrong. */
  function post(row: DueRow): Promise<string | null> {
    return postSignedWebhook({
      url: config.webhookUrl, secret: config.secret, body: row.payload, timestampSec: Math.floor(clock() / 1000),
      userAgent: 'tollgate-budget-alerts', headers: { 'x-tollgate-alert-id': String(row.id) }, timeoutMs: config.timeoutMs, signal: stop.signal,
    });
  }

  async function attempt(row: DueRow): Promise<void> {
    let error: string | null;
    try {
      error = await post(row);
    } catch (err) {
      // Cut by the stop: not an attempt of the receiver's, the row stays as it is for the next start.
      if (stop.signal.aborted) return;
      error = describe(err);
    }
    if (!storeOpen()) return;
    const nowMs = clock();
    if (error === null) {
      await delivered(nowIso(nowMs), row.id);
      return;
    }
    const attempts = row.attempts + 1;
    const giveUp = attempts >= config.maxAttempts;
    const next = giveUp ? null : nowIso(nowMs + retryDelayMs(attempts, config.backoffMs, config.maxBackoffMs));
    await failed(giveUp ? 'failed' : 'pending', attempts, next, error.slice(0, MAX_ERROR_CHARS), row.id);
    if (giveUp) log.error('budget alert not delivered; giving up', { alertId: row.id, attempts, error });
    else log.warn('budget alert delivery failed; will retry', { alertId: row.id, attempts, error, nextAttemptAt: next });
  }

  async function rounds(): Promise<void> {
    do {
      again = false;
      await beforeRound();
      while (!stop.signal.aborted && storeOpen()) {
        const rows = await due(nowIso(clock()), ROUND_SIZE);
        await Promise.all(rows.map(attempt));
        if (rows.length < ROUND_SIZE) break;
      }
    } while (again && !stop.signal.aborted);
  }

  function run(): void {
    if (stop.signal.aborted || !storeOpen()) return;
    if (running) {
      again = true;
      return;
    }
    running = rounds()
      .catch((err: unknown) => log.error('budget alert delivery failed', { err }))
      .finally(() => {
        running = null;
      });
  }

  const timer = setInterval(run, config.pollIntervalMs);
  timer.unref();
  // Deliveries left pending by the last run go out as soon as the gateway is up.
  setImmediate(run);

  return {
    wake() {
      setImmediate(run);
    },
    async close() {
      clearInterval(timer);
      stop.abort();
      await running;
    },
  };
}

function describe(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message ? message : String(err);
  return typeof code === 'string' ? `${code}: ${text}` : text;
}
