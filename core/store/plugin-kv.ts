/**
 * The contract of the key-value store of plugins written on the SDK (`ctx.kv()`, `core/sdk/kv.ts`):
 * its limits and the engine behind it. Engines: the gateway's database (`plugin-kv-database.ts`:
 * SQLite in one process, PostgreSQL for replicas) and Redis (`core/coordination/redis-plugin-kv.ts`).
 */

/** Largest value a plugin may set, UTF-8 bytes (8 MiB). */
export const KV_MAX_VALUE_BYTES = 8 * 1024 * 1024;
/** Longest key, characters (code points). */
export const KV_MAX_KEY_CHARS = 512;
/** A plugin's bound when `kv()` names none, bytes of keys and values (64 MiB). */
export const KV_DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** One checked write: the engine trusts every field (`core/sdk/kv.ts` validated them). */
export interface KvWrite {
  plugin: string;
  key: string;
  value: string;
  /** UTF-8 bytes of `key` and `value`, at most `maxBytes`. */
  sizeBytes: number;
  /** Lifetime, whole ms > 0; null = until evicted or deleted. */
  ttlMs: number | null;
  /** The plugin's bound: after this write its entries take at most this many bytes (oldest-written evicted first). */
  maxBytes: number;
}

/**
 * Where plugins' entries live, every plugin's keys apart (`plugin` is part of every key). Each call
 * rejects when the database or Redis is unreachable, as the engine reports it.
 */
export interface PluginKvEngine {
  /** `sqlite`, `postgres` or `redis`: for the log and the tests. */
  readonly engine: 'sqlite' | 'postgres' | 'redis';
  /** The value, or null when absent or expired. */
  get(plugin: string, key: string): Promise<string | null>;
  /** Writes (replacing) the entry, then evicts the plugin's oldest-written entries until it fits `maxBytes`. */
  set(write: KvWrite): Promise<void>;
  /** Removes the entry; nothing when absent. */
  delete(plugin: string, key: string): Promise<void>;
  /** Stops the sweep (nothing else is owned: the store or the Redis connection is closed by its owner). */
  close(): Promise<void>;
}

/** The engine-specific statements of the database store. */
export interface KvOps {
  get(plugin: string, key: string, nowMs: number): Promise<string | null>;
  set(write: KvWrite, nowMs: number): Promise<void>;
  delete(plugin: string, key: string): Promise<void>;
  /** Deletes at most `limit` expired rows (any plugin); returns how many it deleted. */
  sweep(nowMs: number, limit: number): Promise<number>;
}
