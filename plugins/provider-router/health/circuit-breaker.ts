/**
 * The circuit breaker of one deployment (provider + model; manifest `circuitBreaker`,
 * docs/routing.md), in memory:
 *
 * - `closed`: requests pass; `failureThreshold` failures within `windowMs` open it.
 * - `open`: skipped for `cooldownMs` (the router sends the request to another deployment).
 * - `half-open`: once the cooldown ended, exactly one request passes as a probe; its success closes
 *   the breaker, its failure opens it for another cooldown. Other requests skip it meanwhile.
 *
 * What counts as a failure is the caller's decision (`upstream-health.ts`: no answer, or a 5xx);
 * successes in `closed` do not erase failures, which simply leave the window. Times are ms since
 * the epoch from the gateway clock.
 */

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerSettings {
  failureThreshold: number;
  windowMs: number;
  cooldownMs: number;
}

/** How an attempt was let through: `pass` (closed), `probe` (the one half-open try), `forced` (open, tried because nothing else was left). */
export type Admission = 'pass' | 'probe' | 'forced';

export interface CircuitBreaker {
  state(nowMs: number): BreakerState;
  /** True when a request may go here now without forcing: closed, or half-open with no probe out. */
  available(nowMs: number): boolean;
  /** When the cooldown ends (ms since the epoch); 0 when closed. */
  readonly openUntilMs: number;
  /**
   * Lets an attempt through at `nowMs`, or null when it must skip this deployment. `force` lets it
   * through even when open (every deployment of the request is open): it then counts as a probe.
   */
  admit(nowMs: number, force: boolean): Admission | null;
  /** The outcome of an admitted attempt. Returns true when this changed the state (for the log). */
  succeeded(admission: Admission, nowMs: number): boolean;
  failed(admission: Admission, nowMs: number): boolean;
  /** An admitted attempt ended without a verdict (the client left first): frees the probe. */
  abandoned(admission: Admission): void;
}

export function createCircuitBreaker(settings: BreakerSettings): CircuitBreaker {
  /** Failure times within the window, oldest first (closed only). */
  let failures: number[] = [];
  let openUntilMs = 0;
  let probeOut = false;

  const isOpen = () => openUntilMs > 0;

  function open(nowMs: number): void {
    openUntilMs = nowMs + settings.cooldownMs;
    failures = [];
    probeOut = false;
  }

  function close(): void {
    openUntilMs = 0;
    failures = [];
    probeOut = false;
  }

  const breaker: CircuitBreaker = {
    get openUntilMs() {
      return openUntilMs;
    },
    state(nowMs) {
      if (!isOpen()) return 'closed';
      return nowMs < openUntilMs ? 'open' : 'half-open';
    },
    available(nowMs) {
      const state = breaker.state(nowMs);
      return state === 'closed' || (state === 'half-open' && !probeOut);
    },
    admit(nowMs, force) {
      const state = breaker.state(nowMs);
      if (state === 'closed') return 'pass';
      if (state === 'half-open' && !probeOut) {
        probeOut = true;
        return 'probe';
      }
      if (!force) return null;
      probeOut = true;
      return 'forced';
    },
    succeeded(admission) {
      if (admission === 'pass' || !isOpen()) return false;
      close();
      return true;
    },
    failed(admission, nowMs) {
      if (admission !== 'pass') {
        // A failed probe (or forced try) restarts the cooldown.
        open(nowMs);
        return true;
      }
      if (isOpen()) return false;
      const since = nowMs - settings.windowMs;
      failures = failures.filter((t) => t > since);
      failures.push(nowMs);
      if (failures.length < settings.failureThreshold) return false;
      open(nowMs);
      return true;
    },
    abandoned(admission) {
      if (admission !== 'pass') probeOut = false;
    },
  };
  return breaker;
}
