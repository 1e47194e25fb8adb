/**
 * The plugin key-value store in Redis, shared by every replica (`core/store/plugin-kv.ts` has the
 * contract; the scripts and key layout: `plugin-kv-scripts.ts`). A get is one GET; a set and a
 * delete are one script each, atomic across replicas. Every call rejects when Redis is unreachable
 * or slower than `coordination.commandTimeoutMs` (the connection fails fast, `redis-connection.ts`):
 * the plugin decides what that means (a cache: a miss).
 */
import type { KvWrite, PluginKvEngine } from '../store/plugin-kv.ts';
import type { RedisConnection } from './redis-connection.ts';
import { KV_DELETE, KV_SET } from './plugin-kv-scripts.ts';

/** Where plugin `plugin`'s entries live: `tollgate:kv:<plugin>:<key>`. */
export function kvEntryPrefix(plugin: string): string {
  return `tollgate:kv:${plugin}:`;
}

/** The bookkeeping keys of `plugin` (order, expiry, sizes, bytes, sequence), in the scripts' KEYS order. */
function metaKeys(plugin: string): string[] {
  const meta = `tollgate:kv-meta:${plugin}:`;
  return [`${meta}order`, `${meta}expiry`, `${meta}sizes`, `${meta}bytes`, `${meta}seq`];
}

/** The plugin key-value store on `redis` (the coordination's connection, closed by its owner). */
export function createRedisKv(redis: RedisConnection): PluginKvEngine {
  return {
    engine: 'redis',
    async get(plugin, key) {
      return redis.within(redis.client.get(kvEntryPrefix(plugin) + key));
    },
    async set(write: KvWrite) {
      const prefix = kvEntryPrefix(write.plugin);
      await redis.run(KV_SET, [prefix + write.key, ...metaKeys(write.plugin)], [write.key, prefix, write.value, write.ttlMs ?? 0, write.maxBytes]);
    },
    async delete(plugin, key) {
      const prefix = kvEntryPrefix(plugin);
      await redis.run(KV_DELETE, [prefix + key, ...metaKeys(plugin).slice(0, 4)], [key, prefix]);
    },
    async close() {},
  };
}
