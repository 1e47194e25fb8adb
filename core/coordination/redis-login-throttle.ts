/**
 * The admin login throttle shared by every replica (`coordination.redis`): the same rules as the
 * in-process throttle (`core/coordination/login-throttle.ts`), counted in Redis by two Lua scripts
 * (`login-throttle-scripts.ts`), so guesses spread over the replicas behind a balancer are counted
 * together. While Redis is unreachable, logins are throttled by this replica's own counts (never
 * unthrottled, never refused for Redis's sake: the admin must still be able to log in).
 */
import { randomUUID } from 'node:crypto';
import { LOGIN_BACKOFF_BASE_MS, createLoginThrottle, type LoginThrottle } from './login-throttle.ts';
import type { Log } from '../runtime/log.ts';
import type { RedisConnection } from './redis-connection.ts';
import { BEGIN_SCRIPT, SETTLE_SCRIPT } from './login-throttle-scripts.ts';

/** How long an attempt stays reserved in Redis without being settled (a scrypt check takes ~50 ms). */
const PENDING_TTL_MS = 30_000;

export function createRedisLoginThrottle(redis: RedisConnection, maxFailures: number, windowMs: number, log: Log): LoginThrottle {
  const local = createLoginThrottle(maxFailures, windowMs);
  const keysOf = (username: string, ip: string) => {
    const user = username.toLowerCase();
    return [`tollgate:login:fail:ip:${ip}`, `tollgate:login:fail:u:${user}`, `tollgate:login:pending:ip:${ip}`, `tollgate:login:pending:u:${user}`];
  };
  return {
    async begin(username, ip, nowMs) {
      const keys = keysOf(username, ip);
      const id = randomUUID();
      let waitMs: number;
      try {
        waitMs = Number(await redis.run(BEGIN_SCRIPT, keys, [windowMs, maxFailures, id, PENDING_TTL_MS, LOGIN_BACKOFF_BASE_MS]));
      } catch (err) {
        log.warn('login throttle: redis unreachable, counting on this replica only', { err: (err as Error).message });
        return local.begin(username, ip, nowMs);
      }
      if (waitMs > 0) return { retryAfterMs: waitMs };
      let settled = false;
      const settle = (outcome: 'failed' | 'succeeded' | 'release') => {
        if (settled) return;
        settled = true;
        redis.run(SETTLE_SCRIPT, keys, [outcome, id, windowMs]).catch((err: Error) => {
          log.warn('login throttle: could not record an attempt in redis', { outcome, err: err.message });
        });
      };
      return {
        attempt: {
          failed: () => settle('failed'),
          succeeded: () => settle('succeeded'),
          release: () => settle('release'),
        },
      };
    },
  };
}
