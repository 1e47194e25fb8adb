/**
 * Budget alerts, the firing side: which thresholds a settlement's spend crossed, and the webhook
 * body each one sends (docs/budgets-and-pricing.md "Budget alerts"). Delivery is `alert-delivery.ts`.
 *
 * Why "once per threshold per period" holds: a threshold fires only on the settlement whose spend
 * crosses it (before < threshold ≤ after), computed synchronously on the ledger's one in-memory record
 * per user, so two concurrent requests can never both see the crossing; and the alert is queued in the
 * same write-behind group as that spend, so both commit in one transaction, where the table's
 * UNIQUE (user, period start, threshold) key ignores any duplicate (a limit lowered and raised again,
 * another process). After a restart the persisted spend is already past the threshold, so it cannot
 * be crossed again in that period. Reservations never fire: only spend that was billed.
 */
import { nowIso } from '../../core/store/store.ts';
import { usd } from '../../core/money/money.ts';
import type { WriteBehind } from '../../core/request-log/write-behind.ts';
import type { SpendChange } from './ledger.ts';

/** The webhook's JSON body (`type` "budget.threshold"). Money in integer nano-USD, with USD beside it for people. */
export interface BudgetAlertPayload {
  type: 'budget.threshold';
  user: { id: number; name: string };
  /** The budget period the spend belongs to (ISO-8601 UTC); `end` null for the period "never". */
  period: { start: string; end: string | null };
  spent_nanos: number;
  spent_usd: number;
  limit_nanos: number;
  limit_usd: number;
  threshold_percent: number;
  fired_at: string;
}

/**
 * The thresholds (percents of `limitNanos`) that spend going from `beforeNanos` to `afterNanos`
 * crossed, ascending: those with before < limit × t / 100 ≤ after. None for an unlimited or zero limit.
 */
export function crossedThresholds(beforeNanos: number, afterNanos: number, limitNanos: number | null, thresholds: readonly number[]): number[] {
  if (limitNanos === null || limitNanos <= 0) return [];
  return thresholds
    .filter((percent) => {
      const atNanos = Math.ceil((limitNanos * percent) / 100);
      return beforeNanos < atNanos && afterNanos >= atNanos;
    })
    .sort((a, b) => a - b);
}

/** The webhook body for `change` crossing `percent` at `nowMs`. */
export function alertPayload(change: SpendChange, percent: number, nowMs: number): BudgetAlertPayload {
  const limitNanos = change.limitNanos ?? 0;
  return {
    type: 'budget.threshold',
    user: { id: change.userId, name: change.userName },
    period: { start: nowIso(change.window.startMs), end: change.window.resetsAtMs === null ? null : nowIso(change.window.resetsAtMs) },
    spent_nanos: change.afterNanos,
    spent_usd: usd(change.afterNanos),
    limit_nanos: limitNanos,
    limit_usd: usd(limitNanos),
    threshold_percent: percent,
    fired_at: nowIso(nowMs),
  };
}

export interface AlertFiring {
  /**
   * Queues an alert for each threshold `change` crossed, in the write group `requestId` (the spend's),
   * so they commit with that spend. Returns how many were queued.
   */
  onSpend(change: SpendChange, requestId: string, nowMs: number): number;
}

/**
 * Alerts for the manifest's `defaultThresholds` (a user's own replace them), written through `writes`;
 * `deliver` false records them as unsent (no webhook configured).
 */
export function createAlertFiring(defaultThresholds: readonly number[], writes: WriteBehind, deliver: boolean): AlertFiring {
  return {
    onSpend(change, requestId, nowMs) {
      const crossed = crossedThresholds(change.beforeNanos, change.afterNanos, change.limitNanos, change.alertThresholds ?? defaultThresholds);
      for (const percent of crossed) {
        const payload = alertPayload(change, percent, nowMs);
        writes.enqueue({
          kind: 'alert', group: requestId, userId: change.userId, periodStartIso: payload.period.start, thresholdPercent: percent,
          firedAtIso: payload.fired_at, payload: JSON.stringify(payload), deliver,
        });
      }
      return crossed.length;
    },
  };
}
