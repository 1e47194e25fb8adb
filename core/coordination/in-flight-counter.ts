/**
 * Requests in flight per gateway user and per API key (issue 14, item 9: 256 long streams of one
 * user made another user's request wait 22.7 s for an upstream connection). A slot is taken when a
 * model call passes the rate limits and given back when its response ends (the last byte of a stream,
 * or the client leaving), so a user holding many long streams is refused more instead of filling the
 * upstream pool that every user shares.
 */

import { idleSweep } from './idle-sweep.ts';

export interface InFlightCounter {
  /** Requests of `key` in flight now. */
  count(key: string): number;
  take(key: string): void;
  release(key: string): void;
  /** Callers held, zeros not yet swept included (for tests). */
  size(): number;
}

/**
 * A count that drops to zero stays, and the callers at zero are forgotten together when the map has
 * doubled since the last sweep (so it holds about twice the callers recently in flight at most). Not
 * deleted at zero: a caller with one request at a time would be deleted and added again per request,
 * the churn that fills the old generation (`core/http/running-exchanges.ts` says how).
 */
export function createInFlightCounter(): InFlightCounter {
  const inFlight = new Map<string, number>();
  const sweep = idleSweep<string, number, void>(inFlight, (count) => count <= 0);
  return {
    count: (key) => inFlight.get(key) ?? 0,
    take(key) {
      const count = inFlight.get(key);
      if (count !== undefined) {
        inFlight.set(key, count + 1);
        return;
      }
      inFlight.set(key, 1);
      sweep();
    },
    release(key) {
      const count = inFlight.get(key);
      if (count !== undefined && count > 0) inFlight.set(key, count - 1);
    },
    size: () => inFlight.size,
  };
}
