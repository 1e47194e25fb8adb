/**
 * Durable webhook delivery, shared by budget alerts (`plugins/budget/alert-delivery.ts`, table
 * `budget_alerts`) and reconciliation alerts (`core/reconcile/reconciliation-alerts.ts`, table
 * `reconciliation_alerts`): a job that POSTs each due 'pending' row of a queue table, signed
 * (`signed-webhook.ts`), and records the outcome on the row. A failed attempt (network error,
 * timeout, non-2xx) is retried after an exponential backoff with jitter, until `maxAttempts`, then the
 * row is 'failed'. The queue (which table, which columns) is the caller's.
 *
 * Why nothing is lost: the row is committed before it is sent, and only an answered attempt changes
 * it, so rows pending at a stop or a crash are sent after the restart. The price is at-least-once: an
 * attempt cut by the stop (or a crash) after the receiver took it is sent again; receivers dedupe on
 * `x-tollgate-alert-id`.
 *
 * Why it never stalls or kills the gateway: each attempt is bounded by `timeoutMs`, one round runs at
 * a time, and every error is logged, never thrown out of a timer.
 */
import type { Clock } from '../runtime/clock.ts';
import type { Log } from '../runtime/log.ts';
import { postSignedWebhook } from './signed-webhook.ts';

/** Rows sent at once per round. */
const ROUND_SIZE = 20;
/** Longest `last_error` kept (a receiver's error page is not worth storing whole). */
const MAX_ERROR_CHARS = 300;

/** A due row of the queue. */
export interface DueWebhook {
  id: number;
  /** The exact JSON body to send. */
  payload: string;
  /** Attempts made so far. */
  attempts: number;
}

/** The queue table, as the delivery reads and updates it. Times are ISO-8601 UTC. */
export interface WebhookQueue {
  /** Up to `limit` 'pending' rows due at `nowIso`, oldest due first. */
  due(nowIso: string, limit: number): Promise<DueWebhook[]>;
  /** The receiver took it: 'delivered', attempts + 1. */
  delivered(id: number, atIso: string): Promise<void>;
  /** An attempt failed: still 'pending' until `nextAttemptAt`, or 'failed' (null `nextAttemptAt`). */
  failed(id: number, outcome: { state: 'pending' | 'failed'; attempts: number; nextAttemptAt: string | null; error: string }): Promise<void>;
}

export interface WebhookDeliverySettings {
  webhookUrl: string;
  /** HMAC-SHA256 key of `x-tollgate-signature`. */
  secret: string;
  /** Bound on each attempt, ms. */
  timeoutMs: number;
  maxAttempts: number;
  /** First retry delay, ms; each next one doubles, with jitter, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** How often due rows are looked for, ms; 0 = no timer (`drain` only). */
  pollIntervalMs: number;
}

export interface WebhookDeliveryDeps {
  clock: Clock;
  log: Log;
  /** The `user-agent` of the POSTs, e.g. `tollgate-budget-alerts`. */
  userAgent: string;
  /** What the logs call one row, e.g. `budget alert`. */
  noun: string;
  /** The `x-tollgate-alert-id` of a row. */
  alertIdOf(id: number): string;
  /** False once the store is closed: a round then stops. Default: always open. */
  storeOpen?: () => boolean;
  /** Runs first each round (e.g. flushes queued writes); awaited. */
  beforeRound?: () => void | Promise<void>;
}

export interface WebhookDelivery {
  /** Sends what is due soon (call after a new row was committed). */
  wake(): void;
  /** Runs a round now (one attempt of each due row) and resolves when it ends. */
  drain(): Promise<void>;
  /** Stops the job: attempts in flight are cut and left pending, for the next start. */
  close(): Promise<void>;
}

/**
 * Delay before the attempt after `attempts` failed ones, ms: `backoffMs` × 2^(attempts − 1), times a
 * jitter factor from 0.5 to 1.5 (`random` in [0, 1)), at most `maxBackoffMs`. Jitter spreads the
 * retries of many rows that failed together (a receiver that was down).
 */
export function retryDelayMs(attempts: number, backoffMs: number, maxBackoffMs: number, random: () => number = Math.random): number {
  const exponential = backoffMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30);
  return Math.max(1, Math.round(Math.min(maxBackoffMs, exponential * (0.5 + random()))));
}

/** Starts the delivery job over `queue`; rows left pending by the last run go out at once. */
export function createWebhookDelivery(queue: WebhookQueue, settings: WebhookDeliverySettings, deps: WebhookDeliveryDeps): WebhookDelivery {
  const storeOpen = deps.storeOpen ?? (() => true);
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  let again = false;

  async function attempt(row: DueWebhook): Promise<void> {
    let error: string | null;
    try {
      error = await postSignedWebhook({
        url: settings.webhookUrl, secret: settings.secret, body: row.payload, timestampSec: Math.floor(deps.clock() / 1000),
        userAgent: deps.userAgent, headers: { 'x-tollgate-alert-id': deps.alertIdOf(row.id) }, timeoutMs: settings.timeoutMs, signal: stop.signal,
      });
    } catch (err) {
      // Cut by the stop: not an attempt of the receiver's, the row stays as it is for the next start.
      if (stop.signal.aborted) return;
      error = describe(err);
    }
    if (!storeOpen()) return;
    const nowMs = deps.clock();
    if (error === null) return queue.delivered(row.id, new Date(nowMs).toISOString());
    const attempts = row.attempts + 1;
    const giveUp = attempts >= settings.maxAttempts;
    const next = giveUp ? null : new Date(nowMs + retryDelayMs(attempts, settings.backoffMs, settings.maxBackoffMs)).toISOString();
    await queue.failed(row.id, { state: giveUp ? 'failed' : 'pending', attempts, nextAttemptAt: next, error: error.slice(0, MAX_ERROR_CHARS) });
    if (giveUp) deps.log.error(`${deps.noun} not delivered; giving up`, { alertId: row.id, attempts, error });
    else deps.log.warn(`${deps.noun} delivery failed; will retry`, { alertId: row.id, attempts, error, nextAttemptAt: next });
  }

  async function rounds(): Promise<void> {
    do {
      again = false;
      await deps.beforeRound?.();
      while (!stop.signal.aborted && storeOpen()) {
        const rows = await queue.due(new Date(deps.clock()).toISOString(), ROUND_SIZE);
        await Promise.all(rows.map(attempt));
        if (rows.length < ROUND_SIZE) break;
      }
    } while (again && !stop.signal.aborted);
  }

  function run(): Promise<void> {
    if (stop.signal.aborted || !storeOpen()) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = rounds()
      .catch((err: unknown) => deps.log.error(`${deps.noun} delivery failed`, { err }))
      .finally(() => {
        running = null;
      });
    return running;
  }

  const timer = settings.pollIntervalMs > 0 ? setInterval(() => void run(), settings.pollIntervalMs) : null;
  timer?.unref();
  if (timer) setImmediate(() => void run());

  return {
    wake() {
      setImmediate(() => void run());
    },
    drain: run,
    async close() {
      if (timer) clearInterval(timer);
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
