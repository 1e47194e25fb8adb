/**
 * The seam between the budget plugin and a budget store shared by several replicas (ARCHITECTURE.md,
 * "Several replicas"). One process needs none: the plugin's in-memory ledger is exact there
 * (`PluginContext.budgetCounters` is null). Several replicas get the Redis one
 * (`coordination/redis-budget-counters.ts`), picked at boot from the manifest's `coordination`.
 *
 * The counters hold, per user and budget period, the spend (integer nano-USD) and the live
 * reservations; the plugin keeps deciding what to reserve, what to answer and which alerts fire.
 * The spend of record stays in the database (the write-behind deltas the plugin queues): when the
 * shared store has no spend for a period (first use, or the store restarted empty) it is seeded from
 * the database, through the `seed` callback, read only then.
 */

/** Which period's counters: a user's, for the window starting at `periodStartIso`. */
export interface BudgetKey {
  readonly userId: number;
  /** The budget window's start, ISO-8601 UTC (`calendar-period.ts`, in the configured time zone). */
  readonly periodStartIso: string;
  /** How long the period's spend must be kept, ms (until the window ends, plus margin); 0 = forever (period "never"). */
  readonly keepMs: number;
}

/** A period's shared state, nano-USD. */
export interface BudgetCounts {
  readonly spentNanos: number;
  /** The sum of the live (unexpired, unsettled) reservations. */
  readonly reservedNanos: number;
}

/** The stored spend of the key's period (nano-USD), read from the database; called only when the shared store has none. */
export type SpendSeed = () => number | Promise<number>;

/** A reservation held in the shared store; give it to `settle`. */
export interface HeldReservation {
  readonly key: BudgetKey;
  readonly id: string;
}

export interface BudgetCounters {
  /**
   * The period's spend and live reservations. Null when unknown (store unreachable, fail open);
   * throws 503 `coordination_unavailable` when unreachable and failing closed.
   */
  read(key: BudgetKey, seed: SpendSeed): Promise<BudgetCounts | null>;
  /**
   * Reserves `amountNanos` (integer ≥ 0) all or nothing: only when spent + live reservations +
   * amount ≤ `limitNanos`. Resolves with the held reservation (null when refused) and the counts it
   * saw (after the reservation when taken). Null / throws as `read` when the store is unreachable.
   */
  reserve(key: BudgetKey, amountNanos: number, limitNanos: number, seed: SpendSeed): Promise<{ held: HeldReservation | null; counts: BudgetCounts } | null>;
  /**
   * Ends `held` (its reservation is dropped) and adds `actualNanos` (integer ≥ 0) to the spend of
   * `key` (the period now, normally the reservation's). Resolves with the spend after, or null when
   * the store was unreachable (the settlement is lost there; the database still records it). Never throws.
   */
  settle(held: HeldReservation, key: BudgetKey, actualNanos: number, seed: SpendSeed): Promise<number | null>;
}
