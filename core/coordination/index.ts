/**
 * The manifest's `coordination` section made real at boot: where the state replicas must share
 * lives. Without a Redis URL (the default: one process) the rate-limit counters are in process; with
 * one (`coordination.redis`, else `TOLLGATE_REDIS_URL`) they are in Redis, and `failMode` says what a
 * request gets while Redis is unreachable. So are the budgets' spend and reservations
 * (`budgetCounters`; null in one process, where the budget plugin's own ledger is exact), and the
 * admin login throttle's counts. Caches are per process, dropped on the store's change feed.
 */
import type { Clock } from '../runtime/clock.ts';
import type { Log } from '../runtime/log.ts';
import { createLocalRateCounters, type RateCounters } from './rate-counters.ts';
import { connectRedis, redactRedisUrl } from './redis-connection.ts';
import type { MetricsRegistry } from '../runtime/metrics.ts';
import { createRedisRateCounters, type FailMode } from './redis-rate-counters.ts';
import type { BudgetCounters } from './budget-counters.ts';
import { createRedisBudgetCounters } from './redis-budget-counters.ts';
import { createLoginThrottle, type LoginThrottle } from './login-throttle.ts';
import { createRedisLoginThrottle } from './redis-login-throttle.ts';
import { localLeases, type Leases } from './leases.ts';
import type { PluginKvEngine } from '../store/plugin-kv.ts';
import { createRedisKv } from './redis-plugin-kv.ts';

/** The manifest's `coordination` section, defaults filled in. */
export interface CoordinationSettings {
  /** `redis://…` / `rediss://…`; null or empty = no shared store (`TOLLGATE_REDIS_URL` may give one). */
  redis: string | null;
  /** What a request gets while Redis is unreachable: 503 `coordination_unavailable` (closed) or through, uncounted (open). */
  failMode: FailMode;
  /** `failMode` for one kind of limit, over `failMode`. */
  failModeByLimit?: { rateLimits?: FailMode; budgets?: FailMode };
  /** Lifetime of a concurrency lease without renewal, ms: what a replica that dies mid-request can hold. */
  leaseTtlMs: number;
  /** Lifetime of a budget reservation in Redis, ms: what a replica that dies mid-request can keep reserved. */
  budgetReservationTtlMs: number;
  /** How long one Redis call may take before it counts as unreachable, ms. */
  commandTimeoutMs: number;
}

export interface Coordination {
  readonly rateCounters: RateCounters;
  /** The shared budget counters; null in one process (the budget plugin keeps its own ledger). */
  readonly budgetCounters: BudgetCounters | null;
  /** Leases for work one replica does for all (`leases.ts`). */
  readonly leases: Leases;
  /** The SDK plugins' key-value store in Redis (`redis-plugin-kv.ts`); null in one process (the database keeps it). */
  readonly pluginKv: PluginKvEngine | null;
  /** The admin login throttle: in process, or counted in Redis for every replica. */
  loginThrottle(maxFailures: number, windowMs: number): LoginThrottle;
  /** `GET /readyz`'s view of the shared store: null in one process; `{redis: "ready"|"down", ...}` with Redis. */
  readiness(): Record<string, unknown> | null;
  /** Stops timers and closes the Redis connection. */
  close(): Promise<void>;
}

/** The fail mode of each kind of limit: `failModeByLimit`'s, else `failMode`. */
export function failModesOf(settings: Pick<CoordinationSettings, 'failMode' | 'failModeByLimit'>): { rateLimits: FailMode; budgets: FailMode } {
  return { rateLimits: settings.failModeByLimit?.rateLimits ?? settings.failMode, budgets: settings.failModeByLimit?.budgets ?? settings.failMode };
}

/** The Redis URL in effect: the manifest's, else `TOLLGATE_REDIS_URL`, else none. */
export function redisUrlOf(settings: CoordinationSettings, env: NodeJS.ProcessEnv): string | null {
  return settings.redis || env.TOLLGATE_REDIS_URL || null;
}

/** Builds the counters the settings ask for; connects to Redis when one is named (never throws for an unreachable one). */
export async function createCoordination(
  settings: CoordinationSettings, deps: { log: Log; clock: Clock; env: NodeJS.ProcessEnv; metrics?: MetricsRegistry },
): Promise<Coordination> {
  const url = redisUrlOf(settings, deps.env);
  if (!url) {
    const rateCounters = createLocalRateCounters(deps.clock);
    return {
      rateCounters, budgetCounters: null, leases: localLeases, pluginKv: null, readiness: () => null, close: () => rateCounters.close(),
      loginThrottle: (maxFailures, windowMs) => createLoginThrottle(maxFailures, windowMs),
    };
  }
  const modes = failModesOf(settings);
  deps.log.info('rate limits and budgets shared in redis', {
    redis: redactRedisUrl(url), failMode: modes, leaseTtlMs: settings.leaseTtlMs, budgetReservationTtlMs: settings.budgetReservationTtlMs,
  });
  const redis = await connectRedis(url, deps.log, undefined, deps.metrics, settings.commandTimeoutMs);
  const rateCounters = createRedisRateCounters(redis, { failMode: modes.rateLimits, leaseTtlMs: settings.leaseTtlMs, log: deps.log });
  const budgetCounters = createRedisBudgetCounters(redis, { failMode: modes.budgets, reservationTtlMs: settings.budgetReservationTtlMs, log: deps.log });
  return {
    rateCounters,
    budgetCounters,
    pluginKv: createRedisKv(redis),
    leases: {
      async tryAcquire(name, ttlMs) {
        try {
          return (await redis.within(redis.client.set(`tollgate:lease:${name}`, process.pid, 'PX', ttlMs, 'NX'))) === 'OK';
        } catch (err) {
          deps.log.warn('lease: redis unreachable, doing the work on this replica', { lease: name, err: (err as Error).message });
          return true;
        }
      },
    },
    loginThrottle: (maxFailures, windowMs) => createRedisLoginThrottle(redis, maxFailures, windowMs, deps.log),
    readiness: () => ({ redis: redis.client.status === 'ready' ? 'ready' : 'down', fail_mode: modes.rateLimits === modes.budgets ? modes.rateLimits : { rate_limits: modes.rateLimits, budgets: modes.budgets } }),
    async close() {
      await rateCounters.close();
      await redis.close();
    },
  };
}
