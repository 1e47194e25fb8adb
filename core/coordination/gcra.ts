/**
 * An exact, weighted Generic Cell Rate Algorithm (GCRA) limiter: `limit` units per `periodMs`, with a
 * burst of `limit` (a fresh caller may spend the whole period's allowance at once, then regains one
 * unit every `periodMs / limit` ms). Each key holds one number, its theoretical arrival time (TAT):
 * the moment its bucket is full again. A request of `cost` units is admitted when
 * `max(TAT, now) + cost × T − now ≤ periodMs`, with `T = periodMs / limit`, and moves TAT by `cost × T`.
 * This is equivalent to a sliding window without storing timestamps: O(1) memory per key.
 *
 * Exactness: `T` is rarely a whole number of ms (60,000 / 7), so a key's state is kept in integer
 * *ticks* of `1 / limit` ms, in which `T` is exactly `periodMs` ticks and the bucket holds
 * `periodMs × limit` ticks. Durations handed out are rounded UP to whole ms, so waiting them is
 * always enough. Time comes only from the `nowMs` arguments (integer ms); a clock that goes back is
 * read as no time passing.
 *
 * Memory: an entry whose TAT is not in the future is the same as no entry (a full bucket). It is kept
 * and updated in place until the whole map is swept, lazily, whenever it has doubled since the last
 * sweep: amortized O(1), and never more than about twice the keys active in the last period. Not
 * deleted when read: a key whose bucket refills between its requests (any generous limit) would be
 * deleted and added again per request, the churn that fills the old generation
 * (`core/http/running-exchanges.ts` says how).
 */

import { idleSweep } from './idle-sweep.ts';

export interface GcraOptions {
  /** Units per period, integer ≥ 1; also the burst. */
  limit: number;
  /** Window length in ms (60,000 for per-minute limits). */
  periodMs: number;
}

/** The outcome of `check` / `tryTake`, and the state `peek` reports. */
export interface GcraDecision {
  allowed: boolean;
  /** Whole units available after this decision (after the take when allowed); 0 when in debt. */
  remaining: number;
  /** Ms until the bucket is full again (0 = full now). */
  resetMs: number;
  /** Ms until `cost` units are available; 0 when allowed. */
  retryAfterMs: number;
  /** The cost actually counted: the requested one clamped to `[0, limit]`. */
  cost: number;
}

export interface GcraLimiter {
  readonly limit: number;
  readonly periodMs: number;
  /** Decides whether `cost` units are available now, without taking them. */
  check(key: string, cost: number, nowMs: number): GcraDecision;
  /** Takes `cost` units when available; a refusal takes nothing. A cost above `limit` is clamped to it. */
  tryTake(key: string, cost: number, nowMs: number): GcraDecision;
  /**
   * Settles a reservation: a positive `delta` charges that many more units (the key may go into
   * debt, which delays its next admission), a negative one gives units back (never beyond a full
   * bucket).
   */
  adjust(key: string, delta: number, nowMs: number): void;
  /** The key's state for a zero-cost look (`allowed` false only when in debt). */
  peek(key: string, nowMs: number): GcraDecision;
  /** Keys currently held (for tests and metrics). */
  size(): number;
}

/** A key's state: TAT − `atMs`, in ticks of 1/limit ms, as of `atMs`; ≤ 0 (or run out since) = a full bucket. */
interface Entry {
  atMs: number;
  ticks: number;
}

/** Builds a limiter. Throws on a limit or period that is not a positive integer. */
export function createGcraLimiter(options: GcraOptions): GcraLimiter {
  const { limit, periodMs } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`gcra: limit must be an integer ≥ 1, got ${limit}`);
  if (!Number.isInteger(periodMs) || periodMs < 1) throw new RangeError(`gcra: periodMs must be an integer ≥ 1, got ${periodMs}`);
  const unitTicks = periodMs;
  const entries = new Map<string, Entry>();

  /** Ticks until the key's bucket is full, as of `nowMs`. */
  function levelOf(key: string, nowMs: number): number {
    const entry = entries.get(key);
    return entry ? remainingTicks(entry, nowMs) : 0;
  }

  const sweep = idleSweep(entries, (entry: Entry, nowMs: number) => remainingTicks(entry, nowMs) <= 0);

  function remainingTicks(entry: Entry, nowMs: number): number {
    // Past 2^53 the product is inexact, but then it is far above any stored level, so the
    // comparison still decides right; below that (the only case where the difference is used) it is exact.
    const regainedTicks = Math.max(0, nowMs - entry.atMs) * limit;
    return regainedTicks >= entry.ticks ? 0 : entry.ticks - regainedTicks;
  }

  function store(key: string, ticks: number, nowMs: number): void {
    const entry = entries.get(key);
    if (entry) {
      entry.atMs = nowMs;
      entry.ticks = Math.max(0, ticks);
      return;
    }
    if (ticks <= 0) return;
    entries.set(key, { atMs: nowMs, ticks });
    sweep(nowMs);
  }

  const decide = (level: number, cost: number) => gcraDecide(level, cost, limit, periodMs);

  return {
    limit,
    periodMs,
    check: (key, cost, nowMs) => decide(levelOf(key, nowMs), cost),
    tryTake(key, cost, nowMs) {
      const level = levelOf(key, nowMs);
      const decision = decide(level, cost);
      if (decision.allowed) store(key, level + decision.cost * unitTicks, nowMs);
      return decision;
    },
    adjust(key, delta, nowMs) {
      if (!Number.isFinite(delta) || delta === 0) return;
      store(key, Math.max(0, levelOf(key, nowMs) + Math.trunc(delta) * unitTicks), nowMs);
    },
    peek: (key, nowMs) => decide(levelOf(key, nowMs), 0),
    size: () => entries.size,
  };
}

/**
 * The decision for a key whose bucket holds `levelTicks` (ticks of 1/`limit` ms until it is full
 * again, ≥ 0, as of now) when `cost` units are asked of a limit of `limit` units per `periodMs`:
 * the one pure function both the in-process limiter and the shared one (`coordination/`, whose Lua
 * script reports the levels) decide with, so they cannot disagree.
 */
export function gcraDecide(levelTicks: number, cost: number, limit: number, periodMs: number): GcraDecision {
  const unitTicks = periodMs;
  const capacityTicks = periodMs * limit;
  const units = clampCost(cost, limit);
  const after = levelTicks + units * unitTicks;
  const allowed = after <= capacityTicks;
  const settled = allowed ? after : levelTicks;
  return {
    allowed,
    remaining: Math.max(0, Math.floor((capacityTicks - settled) / unitTicks)),
    resetMs: Math.ceil(settled / limit),
    retryAfterMs: allowed ? 0 : Math.ceil((after - capacityTicks) / limit),
    cost: units,
  };
}

/** A cost as whole units in `[0, limit]`: fractions round up (a partial token still counts). */
export function clampCost(cost: number, limit: number): number {
  if (!(cost > 0)) return 0;
  return Math.min(limit, Math.ceil(cost));
}
