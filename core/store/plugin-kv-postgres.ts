/**
 * The plugin key-value store's statements on PostgreSQL (`plugin-kv.ts`), shared by every replica.
 * Values are kept as their UTF-8 bytes (bytea: text cannot hold a NUL).
 *
 * Every write of a plugin's entries (set, delete, the sweep) first locks the plugin's
 * `plugin_kv_totals` row, then touches `plugin_kv`: one lock order for all, so two replicas writing
 * the same plugin's entries wait for each other instead of deadlocking (a set evicting the row
 * another replica is deleting would otherwise hold each other's locks), and the total a set reads
 * after its upsert is exact: no other write of that plugin is in between.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './db-types.ts';
import type { KvOps } from './plugin-kv.ts';

const EXPIRED_PER_SET = 256;
const EVICT_BATCH = 64;

/** Locks `plugin`'s totals row (creating it) until the transaction ends; returns its bytes. */
async function lockTotals(trx: Transaction<Database>, plugin: string): Promise<number> {
  const { rows } = await sql<{ bytes: number }>`INSERT INTO plugin_kv_totals (plugin, bytes) VALUES (${plugin}, 0)
    ON CONFLICT (plugin) DO UPDATE SET bytes = plugin_kv_totals.bytes RETURNING bytes`.execute(trx);
  return Number(rows[0]!.bytes);
}

async function totalOf(trx: Transaction<Database>, plugin: string): Promise<number> {
  const row = await trx.selectFrom('plugin_kv_totals').select('bytes').where('plugin', '=', plugin).executeTakeFirst();
  return Number(row?.bytes ?? 0);
}

/** Deletes `plugin`'s oldest-written entries (never `keep`) until its total is at most `maxBytes`. */
async function evict(trx: Transaction<Database>, plugin: string, keep: string, maxBytes: number, nowMs: number): Promise<void> {
  let bytes = await totalOf(trx, plugin);
  if (bytes <= maxBytes) return;
  const expired = await sql`DELETE FROM plugin_kv WHERE ctid IN (
    SELECT ctid FROM plugin_kv WHERE plugin = ${plugin} AND expires_at <= ${nowMs} LIMIT ${EXPIRED_PER_SET})`.execute(trx);
  if (Number(expired.numAffectedRows ?? 0) > 0) bytes = await totalOf(trx, plugin);
  while (bytes > maxBytes) {
    const rows = await trx.selectFrom('plugin_kv').select(['key', 'size_bytes']).where('plugin', '=', plugin).where('key', '<>', keep)
      .orderBy('written_at').orderBy('key').limit(EVICT_BATCH).execute();
    if (rows.length === 0) return;
    const victims: string[] = [];
    for (const row of rows) {
      if (bytes <= maxBytes) break;
      victims.push(row.key);
      bytes -= Number(row.size_bytes);
    }
    await trx.deleteFrom('plugin_kv').where('plugin', '=', plugin).where('key', 'in', victims).execute();
  }
}

/** The statements on `db` (a PostgreSQL store migrated to v18 or later). */
export function createPostgresKvOps(db: Kysely<Database>): KvOps {
  return {
    async get(plugin, key, nowMs) {
      const row = await db.selectFrom('plugin_kv').select('value').where('plugin', '=', plugin).where('key', '=', key)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)])).executeTakeFirst();
      if (!row) return null;
      return typeof row.value === 'string' ? row.value : row.value.toString('utf8');
    },
    async set(entry, nowMs) {
      const value = Buffer.from(entry.value, 'utf8');
      const expiresAt = entry.ttlMs === null ? null : nowMs + entry.ttlMs;
      await db.transaction().execute(async (trx) => {
        await lockTotals(trx, entry.plugin);
        await trx.insertInto('plugin_kv')
          .values({ plugin: entry.plugin, key: entry.key, value, size_bytes: entry.sizeBytes, expires_at: expiresAt, written_at: nowMs })
          .onConflict((oc) => oc.columns(['plugin', 'key']).doUpdateSet({ value, size_bytes: entry.sizeBytes, expires_at: expiresAt, written_at: nowMs }))
          .execute();
        await evict(trx, entry.plugin, entry.key, entry.maxBytes, nowMs);
      });
    },
    async delete(plugin, key) {
      await db.transaction().execute(async (trx) => {
        await lockTotals(trx, plugin);
        await trx.deleteFrom('plugin_kv').where('plugin', '=', plugin).where('key', '=', key).execute();
      });
    },
    async sweep(nowMs, limit) {
      const expired = await db.selectFrom('plugin_kv').select(['plugin', 'key']).where('expires_at', '<=', nowMs).limit(limit).execute();
      const byPlugin = new Map<string, string[]>();
      for (const row of expired) {
        let keys = byPlugin.get(row.plugin);
        if (!keys) byPlugin.set(row.plugin, (keys = []));
        keys.push(row.key);
      }
      let deleted = 0;
      for (const [plugin, keys] of byPlugin) {
        deleted += await db.transaction().execute(async (trx) => {
          await lockTotals(trx, plugin);
          // Still expired: a set may have renewed one since it was read.
          const result = await trx.deleteFrom('plugin_kv').where('plugin', '=', plugin).where('key', 'in', keys)
            .where('expires_at', '<=', nowMs).executeTakeFirst();
          return Number(result.numDeletedRows);
        });
      }
      return deleted;
    },
  };
}
