/**
 * The persisted model catalog (`model_catalog`): each provider's last discovered list, so a gateway
 * restarted while an upstream is down still resolves bare model ids and lists its models, and
 * `tollgate models list` shows them without a running gateway.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { nowIso, type Store } from '../store/store.ts';

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

/**
 * Every provider's persisted list (or only `provider`'s) by provider id, models in the order the upstream listed them
 * (`position`; rows persisted before schema 14 have position 0 and keep SQLite's insertion order).
 */
export async function loadPersistedCatalog(store: Store, provider?: string): Promise<Map<string, PersistedList>> {
  let query = store.db.selectFrom('model_catalog').selectAll().orderBy('provider').orderBy('position');
  if (provider !== undefined) query = query.where('provider', '=', provider);
  if (store.engine === 'sqlite') query = query.orderBy(sql`rowid`);
  const rows = await query.execute();
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

/** Rows per INSERT: 7 columns × 100 rows stays far below SQLite's bound-parameter limit. */
const INSERT_CHUNK_ROWS = 100;

/**
 * Replaces `provider`'s persisted list with `models` (one transaction); `fetchedAtMs` is ms since the
 * epoch. A model listed twice keeps its last entry.
 */
export async function persistCatalog(db: Kysely<Database>, provider: string, models: readonly CatalogModel[], fetchedAtMs = Date.now()): Promise<void> {
  const fetchedAt = nowIso(fetchedAtMs);
  const byId = new Map<string, CatalogModel>();
  for (const m of models) {
    // Deleted first so a repeated id takes the place of its last listing, as INSERT OR REPLACE did.
    byId.delete(m.id);
    byId.set(m.id, m);
  }
  const rows = [...byId.values()].map((m, position) => ({
    provider, model: m.id, display_name: m.display_name ?? null, created: Math.trunc(m.created) || 0, owned_by: m.owned_by, fetched_at: fetchedAt, position,
  }));
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('model_catalog').where('provider', '=', provider).execute();
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      await trx.insertInto('model_catalog').values(rows.slice(i, i + INSERT_CHUNK_ROWS)).execute();
    }
  });
}
