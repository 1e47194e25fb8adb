/**
 * The one Redis connection of a replica (ioredis), set up to fail fast: a gateway that cannot reach
 * Redis must answer 503 (or let requests through, fail open) within a fraction of a second, never
 * hold them in a queue until a reconnect. So: no offline queue (a command while disconnected fails at
 * once), one retry per command, a 500 ms command timeout, and reconnection in the background forever
 * (service resumes on its own when Redis is back).
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Log } from '../log.ts';

/** A command that did not reach Redis or got no answer in time. */
export const COMMAND_TIMEOUT_MS = 500;

export interface RedisConnection {
  readonly client: Redis;
  /**
   * Runs `script` with `keys` and `args` (EVALSHA, falling back to EVAL when Redis lost its script
   * cache, e.g. after a restart). Rejects when Redis is unreachable, slow, or the script fails.
   */
  run(script: string, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
  close(): Promise<void>;
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
export async function connectRedis(url: string, log: Log, readyTimeoutMs = 2_000): Promise<RedisConnection> {
  const where = redactRedisUrl(url);
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
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
      try {
        return await client.evalsha(shaOf(script), keys.length, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return client.eval(script, keys.length, ...keys, ...args);
      }
    },
    async close() {
      client.disconnect();
    },
  };
}
