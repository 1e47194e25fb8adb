/**
 * The one Redis connection of a replica (ioredis), set up to fail fast: a gateway that cannot reach
 * Redis must answer 503 (or let requests through, fail open) within a fraction of a second, never
 * hold them in a queue until a reconnect. So: no offline queue (a command while disconnected fails at
 * once), one retry per command, a 500 ms command timeout (`answeredWithin`: Redis's time, not this
 * replica's own event-loop delay), and reconnection in the background forever (service resumes on its
 * own when Redis is back).
 */
import { createHash } from 'node:crypto';
// Imported when a replica connects: a gateway on SQLite alone never loads ioredis (~1 MB of code).
import type { Redis } from 'ioredis';
import type { Log } from '../runtime/log.ts';
import { Counter, Histogram } from 'prom-client';
import type { MetricsRegistry } from '../runtime/metrics.ts';

/** Default of `coordination.commandTimeoutMs`: a command that got no answer in time counts as unreachable. */
export const COMMAND_TIMEOUT_MS = 500;

export interface RedisConnection {
  readonly client: Redis;
  /**
   * Runs `script` with `keys` and `args` (EVALSHA, falling back to EVAL when Redis lost its script
   * cache, e.g. after a restart). Rejects when Redis is unreachable, slow, or the script fails.
   */
  run(script: string, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
  /**
   * `pending` (a command sent on `client`), rejected with "Command timed out" when it got no answer
   * within the command timeout, ms, counting only what Redis took: a reply already in the socket is
   * read first (see `answeredWithin`). Direct `client` calls go through it.
   */
  within<T>(pending: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * ioredis's own `commandTimeout`, as a multiple of ours: only a backstop that frees its command queue
 * when Redis hangs for good (a command we already answered as timed out), never what a request sees.
 */
const BACKSTOP_TIMEOUT_FACTOR = 10;

/**
 * `pending`, or a rejection when it got no answer within `timeoutMs`. Why not ioredis's
 * `commandTimeout` alone: its timer fires in the event loop's timers phase, BEFORE the poll phase
 * reads sockets, so a replica whose event loop was busy (a burst of first requests on a loaded
 * machine) timed out commands whose replies had arrived long before: 503 `coordination_unavailable`
 * with Redis fine (seen in test/plugins/budget-teams-redis.test.ts, 1-3 of 100 cold requests). Here
 * the expiry waits one `setImmediate`, which runs after the next poll phase: a reply already
 * received is read and wins; only a Redis that really did not answer in time fails.
 */
export function answeredWithin<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new Error('Command timed out'));
      });
    }, timeoutMs);
    pending.then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** Where the password of `redis://user:pass@host` would be: never logged. */
export function redactRedisUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * Connects to `url` (`redis://[user:pass@]host:port[/db]`, `rediss://` for TLS) and waits up to
 * `readyTimeoutMs` for the connection to be ready. Never throws for an unreachable server: the
 * gateway starts anyway and the counters answer as their fail mode says until Redis is reachable.
 */
export async function connectRedis(
  url: string, log: Log, readyTimeoutMs = 2_000, metrics?: MetricsRegistry, commandTimeoutMs = COMMAND_TIMEOUT_MS,
): Promise<RedisConnection> {
  const where = redactRedisUrl(url);
  // Every script call's time and failures, for `/metrics` (one replica's view of the shared store).
  const seconds = metrics && new Histogram({
    name: 'tollgate_redis_command_seconds', help: 'Time of each Redis script call of this replica (rate limits and budgets), seconds.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5], registers: [metrics],
  });
  const failures = metrics && new Counter({
    name: 'tollgate_redis_command_errors_total', help: 'Redis script calls of this replica that failed (unreachable, timed out, or refused).', registers: [metrics],
  });
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs * BACKSTOP_TIMEOUT_FACTOR,
    connectTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  let lastErrorLogMs = 0;
  client.on('error', (err: Error) => {
    // ioredis emits one error per failed reconnect; one line every 10 s says enough.
    const nowMs = Date.now();
    if (nowMs - lastErrorLogMs < 10_000) return;
    lastErrorLogMs = nowMs;
    log.warn('redis unreachable', { redis: where, error: err.message });
  });
  client.on('ready', () => log.info('redis connected', { redis: where }));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      log.warn('redis not ready at start; counting on it once it is', { redis: where });
      resolve();
    }, readyTimeoutMs);
    timer.unref();
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });

  const shas = new Map<string, string>();
  const shaOf = (script: string) => {
    let sha = shas.get(script);
    if (!sha) shas.set(script, (sha = createHash('sha1').update(script).digest('hex')));
    return sha;
  };
  return {
    client,
    async run(script, keys, args) {
      const stop = seconds?.startTimer();
      try {
        return await answeredWithin(client.evalsha(shaOf(script), keys.length, ...keys, ...args), commandTimeoutMs);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) {
          failures?.inc();
          throw err;
        }
        try {
          return await answeredWithin(client.eval(script, keys.length, ...keys, ...args), commandTimeoutMs);
        } catch (evalErr) {
          failures?.inc();
          throw evalErr;
        }
      } finally {
        stop?.();
      }
    },
    within: (pending) => answeredWithin(pending, commandTimeoutMs),
    async close() {
      client.disconnect();
    },
  };
}
