/**
 * Failed-login throttling for the admin UI: at most `maxFailures` failures per username and
 * `4 × maxFailures` per client address within a sliding `windowMs`; past that, login answers 429
 * until the oldest failure leaves the window. A success clears the username's count (not the
 * address's: one address guessing many names stays limited). Counts live in memory: a restart
 * forgets them, which only helps someone who can restart the gateway anyway.
 */
export interface LoginThrottle {
  /** Ms until a login for this username from this address may be tried; 0 = now. */
  retryAfterMs(username: string, ip: string, nowMs: number): number;
  recordFailure(username: string, ip: string, nowMs: number): void;
  recordSuccess(username: string): void;
}

const MAX_TRACKED_KEYS = 10_000;

export function createLoginThrottle(maxFailures: number, windowMs: number): LoginThrottle {
  const failures = new Map<string, number[]>();

  const recent = (key: string, nowMs: number): number[] => {
    const times = (failures.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    if (times.length === 0) failures.delete(key);
    else failures.set(key, times);
    return times;
  };
  const waitFor = (key: string, limit: number, nowMs: number): number => {
    const times = recent(key, nowMs);
    return times.length < limit ? 0 : times[times.length - limit]! + windowMs - nowMs;
  };
  const add = (key: string, nowMs: number) => {
    // An attacker spraying names must not grow the map without bound: forget the oldest entries.
    if (failures.size >= MAX_TRACKED_KEYS && !failures.has(key)) failures.delete(failures.keys().next().value!);
    failures.set(key, [...recent(key, nowMs), nowMs]);
  };

  return {
    retryAfterMs(username, ip, nowMs) {
      return Math.max(waitFor(`u:${username.toLowerCase()}`, maxFailures, nowMs), waitFor(`ip:${ip}`, maxFailures * 4, nowMs));
    },
    recordFailure(username, ip, nowMs) {
      add(`u:${username.toLowerCase()}`, nowMs);
      add(`ip:${ip}`, nowMs);
    },
    recordSuccess(username) {
      failures.delete(`u:${username.toLowerCase()}`);
    },
  };
}
