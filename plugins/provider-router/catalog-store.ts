/**
 * The persisted model catalog (`model_catalog`): each provider's last discovered list, so a gateway
 * restarted while an upstream is down still resolves bare model ids and lists its models.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../core/db-types.ts';
import type { Sqlite } from '../../core/db.ts';
import { nowIso } from '../../core/db.ts';
import type { CatalogEntry } from './providers/base.ts';

export interface PersistedList {
  models: CatalogEntry[];
  /** When the list was fetched, ms since the epoch. */
  fetchedAtMs: number;
}

/** Every provider's persisted list, models in the order the upstream listed them. */
export async function loadPersistedCatalog(db: Kysely<Database>): Promise<Map<string, PersistedList>> {
  const rows = await db.selectFrom('model_catalog').selectAll().orderBy('provider').orderBy(sql`rowid`).execute();
  const lists = new Map<string, PersistedList>();
  for (const row of rows) {
    let list = lists.get(row.provider);
    if (!list) lists.set(row.provider, (list = { models: [], fetchedAtMs: Date.parse(row.fetched_at) }));
    const entry: CatalogEntry = { id: row.model, created: row.created, owned_by: row.owned_by };
    if (row.display_name) entry.display_name = row.display_name;
    list.models.push(entry);
  }
  return lists;
}

/** Replaces `provider`'s persisted list with `models` (one transaction). */
export function persistCatalog(sqlite: Sqlite, provider: string, models: readonly CatalogEntry[], fetchedAtMs = Date.now()): void {
  const remove = sqlite.prepare('DELETE FROM model_catalog WHERE provider = ?');
  const insert = sqlite.prepare(
    'INSERT OR REPLACE INTO model_catalog (provider, model, display_name, created, owned_by, fetched_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const fetchedAt = nowIso(fetchedAtMs);
  sqlite.transaction(() => {
    remove.run(provider);
    for (const m of models) insert.run(provider, m.id, m.display_name ?? null, Math.trunc(m.created) || 0, m.owned_by, fetchedAt);
  })();
}
