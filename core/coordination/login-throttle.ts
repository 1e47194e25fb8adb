/**
 * Failed-login throttling for the admin UI, counted before the password is checked.
 *
 * An attempt is reserved synchronously (`begin`) before the asynchronous scrypt runs, and settled
 * after it (`failed` / `succeeded`), so 100 concurrent guesses are counted as 100, not evaluated
 * against a count that none of them has updated yet. Rules, within a sliding `windowMs`:
 * - per address: `4 × maxFailures` failures are free (an address may be shared by several admins);
 *   after that each attempt waits an exponential backoff after the address's last failure,
 *   1 s × 2^(failures − 4 × maxFailures), at most `windowMs`.
 * - per username: once a username has `maxFailures` failures from anywhere, only addresses that have
 *   failed (or have an attempt in flight) are refused for it, until its oldest failure leaves the
 *   window. An address with no failures always gets to try: guesses by others never lock out the
 *   real admin.
 * Attempts in flight count as failures until settled, so a burst of concurrent guesses is cut at
 * the limit (the rest answered 429 with a 1 s retry).
 * A success clears the username's failures, not the address's (one address guessing many names stays
 * limited). Counts live in memory: a restart forgets them, which only helps someone who can restart
 * the gateway anyway. Several replicas share them in Redis instead (`coordination/redis-login-throttle.ts`).
 */

/** A reserved attempt. Settle it exactly once; later calls are ignored. */
export interface LoginAttempt {
  /** The password was wrong (or the username unknown). */
  failed(nowMs: number): void;
  /** The password was right. */
  succeeded(): void;
  /** Neither: the check itself threw. Frees the reservation without counting a failure. */
  release(): void;
}

/** What `begin` answers: the reserved attempt, or how long this address must wait (> 0 ms). */
export type LoginReservation = { attempt: LoginAttempt } | { retryAfterMs: number };

export interface LoginThrottle {
  /**
   * Reserves an attempt for `username` from `ip` at `nowMs`, before the password is checked. The
   * shared throttle (`coordination/redis-login-throttle.ts`) answers asynchronously.
   */
  begin(username: string, ip: string, nowMs: number): LoginReservation | Promise<LoginReservation>;
}

/** The in-process throttle: it answers at once. */
export interface LocalLoginThrottle extends LoginThrottle {
  begin(username: string, ip: string, nowMs: number): LoginReservation;
}

const MAX_TRACKED_KEYS = 10_000;
/** The first backoff after an address used its free failures. */
export const LOGIN_BACKOFF_BASE_MS = 1_000;

export function createLoginThrottle(maxFailures: number, windowMs: number): LocalLoginThrottle {
  const failures = new Map<string, number[]>();
  const inFlight = new Map<string, number>();
  const addressAllowance = 4 * maxFailures;
  const pendingOf = (key: string) => inFlight.get(key) ?? 0;
  const shift = (key: string, by: 1 | -1) => {
    const left = pendingOf(key) + by;
    if (left > 0) inFlight.set(key, left);
    else inFlight.delete(key);
  };

  const recent = (key: string, nowMs: number): number[] => {
    const times = (failures.get(key) ?? []).filter((t) => t > nowMs - windowMs);
    if (times.length === 0) failures.delete(key);
    else failures.set(key, times);
    return times;
  };
  const add = (key: string, nowMs: number) => {
    // An attacker spraying names must not grow the map without bound: forget the oldest entries.
    if (failures.size >= MAX_TRACKED_KEYS && !failures.has(key)) failures.delete(failures.keys().next().value!);
    failures.set(key, [...recent(key, nowMs), nowMs]);
  };
  const addressWaitMs = (ipKey: string, ipTimes: number[], nowMs: number): number => {
    const pending = pendingOf(ipKey);
    if (ipTimes.length + pending < addressAllowance) return 0;
    if (pending > 0) return LOGIN_BACKOFF_BASE_MS;
    const backoffMs = Math.min(windowMs, LOGIN_BACKOFF_BASE_MS * 2 ** Math.min(30, ipTimes.length - addressAllowance));
    return Math.max(0, ipTimes[ipTimes.length - 1]! + backoffMs - nowMs);
  };
  const usernameWaitMs = (userKey: string, addressTried: boolean, nowMs: number): number => {
    if (!addressTried) return 0;
    const times = recent(userKey, nowMs);
    if (times.length >= maxFailures) return Math.max(0, times[times.length - maxFailures]! + windowMs - nowMs);
    return times.length + pendingOf(userKey) >= maxFailures ? LOGIN_BACKOFF_BASE_MS : 0;
  };

  return {
    begin(username, ip, nowMs) {
      const userKey = `u:${username.toLowerCase()}`;
      const ipKey = `ip:${ip}`;
      const ipTimes = recent(ipKey, nowMs);
      const addressTried = ipTimes.length + pendingOf(ipKey) > 0;
      const waitMs = Math.max(addressWaitMs(ipKey, ipTimes, nowMs), usernameWaitMs(userKey, addressTried, nowMs));
      if (waitMs > 0) return { retryAfterMs: waitMs };
      shift(ipKey, 1);
      shift(userKey, 1);
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        shift(ipKey, -1);
        shift(userKey, -1);
        return true;
      };
      return {
        attempt: {
          failed(failedAtMs) {
            if (!settle()) return;
            add(userKey, failedAtMs);
            add(ipKey, failedAtMs);
          },
          succeeded() {
            if (settle()) failures.delete(userKey);
          },
          release() {
            settle();
          },
        },
      };
    },
  };
}
