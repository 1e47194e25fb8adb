/**
 * The persisted model catalog (`model_catalog`): each provider's last discovered list, so a gateway
 * restarted while an upstream is down still resolves bare model ids and lists its models, and
 * `tollgate models list` shows them without a running gateway.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './db-types.ts';
import type { Sqlite } from './db.ts';
import { nowIso } from './db.ts';

/** One model of a provider's list, as discovered from its list endpoint and stored here. */
export interface CatalogModel {
  /** Model id as the provider names it (no `provider/` prefix). */
  id: string;
  /** Unix seconds, 0 when the provider does not say. */
  created: number;
  owned_by: string;
  /** The provider's own display name, when it has one. */
  display_name?: string;
}

/** One provider's stored list. */
export interface PersistedList {
  models: CatalogModel[];
  /** When the list was fetched, ms since the epoch. */
  fetchedAtMs: number;
}

/** Every provider's persisted list by provider id, models in the order the upstream listed them. */
export async function loadPersistedCatalog(db: Kysely<Database>): Promise<Map<string, PersistedList>> {
  const rows = await db.selectFrom('model_catalog').selectAll().orderBy('provider').orderBy(sql`rowid`).execute();
  const lists = new Map<string, PersistedList>();
  for (const row of rows) {
    let list = lists.get(row.provider);
    if (!list) lists.set(row.provider, (list = { models: [], fetchedAtMs: Date.parse(row.fetched_at) }));
    const entry: CatalogModel = { id: row.model, created: row.created, owned_by: row.owned_by };
    if (row.display_name) entry.display_name = row.display_name;
    list.models.push(entry);
  }
  return lists;
}

/** Replaces `provider`'s persisted list with `models` (one transaction); `fetchedAtMs` is ms since the epoch. */
export function persistCatalog(sqlite: Sqlite, provider: string, models: readonly CatalogModel[], fetchedAtMs = Date.now()): void {
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
