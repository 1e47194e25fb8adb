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

/** Which period's counters: a user's (or a team's), for the window starting at `periodStartIso`. */
export interface BudgetKey {
  /** The user's id; with `scope` 'team', the team's. */
  readonly userId: number;
  /** 'team': a team's budget (schema v23); absent = a user's. */
  readonly scope?: 'team';
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

/** One budget a joint reservation must fit (`BudgetCounters.reserveAll`). */
export interface BudgetClaim {
  readonly key: BudgetKey;
  /** Integer nano-USD. */
  readonly limitNanos: number;
  readonly seed: SpendSeed;
}

/** What `reserveAll` did: the held reservations (one per claim, in order) or the claim that refused, and the counts each claim saw. */
export interface JointTake {
  /** Null when refused. */
  readonly held: HeldReservation[] | null;
  /** Index of the first claim the amount did not fit; -1 when reserved. */
  readonly refused: number;
  readonly counts: BudgetCounts[];
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
   * Reserves `amountNanos` against every claim (a user's and their team's budget) in ONE atomic
   * step, all or nothing: only when it fits each. Null / throws as `read` when unreachable.
   */
  reserveAll(claims: readonly BudgetClaim[], amountNanos: number): Promise<JointTake | null>;
  /**
   * Ends `held` (its reservation is dropped) and adds `actualNanos` (integer ≥ 0) to the spend of
   * `key` (the period now, normally the reservation's). Resolves with the spend after, or null when
   * the store was unreachable (the settlement is lost there; the database still records it). Never throws.
   */
  settle(held: HeldReservation, key: BudgetKey, actualNanos: number, seed: SpendSeed): Promise<number | null>;
}
