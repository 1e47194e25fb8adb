/**
 * The response cache (docs/plugins.md "Response cache"): an exact-match cache of chat answers, built
 * on the public plugin SDK alone. A request whose key (`cache-key.ts`) has a kept answer is answered
 * with it (`replyAnswer`: rendered in the client's dialect, streamed or not, billed 0) and goes no
 * further; a miss goes on, and its answer (`onAnswer`: the whole answer, a stream's chunks joined) is
 * kept in the plugin's store (`ctx.kv`: the database, or Redis with replicas) for `ttlSeconds`.
 *
 * The store is a convenience, never a dependency: a lookup that fails or takes longer than
 * `lookupTimeoutMs` is a miss, a write that fails is dropped; both are counted, and logged at most
 * once a minute.
 */
import { definePlugin, logField, replyAnswer } from '../../core/sdk/index.ts';
import type { ChatCompletion, Counter, Exchange, PluginContext, PluginKv } from '../../core/sdk/index.ts';
import { cacheKeyOf } from './cache-key.ts';
import { clientDirective, completeAnswer, deterministicEnough } from './request-rules.ts';
import { cacheSchema, checkCacheConfig, type CacheConfig } from './schema.ts';

/** The header that tells a client what the cache did, and that asks it to step aside. */
const CACHE_HEADER = 'x-tollgate-cache';
/** The log row's field: true on a hit, false on a miss (absent when the cache did not apply). */
const HIT_FIELD = 'cache_hit';
/** At most one warning about the store per this long; the metric counts every failure. */
const WARN_INTERVAL_MS = 60_000;

/** What the cache decided for one request. */
interface CacheState {
  outcome: 'hit' | 'miss' | 'bypass' | null;
  /** Where a miss's answer goes; null when it is not to be kept. */
  key: string | null;
}

/** A kept answer, as stored: the answer with the original usage (what a hit saved), and when it was kept. */
interface Entry {
  answer: ChatCompletion;
  storedAtMs: number;
}

interface CacheMetrics {
  hits: Counter;
  misses: Counter;
  bypasses: Counter;
  stores: Counter;
  kvErrors: Counter;
}

function cacheMetrics(ctx: PluginContext): CacheMetrics {
  const counter = (name: string, help: string) => ctx.metrics.counter({ name, help });
  return {
    hits: counter('hits_total', 'Requests answered from the cache.'),
    misses: counter('misses_total', 'Cacheable requests the cache had no answer for (sent upstream).'),
    bypasses: counter('bypasses_total', 'Requests that asked the cache to step aside (x-tollgate-cache: bypass, cache-control: no-store).'),
    stores: counter('stores_total', 'Answers kept.'),
    kvErrors: counter('kv_errors_total', 'Lookups and writes of the cache\'s store that failed or timed out (a lookup then counts as a miss).'),
  };
}

/** `promise`, or `fallback` once `timeoutMs` passed; the late outcome is ignored. */
function within<T>(promise: Promise<T>, timeoutMs: number, fallback: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => resolve(fallback()), timeoutMs);
    timer.unref();
    promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, (err: unknown) => {
      clearTimeout(timer);
      reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}

/** The cache's hooks over `kv`; see the file's comment. */
function createCache(config: CacheConfig, ctx: PluginContext, kv: PluginKv) {
  const metrics = cacheMetrics(ctx);
  const operations = new Set(config.operations);
  const ttlMs = config.ttlSeconds * 1000;
  let lastWarnedAtMs = -Infinity;
  let failuresSinceWarning = 0;
  /**
   * The writes of this replica still under way, by key. The answer reached its client before it is
   * kept (the write follows the last byte); a repeat that arrives meanwhile waits for the write
   * instead of missing, so a client that asks again once answered finds its answer kept.
   */
  const writing = new Map<string, Promise<void>>();

  /** Counts a store failure; logs one warning a minute with how many there were. */
  function storeFailed(action: 'lookup' | 'write', err: unknown): void {
    metrics.kvErrors.inc();
    failuresSinceWarning++;
    const nowMs = ctx.clock();
    if (nowMs - lastWarnedAtMs < WARN_INTERVAL_MS) return;
    ctx.log.warn('cache store unavailable: lookups count as misses, answers are not kept', {
      action, failures: failuresSinceWarning, err: err instanceof Error ? err.message : String(err),
    });
    lastWarnedAtMs = nowMs;
    failuresSinceWarning = 0;
  }

  /** The entry kept under `key`, or null (none, unreadable, or the store failed or was slow). */
  async function lookup(key: string): Promise<Entry | null> {
    let text: string | null;
    try {
      const write = writing.get(key);
      if (write) await within(write, config.lookupTimeoutMs, () => undefined);
      text = await within(kv.get(key), config.lookupTimeoutMs, () => {
        storeFailed('lookup', new Error(`no answer within lookupTimeoutMs (${config.lookupTimeoutMs} ms)`));
        return null;
      });
    } catch (err) {
      storeFailed('lookup', err);
      return null;
    }
    if (text === null) return null;
    try {
      const entry = JSON.parse(text) as Entry;
      return Array.isArray(entry?.answer?.choices) ? entry : null;
    } catch {
      return null;
    }
  }

  return {
    createState: (): CacheState => ({ outcome: null, key: null }),

    async onRequest(ex: Exchange, state: CacheState) {
      if (!operations.has(ex.operation) || !deterministicEnough(ex, config.cacheNonZeroTemperature)) return;
      const directive = clientDirective(ex);
      if (directive === 'bypass') {
        state.outcome = 'bypass';
        metrics.bypasses.inc();
        return;
      }
      const key = cacheKeyOf(ex, config.scope);
      if (key === null) return;
      const entry = directive === 'use' ? await lookup(key) : null;
      if (entry) {
        state.outcome = 'hit';
        metrics.hits.inc();
        logField(ex, HIT_FIELD, true);
        return replyAnswer(entry.answer, { [CACHE_HEADER]: 'hit' });
      }
      state.outcome = 'miss';
      state.key = key;
      metrics.misses.inc();
    },

    onResponseStart(ex: Exchange, state: CacheState) {
      if (state.outcome === 'miss') {
        ex.responseHeaders[CACHE_HEADER] = 'miss';
        logField(ex, HIT_FIELD, false);
      } else if (state.outcome === 'bypass') {
        ex.responseHeaders[CACHE_HEADER] = 'bypass';
      }
    },

    async onAnswer(_ex: Exchange, state: CacheState, answer: ChatCompletion) {
      if (state.key === null || !completeAnswer(answer)) return;
      const entry: Entry = { answer, storedAtMs: ctx.clock() };
      const value = JSON.stringify(entry);
      if (Buffer.byteLength(value, 'utf8') > config.maxEntryBytes) return;
      const key = state.key;
      const write = kv.set(key, value, { ttlMs }).then(() => {
        metrics.stores.inc();
      }, (err: unknown) => {
        storeFailed('write', err);
      }).finally(() => {
        if (writing.get(key) === write) writing.delete(key);
      });
      writing.set(key, write);
      await write;
    },
  };
}

export default definePlugin<CacheConfig, CacheState>({
  name: 'cache',
  version: '1.0.0',
  description: 'Exact-match response cache of chat answers: a repeated request is answered from the store, in the client\'s dialect, at no cost.',
  configSchema: cacheSchema,
  checkConfig: checkCacheConfig,
  order: [
    { relation: 'after', plugin: 'auth-guard', why: 'answers are kept per user or key, which authentication names' },
    { relation: 'after', plugin: 'response-store', why: 'a Responses continuation is cached with the conversation it continues, which response-store checks and expands' },
    { relation: 'after', plugin: 'rate-limit', why: 'a cached answer still counts against the caller\'s rate limits' },
    { relation: 'before', plugin: 'budget', why: 'a cached answer costs nothing, so it needs no budget reservation' },
  ],
  create(config, ctx) {
    return createCache(config, ctx, ctx.kv({ maxBytes: config.maxBytes }));
  },
});
