/**
 * Wall-clock time as an injectable function, so budgets and rate limits can be tested at exact
 * boundaries without waiting. Plugins read time from `PluginContext.clock`, never `Date.now()`.
 */

/** Milliseconds since the Unix epoch (the shape of `Date.now`). */
export type Clock = () => number;

/** The real wall clock. */
export const systemClock: Clock = () => Date.now();
