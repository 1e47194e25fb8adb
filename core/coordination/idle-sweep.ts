/**
 * Keeps a long-lived map bounded without deleting an entry the moment it goes idle: its idle entries
 * are forgotten all at once whenever it has doubled in size since the last sweep (at least
 * `minSize`). Amortized O(1) a call; the map holds about twice the entries recently in use at most.
 * Why not delete at once: an entry deleted and added again per request is the churn that fills V8's
 * old generation (`core/http/running-exchanges.ts` says how).
 *
 * Returns the function to call after each insertion; `at` is passed to `isIdle` (a clock reading).
 */
export function idleSweep<K, V, A>(map: Map<K, V>, isIdle: (value: V, at: A) => boolean, minSize = 1024): (at: A) => void {
  let nextAt = minSize;
  return (at) => {
    if (map.size < nextAt) return;
    for (const [key, value] of map) if (isIdle(value, at)) map.delete(key);
    nextAt = Math.max(minSize, map.size * 2);
  };
}
