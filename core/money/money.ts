/**
 * Money units, and the only place they are converted. The gateway counts in integers: request costs,
 * spend and reservations in nano-USD (1 USD = 1e9 nanos, so one token at $0.000001/M still has a
 * whole-number cost), budget limits as stored in micro-USD (`gateway_users.budget_limit_micros`).
 * Prices are USD per million tokens (what providers publish); some API views show them per 1,000.
 * USD as a float appears only at the edges: what an operator types, what an API shows.
 */

/** Nano-USD in one USD. */
export const NANOS_PER_USD = 1e9;

/** Nano-USD in one micro-USD (the unit of `budget_limit_micros`). */
export const NANOS_PER_MICRO = 1_000;

const MICROS_PER_USD = 1_000_000;

/** Integer nano-USD → USD, for display (`cost_usd`, `spent_usd`): 150 → 0.00000015. */
export function usd(nanos: number): number {
  return nanos / NANOS_PER_USD;
}

/** USD → integer nano-USD, rounded to the nearest nano (a USD-per-million rate → nanos per million tokens). */
export function usdToNanos(usd: number): number {
  return Math.round(usd * NANOS_PER_USD);
}

/** USD (e.g. 5, 0.15) → integer micro-USD, rounded to the nearest micro-dollar. */
export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

/** Integer micro-USD → USD for display. */
export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** Integer micro-USD → integer nano-USD (exact). */
export function microsToNanos(micros: number): number {
  return micros * NANOS_PER_MICRO;
}

/**
 * A price in USD per 1,000 tokens from USD per million, without float noise: 0.15 → 0.00015, not
 * 0.00015000000000000001 (rounded to 12 significant digits). Null stays null (no such rate).
 */
export function per1k(usdPerMillion: number | null): number | null {
  return usdPerMillion === null ? null : Number((usdPerMillion / 1000).toPrecision(12));
}
