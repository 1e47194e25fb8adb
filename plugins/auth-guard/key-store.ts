/**
 * auth-guard's reads and writes of `api_keys`, one implementation per engine, chosen once at start.
 *
 * SQLite: better-sqlite3 prepared statements, synchronous: a cache miss costs no event-loop turn on
 * the request path. PostgreSQL: the same queries through Kysely, asynchronous (a network round trip
 * either way).
 */
import type { SqliteStore, Store } from '../../core/store/store.ts';
import { nowIso, prepareQuery } from '../../core/store/store.ts';

/** A key's row joined with its user's, as `lookup` returns it. */
export interface KeyRow {
  apiKeyId: number;
  expires_at: string | null;
  revoked_at: string | null;
  userId: number;
  name: string;
  /** 0 or 1. */
  disabled: number;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  keyRpm: number | null;
  keyTpm: number | null;
  /** JSON array of model patterns, or null (every model). */
  models: string | null;
  /** The key's tags, canonical JSON, or null. */
  tags: string | null;
  /** The user's team (schema v23), null columns when none. */
  teamId: number | null;
  teamName: string | null;
  teamRpm: number | null;
  teamTpm: number | null;
  teamMaxConcurrent: number | null;
  teamModels: string | null;
}

export interface KeyStore {
  /** The key whose SHA-256 (lowercase hex) is `hash`; synchronous on SQLite. */
  lookup(hash: string): KeyRow | undefined | Promise<KeyRow | undefined>;
  /** Writes `last_used_at` (ms since the epoch) of each key id, in one transaction. */
  touch(entries: ReadonlyArray<readonly [apiKeyId: number, atMs: number]>): void | Promise<void>;
  /** The stored hash of key `apiKeyId`, or undefined. */
  hashOf(apiKeyId: number): Promise<string | undefined>;
}

function keyQuery(store: Store) {
  return store.db
    .selectFrom('api_keys as k')
    .innerJoin('gateway_users as u', 'u.id', 'k.gateway_user_id')
    .leftJoin('teams as t', 't.id', 'u.team_id')
    .select(['k.id as apiKeyId', 'k.expires_at', 'k.revoked_at', 'u.id as userId', 'u.name', 'u.disabled', 'u.rpm', 'u.tpm', 'u.max_concurrent', 'k.rpm as keyRpm', 'k.tpm as keyTpm', 'k.models', 'k.tags'])
    .select(['t.id as teamId', 't.name as teamName', 't.rpm as teamRpm', 't.tpm as teamTpm', 't.max_concurrent as teamMaxConcurrent', 't.models as teamModels']);
}

async function hashOf(store: Store, apiKeyId: number): Promise<string | undefined> {
  const row = await store.db.selectFrom('api_keys').select('key_hash').where('id', '=', apiKeyId).executeTakeFirst();
  return row?.key_hash;
}

function createSqliteKeyStore(store: SqliteStore): KeyStore {
  const lookup = prepareQuery(store.sqlite, keyQuery(store).where('k.key_hash', '=', ''));
  const touch = prepareQuery(store.sqlite, store.db.updateTable('api_keys').set({ last_used_at: '' }).where('id', '=', 0));
  const touchAll = store.sqlite.transaction((entries: ReadonlyArray<readonly [number, number]>) => {
    for (const [id, atMs] of entries) touch.run(nowIso(atMs), id);
  });
  return {
    lookup: (hash) => lookup.get(hash),
    touch(entries) {
      // The gateway may flush once more while closing, after the store is closed.
      if (store.sqlite.open) touchAll(entries);
    },
    hashOf: (apiKeyId) => hashOf(store, apiKeyId),
  };
}

function createPostgresKeyStore(store: Store): KeyStore {
  return {
    lookup: (hash) => keyQuery(store).where('k.key_hash', '=', hash).executeTakeFirst(),
    touch: (entries) =>
      store.db.transaction().execute(async (trx) => {
        for (const [id, atMs] of entries) await trx.updateTable('api_keys').set({ last_used_at: nowIso(atMs) }).where('id', '=', id).execute();
      }),
    hashOf: (apiKeyId) => hashOf(store, apiKeyId),
  };
}

/** The key store for `store`'s engine. */
export function createKeyStore(store: Store): KeyStore {
  return store.engine === 'sqlite' ? createSqliteKeyStore(store) : createPostgresKeyStore(store);
}
