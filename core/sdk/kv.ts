/**
 * `ctx.kv()` of the SDK (`types.ts` `PluginKv`): a plugin's own view of the gateway's key-value engine
 * (`core/store/plugin-kv.ts`: the database, or Redis with replicas). Checks every call's arguments
 * before anything reaches the engine, so a mistake is an error naming the plugin and the limit on
 * every deployment alike, never a database's own message.
 */
import { KV_DEFAULT_MAX_BYTES, KV_MAX_KEY_CHARS, KV_MAX_VALUE_BYTES, type PluginKvEngine } from '../store/plugin-kv.ts';
import type { KvOptions, PluginKv } from './types.ts';

const MIB = 1024 * 1024;

/** The `maxBytes` of `options`, checked (a positive safe integer); throws a `RangeError` naming the plugin. */
function maxBytesOf(plugin: string, options: KvOptions | undefined): number {
  const maxBytes = options?.maxBytes ?? KV_DEFAULT_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError(`plugin "${plugin}": kv({ maxBytes }) must be a positive whole number of bytes, got ${String(maxBytes)}`);
  }
  return maxBytes;
}

function checkKey(plugin: string, key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new TypeError(`plugin "${plugin}": a kv key must be a string, got ${typeof key}`);
  if (key.length === 0) throw new RangeError(`plugin "${plugin}": a kv key must not be empty`);
  // `length` counts UTF-16 units, at least the code points: only a long key is counted exactly.
  if (key.length > KV_MAX_KEY_CHARS && [...key].length > KV_MAX_KEY_CHARS) {
    throw new RangeError(`plugin "${plugin}": kv key "${key.slice(0, 40)}…" is ${[...key].length} characters, over the ${KV_MAX_KEY_CHARS}-character limit`);
  }
  // PostgreSQL's text cannot hold one: refused everywhere, so a plugin behaves alike on every deployment.
  if (key.includes('\u0000')) throw new RangeError(`plugin "${plugin}": a kv key must not contain a NUL character`);
}

/** A `ttlMs` option as whole ms > 0, or null when absent. */
function ttlOf(plugin: string, key: string, ttlMs: unknown): number | null {
  if (ttlMs === undefined) return null;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`plugin "${plugin}": kv set of "${key}": ttlMs must be a positive number of ms, got ${String(ttlMs)}`);
  }
  return Math.ceil(ttlMs);
}

/** Plugin `plugin`'s store on `engine`, bounded as `options` says; throws at once when `options` is invalid. */
export function createPluginKv(plugin: string, engine: PluginKvEngine, options?: KvOptions): PluginKv {
  const maxBytes = maxBytesOf(plugin, options);
  return Object.freeze({
    async get(key: string) {
      checkKey(plugin, key);
      return engine.get(plugin, key);
    },
    async set(key: string, value: string, setOptions?: { ttlMs?: number }) {
      checkKey(plugin, key);
      if (typeof value !== 'string') throw new TypeError(`plugin "${plugin}": kv set of "${key}": the value must be a string (serialize JSON yourself), got ${typeof value}`);
      const valueBytes = Buffer.byteLength(value, 'utf8');
      if (valueBytes > KV_MAX_VALUE_BYTES) {
        throw new RangeError(`plugin "${plugin}": kv set of "${key}": the value is ${valueBytes} bytes (UTF-8), over the ${KV_MAX_VALUE_BYTES / MIB} MiB limit`);
      }
      const sizeBytes = Buffer.byteLength(key, 'utf8') + valueBytes;
      if (sizeBytes > maxBytes) {
        throw new RangeError(`plugin "${plugin}": kv set of "${key}": the entry is ${sizeBytes} bytes (key and value, UTF-8), over the store's maxBytes ${maxBytes}`);
      }
      const ttlMs = ttlOf(plugin, key, setOptions?.ttlMs);
      await engine.set({ plugin, key, value, sizeBytes, ttlMs, maxBytes });
    },
    async delete(key: string) {
      checkKey(plugin, key);
      await engine.delete(plugin, key);
    },
  });
}
