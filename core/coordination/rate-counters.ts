/**
 * The seam between the rate-limit plugin and where its counters live (ARCHITECTURE.md, "Several
 * replicas"): GCRA buckets for requests and tokens per minute, and in-flight slots for concurrency.
 * One process keeps them in memory (`createLocalRateCounters`, here); several replicas share them in
 * Redis (`coordination/redis-rate-counters.ts`). The manifest's `coordination` section picks one at
 * boot (`coordination/index.ts`) and hands it to plugins as `PluginContext.rateCounters`; the plugin
 * decides what to limit and what to answer, never where the counts are kept.
 *
 * The in-process counters answer synchronously (the rate-limit hooks then spend no promise or
 * microtask on them); the shared ones with promises (`MaybePromise`). The in-process one never fails.
 * A shared one that cannot reach its store either throws 503 `coordination_unavailable` (fail closed,
 * the default) or answers "allowed, state unknown" (`decisions: null`, fail open).
 */
import { createGcraLimiter, gcraDecide, type GcraDecision, type GcraLimiter } from './gcra.ts';
import { createInFlightCounter } from './in-flight-counter.ts';
import type { Clock } from '../runtime/clock.ts';
import type { MaybePromise } from '../runtime/maybe-promise.ts';

/** One GCRA bucket: `limit` units per `periodMs`, under a caller's name. */
export interface RateBucket {
  /**
   * Whose bucket, unique across dimensions and scopes (`requests:user:7`, `tokens:key:12`). The limit
   * is part of its identity: the same name at another limit is another bucket, so a changed limit
   * starts full.
   */
  name: string;
  /** Units per period, integer ≥ 1; also the burst. */
  limit: number;
  /** Window in ms (60,000 for per-minute limits). */
  periodMs: number;
}

/** The outcome of `take`. */
export interface RateTake {
  /** True when every bucket allowed and all were taken from; false = none was. */
  allowed: boolean;
  /**
   * Per bucket, in order: the decision for its cost as of the take (`retryAfterMs` of each refusing
   * bucket, the clamped `cost` taken). Null when the state is unknown (shared store down, fail open).
   */
  decisions: GcraDecision[] | null;
  /** Per bucket: its state after the outcome (a zero-cost look), for the headers. Null as above. */
  after: GcraDecision[] | null;
}

/** One concurrency limit: at most `limit` leases held under `name` (`user:7`, `key:12`) at once. */
export interface SlotLimit {
  name: string;
  limit: number;
}

const LOCAL_LEASE = 'local';

/** Slots held by one request; give it back to `release`. */
export interface SlotLease {
  /** The shared counters' lease id; `'local'` for every lease of the in-process ones, which need none. */
  readonly id: string;
  readonly names: readonly string[];
}

/** The outcome of `acquire`: a lease on every slot, or the index of the first full one (none taken). */
export type SlotGrant = { lease: SlotLease; full: null } | { lease: null; full: number };

export interface RateCounters {
  /** True when the counters are shared by several replicas (Redis); false in process. */
  readonly shared: boolean;
  /**
   * Checks every bucket for its cost (`costs[i]` units of `buckets[i]`, clamped to `[0, limit]`,
   * fractions rounded up) and takes from all of them only when each allows: all or nothing.
   */
  take(buckets: readonly RateBucket[], costs: readonly number[]): MaybePromise<RateTake>;
  /** Each bucket's state now (a zero-cost look); null when unknown (a shared store down). Never throws. */
  peek(buckets: readonly RateBucket[]): MaybePromise<GcraDecision[] | null>;
  /**
   * Settles a reservation: `deltaUnits` > 0 charges more (the bucket may go into debt), < 0 gives back
   * (never beyond full). A shared store that is down loses the settlement (logged), never throws.
   */
  settle(bucket: RateBucket, deltaUnits: number): MaybePromise<void>;
  /** Takes one slot of every limit when none is full; takes nothing otherwise. */
  acquire(slots: readonly SlotLimit[]): MaybePromise<SlotGrant>;
  /** Gives a lease's slots back. Never throws (a shared lease left behind expires with its TTL). */
  release(lease: SlotLease): MaybePromise<void>;
  /** Stops timers and closes connections; the counters are unusable after. */
  close(): Promise<void>;
}

/**
 * The in-process counters: one exact GCRA limiter (`gcra.ts`) per (limit, period) and one in-flight
 * counter (`in-flight-counter.ts`), timed by `clock` (tests move it by hand). State is lost on restart.
 */
export function createLocalRateCounters(clock: Clock): RateCounters {
  // By period, then by limit: no key string to build per bucket and call.
  const limiters = new Map<number, Map<number, GcraLimiter>>();
  const limiterOf = (bucket: RateBucket): GcraLimiter => {
    let byLimit = limiters.get(bucket.periodMs);
    if (!byLimit) limiters.set(bucket.periodMs, (byLimit = new Map<number, GcraLimiter>()));
    let limiter = byLimit.get(bucket.limit);
    if (!limiter) byLimit.set(bucket.limit, (limiter = createGcraLimiter({ limit: bucket.limit, periodMs: bucket.periodMs })));
    return limiter;
  };
  const inFlight = createInFlightCounter();

  return {
    shared: false,
    take(buckets, costs) {
      const nowMs = clock();
      const limitersOf = buckets.map(limiterOf);
      const decisions = buckets.map((b, i) => limitersOf[i]!.check(b.name, costs[i]!, nowMs));
      const allowed = decisions.every((d) => d.allowed);
      if (allowed) for (let i = 0; i < buckets.length; i++) limitersOf[i]!.tryTake(buckets[i]!.name, decisions[i]!.cost, nowMs);
      return { allowed, decisions, after: buckets.map((b, i) => limitersOf[i]!.peek(b.name, nowMs)) };
    },
    peek(buckets) {
      const nowMs = clock();
      return buckets.map((b) => limiterOf(b).peek(b.name, nowMs));
    },
    settle(bucket, deltaUnits) {
      limiterOf(bucket).adjust(bucket.name, deltaUnits, clock());
    },
    acquire(slots) {
      const full = slots.findIndex((slot) => inFlight.count(slot.name) >= slot.limit);
      if (full >= 0) return { lease: null, full };
      for (const slot of slots) inFlight.take(slot.name);
      // No id: only the shared counters' leases need one (and a new number's string per request is
      // kept by V8's number-to-string cache, in the old generation, until it is overwritten).
      return { lease: { id: LOCAL_LEASE, names: slots.map((s) => s.name) }, full: null };
    },
    release(lease) {
      for (const name of lease.names) inFlight.release(name);
    },
    async close() {},
  };
}

/** The decision of a bucket holding `levelTicks`, and its state after the outcome (`gcraDecide`). */
export function decisionsOf(bucket: RateBucket, levelTicks: number, cost: number, allowed: boolean): { decision: GcraDecision; after: GcraDecision } {
  const decision = gcraDecide(levelTicks, cost, bucket.limit, bucket.periodMs);
  const afterTicks = allowed ? levelTicks + decision.cost * bucket.periodMs : levelTicks;
  return { decision, after: gcraDecide(afterTicks, 0, bucket.limit, bucket.periodMs) };
}
