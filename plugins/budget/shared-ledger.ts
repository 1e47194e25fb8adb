/**
 * The budget ledger when several replicas share budgets (`PluginContext.budgetCounters`, Redis):
 * the limited users' spend and reservations are counted in the shared store, atomically, so the
 * replicas together never reserve beyond a limit; everything else is the in-process ledger's
 * (`ledger.ts`): users' limits and periods read from the database, and the spend's write-behind
 * deltas, which stay the spend of record (several replicas on one database add their deltas).
 *
 * Unlimited users never touch the shared store: nothing can refuse them, and their spend is still
 * recorded in the database; should they get a limit, the shared spend is seeded from it.
 *
 * The shared store is seeded from the database when it has no spend for a period (first use, or a
 * Redis restart): this replica's queued writes are flushed and the user's row re-read first. Writes
 * other replicas still have queued (at most their flush interval, 50 ms) are not in the seed.
 *
 * When the store is unreachable the counters either throw 503 `coordination_unavailable` (fail
 * closed) or answer null (fail open): then this replica's own ledger decides, as in one process.
 */
import { nowIso } from '../../core/store/store.ts';
import type { BudgetClaim, BudgetCounters, BudgetCounts, BudgetKey, SpendSeed } from '../../core/coordination/budget-counters.ts';
import type { BudgetStatus } from '../../core/services.ts';
import type { BudgetLedger, LedgerScope, LedgerSeam, Reservation, SpendChange } from './ledger.ts';
import { then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';

/** A period's spend outlives its window by a day: a settlement of a request started before the boundary. */
const KEEP_MARGIN_MS = 86_400_000;

/**
 * A shared ledger, plus what a joint reservation (`joint-reserve.ts`: a user's and their team's
 * budget in one atomic Redis step) needs of it.
 */
export interface SharedLedger extends LedgerSeam {
  readonly counters: BudgetCounters;
  /** This replica's own ledger of the same scope. */
  readonly local: BudgetLedger;
  /** The claim of `id`'s budget for a joint reservation; null when unlimited, undefined when unknown. */
  claimOf(id: number, nowMs: number): MaybePromise<(BudgetClaim & { status: BudgetStatus }) | null | undefined>;
  /** The counts Redis saw, applied to `status` (its remaining recomputed). */
  withCounts(status: BudgetStatus, counts: BudgetCounts): BudgetStatus;
}

/**
 * The ledger over `local` (limits, persistence) and `counters` (the shared spend and reservations).
 * `scope` 'team': the teams' ledger (its Redis keys are the team's, `redis-budget-counters.ts`).
 */
export function createSharedBudgetLedger(local: BudgetLedger, counters: BudgetCounters, scope: LedgerScope = 'user'): SharedLedger {
  function keyOf(userId: number, status: BudgetStatus, nowMs: number): BudgetKey {
    const { startMs, resetsAtMs } = status.window;
    const keepMs = resetsAtMs === null ? 0 : Math.max(1, resetsAtMs - nowMs) + KEEP_MARGIN_MS;
    return scope === 'team' ? { userId, scope, periodStartIso: nowIso(startMs), keepMs } : { userId, periodStartIso: nowIso(startMs), keepMs };
  }

  /** The stored spend of the period: this replica's queued writes flushed, the row re-read. */
  function seedOf(userId: number, nowMs: number): SpendSeed {
    return () => then(local.invalidate(userId), () => then(local.status(userId, nowMs), (status) => status?.spentNanos ?? 0));
  }

  function withCounts(status: BudgetStatus, counts: BudgetCounts): BudgetStatus {
    const limitNanos = status.limitNanos;
    const remainingNanos = limitNanos === null ? null : Math.max(0, limitNanos - counts.spentNanos - counts.reservedNanos);
    return Object.assign({}, status, { spentNanos: counts.spentNanos, reservedNanos: counts.reservedNanos, remainingNanos });
  }

  return {
    counters,
    local,
    withCounts,
    claimOf(id, nowMs) {
      return then(local.status(id, nowMs), (status) => {
        if (!status) return undefined;
        if (status.limitNanos === null) return null;
        return { key: keyOf(id, status, nowMs), limitNanos: status.limitNanos, seed: seedOf(id, nowMs), status };
      });
    },
    status(userId, nowMs) {
      return then(local.status(userId, nowMs), (status) => {
        if (!status || status.limitNanos === null) return status;
        return counters.read(keyOf(userId, status, nowMs), seedOf(userId, nowMs)).then((counts) => (counts ? withCounts(status, counts) : status));
      });
    },
    reserve(userId, amountNanos, nowMs) {
      return then(local.status(userId, nowMs), (status) => {
        if (!status || status.limitNanos === null) return local.reserve(userId, amountNanos, nowMs);
        const limitNanos = status.limitNanos;
        return counters.reserve(keyOf(userId, status, nowMs), amountNanos, limitNanos, seedOf(userId, nowMs)).then((taken): MaybePromise<Reservation | BudgetStatus> => {
          // Unreachable, failing open: this replica's own count decides.
          if (!taken) return local.reserve(userId, amountNanos, nowMs);
          if (!taken.held) return withCounts(status, taken.counts);
          return { userId, amountNanos, held: taken.held };
        });
      });
    },
    async settle(reservation, actualNanos, nowMs, requestId) {
      const held = reservation.held;
      if (!held) return local.settle(reservation, actualNanos, nowMs, requestId);
      const status = await local.status(reservation.userId, nowMs);
      // The spend goes to the period now (as in one process); the reservation is dropped from its own.
      const key = status ? keyOf(reservation.userId, status, nowMs) : held.key;
      // Redis first: a seed read now must not already hold this request's spend.
      const afterNanos = await counters.settle(held, key, actualNanos, seedOf(reservation.userId, nowMs));
      // Its reservation was never in this replica's count: release nothing here, record the spend.
      const change = local.settle({ userId: reservation.userId, amountNanos: 0 }, actualNanos, nowMs, requestId);
      if (!change || afterNanos === null) return change;
      // The alerts look at the spend of all replicas: only the settlement that crosses a threshold fires it.
      const shared: SpendChange = Object.assign({}, change, { beforeNanos: Math.max(0, afterNanos - actualNanos), afterNanos });
      return shared;
    },
    invalidate: (userId) => local.invalidate(userId),
    flush: () => local.flush(),
    close: () => local.close(),
  };
}
