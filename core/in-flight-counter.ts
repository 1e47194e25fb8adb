/**
 * Requests in flight per gateway user and per API key (issue 14, item 9: 256 long streams of one
 * user made another user's request wait 22.7 s for an upstream connection). A slot is taken when a
 * model call passes the rate limits and given back when its response ends (the last byte of a stream,
 * or the client leaving), so a user holding many long streams is refused more instead of filling the
 * upstream pool that every user shares.
 */

export interface InFlightCounter {
  /** Requests of `key` in flight now. */
  count(key: string): number;
  take(key: string): void;
  release(key: string): void;
}

export function createInFlightCounter(): InFlightCounter {
  const inFlight = new Map<string, number>();
  return {
    count: (key) => inFlight.get(key) ?? 0,
    take(key) {
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    },
    release(key) {
      const left = (inFlight.get(key) ?? 1) - 1;
      // Forgotten at zero, so the map holds only callers with requests in flight.
      if (left <= 0) inFlight.delete(key);
      else inFlight.set(key, left);
    },
  };
}
