/**
 * The plugin key-value store's statements on SQLite (`plugin-kv.ts`). better-sqlite3 runs them on
 * the main thread, so each is kept small: a get is one primary-key row; a set is one upsert and one
 * read of the plugin's total (`plugin_kv_totals`, kept by triggers), and only when the plugin is over
 * its bound, deletions in batches from the `plugin_kv_by_age` index. A sweep deletes a bounded batch.
 */
import type { Sqlite } from './store.ts';
import type { KvOps, KvWrite } from './plugin-kv.ts';

/** Expired rows of a plugin dropped before evicting live ones, at most, per set over the bound. */
const EXPIRED_PER_SET = 256;
/** Oldest rows read at once while evicting. */
const EVICT_BATCH = 64;

/** The statements on `sqlite` (migrated to v18 or later). */
export function createSqliteKvOps(sqlite: Sqlite): KvOps {
  const getValue = sqlite.prepare<[string, string, number], string>(
    'SELECT value FROM plugin_kv WHERE plugin = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)',
  ).pluck();
  const upsert = sqlite.prepare<[string, string, string, number, number | null, number]>(
    `INSERT INTO plugin_kv (plugin, key, value, size_bytes, expires_at, written_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value, size_bytes = excluded.size_bytes,
       expires_at = excluded.expires_at, written_at = excluded.written_at`,
  );
  const total = sqlite.prepare<[string], number>('SELECT bytes FROM plugin_kv_totals WHERE plugin = ?').pluck();
  const dropExpired = sqlite.prepare<[string, number, number]>(
    'DELETE FROM plugin_kv WHERE rowid IN (SELECT rowid FROM plugin_kv WHERE plugin = ? AND expires_at <= ? LIMIT ?)',
  );
  const oldest = sqlite.prepare<[string, string, number], { key: string; size_bytes: number }>(
    'SELECT key, size_bytes FROM plugin_kv WHERE plugin = ? AND key <> ? ORDER BY written_at, key LIMIT ?',
  );
  const remove = sqlite.prepare<[string, string]>('DELETE FROM plugin_kv WHERE plugin = ? AND key = ?');
  const sweep = sqlite.prepare<[number, number]>(
    'DELETE FROM plugin_kv WHERE rowid IN (SELECT rowid FROM plugin_kv WHERE expires_at <= ? LIMIT ?)',
  );

  /** Deletes the plugin's oldest-written entries (never `keep`) until its total is at most `maxBytes`. */
  const evict = (plugin: string, keep: string, maxBytes: number, nowMs: number) => {
    let bytes = total.get(plugin) ?? 0;
    if (bytes <= maxBytes) return;
    // Expired entries go first: they are still counted until the sweep reaches them.
    if (dropExpired.run(plugin, nowMs, EXPIRED_PER_SET).changes > 0) bytes = total.get(plugin) ?? 0;
    while (bytes > maxBytes) {
      const rows = oldest.all(plugin, keep, EVICT_BATCH);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (bytes <= maxBytes) return;
        remove.run(plugin, row.key);
        bytes -= row.size_bytes;
      }
    }
  };
  const write = sqlite.transaction((entry: KvWrite, nowMs: number) => {
    upsert.run(entry.plugin, entry.key, entry.value, entry.sizeBytes, entry.ttlMs === null ? null : nowMs + entry.ttlMs, nowMs);
    evict(entry.plugin, entry.key, entry.maxBytes, nowMs);
  });

  return {
    async get(plugin, key, nowMs) {
      return getValue.get(plugin, key, nowMs) ?? null;
    },
    async set(entry, nowMs) {
      write.immediate(entry, nowMs);
    },
    async delete(plugin, key) {
      remove.run(plugin, key);
    },
    async sweep(nowMs, limit) {
      return sweep.run(nowMs, limit).changes;
    },
  };
}
