/**
 * Per-user provider credentials, sealed with AES-256-GCM under the master key (`secret-box.ts`).
 * Only the masked hint, the base URL and the key id are ever shown; the key in clear exists only in
 * memory, on its way to the upstream. Each record's AAD is its owner and provider, so a ciphertext
 * moved to another row does not open.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, ProviderCredentialsTable } from '../store/db-types.ts';
import { nowIso, prepareQuery, type Store } from '../store/store.ts';
import { maskSecret, open, seal, type Keyring } from './secret-box.ts';
import { resealTable, type SealedTable } from './reseal-table.ts';
import { USAGE_REPORT_SEALED_TABLE } from './usage-report-credentials.ts';

/** A stored credential as shown by the CLI and APIs: never the key itself. */
export interface ProviderCredentialView {
  gateway_user_id: number | null;
  provider: string;
  /** Masked key, e.g. `sk-…7f3a`. */
  hint: string;
  /** Overrides the provider's base URL for this user's requests; null = the provider's. */
  base_url: string | null;
  /** Which master key sealed it (changes on `tollgate secret rotate`). */
  key_id: string;
  created_at: string;
  updated_at: string;
}

/** What `ProviderCredentialView` shows: everything but the sealed key. */
const VIEW_COLUMNS = ['gateway_user_id', 'provider', 'hint', 'base_url', 'key_id', 'created_at', 'updated_at'] as const;

/** An opened credential. */
export interface OpenedCredential {
  apiKey: string;
  baseUrl: string | null;
}

function aadOf(gatewayUserId: number | null, provider: string): string {
  return `provider_credentials:${gatewayUserId ?? 'shared'}:${provider}`;
}

/** Stores (or replaces) a user's credential for `provider`. */
export async function setProviderCredential(
  db: Kysely<Database>, keyring: Keyring,
  input: { gatewayUserId: number; provider: string; apiKey: string; baseUrl?: string | null },
): Promise<ProviderCredentialView> {
  const sealed = seal(input.apiKey, keyring, aadOf(input.gatewayUserId, input.provider));
  const now = nowIso();
  const values = {
    ciphertext: sealed.ciphertext, nonce: sealed.nonce, auth_tag: sealed.authTag, key_id: sealed.keyId,
    hint: maskSecret(input.apiKey), base_url: input.baseUrl ?? null, updated_at: now,
  };
  return db
    .insertInto('provider_credentials')
    .values({ gateway_user_id: input.gatewayUserId, provider: input.provider, created_at: now, ...values })
    .onConflict((oc) => oc.columns(['gateway_user_id', 'provider']).doUpdateSet(values))
    .returning(VIEW_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** A user's credentials (all users' when `gatewayUserId` is undefined), masked. */
export async function listProviderCredentials(db: Kysely<Database>, gatewayUserId?: number): Promise<ProviderCredentialView[]> {
  let query = db
    .selectFrom('provider_credentials')
    .select(VIEW_COLUMNS)
    .orderBy('gateway_user_id')
    .orderBy('provider');
  if (gatewayUserId !== undefined) query = query.where('gateway_user_id', '=', gatewayUserId);
  return query.execute();
}

/** Deletes a user's credential for `provider`; false when there was none. */
export async function deleteProviderCredential(db: Kysely<Database>, gatewayUserId: number, provider: string): Promise<boolean> {
  const result = await db
    .deleteFrom('provider_credentials')
    .where('gateway_user_id', '=', gatewayUserId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The columns that open a record. */
type SealedRow = Pick<Selectable<ProviderCredentialsTable>, 'id' | 'gateway_user_id' | 'provider' | 'ciphertext' | 'nonce' | 'auth_tag' | 'key_id' | 'base_url'>;

const SEALED_COLUMNS = ['id', 'gateway_user_id', 'provider', 'ciphertext', 'nonce', 'auth_tag', 'key_id', 'base_url'] as const;

function openRow(row: SealedRow, keyring: Keyring): string {
  return open({ ciphertext: row.ciphertext, nonce: row.nonce, authTag: row.auth_tag, keyId: row.key_id }, keyring, aadOf(row.gateway_user_id, row.provider));
}

function openRows(rows: readonly SealedRow[], keyring: Keyring): Map<string, OpenedCredential> {
  const out = new Map<string, OpenedCredential>();
  for (const row of rows) out.set(row.provider, { apiKey: openRow(row, keyring), baseUrl: row.base_url });
  return out;
}

/**
 * Reads one user's credentials, opened, by provider. It runs on the request path behind a cache: on
 * SQLite a prepared statement answers synchronously; on PostgreSQL it returns a Promise (bytea comes
 * back as Buffers, as SQLite's blobs do). Throws (or rejects with) `SecretOpenError` for a record that
 * does not open.
 */
export type CredentialReader = (gatewayUserId: number, keyring: Keyring) => Map<string, OpenedCredential> | Promise<Map<string, OpenedCredential>>;

/** The credential reader for `store`'s engine. */
export function createCredentialReader(store: Store): CredentialReader {
  const query = store.db.selectFrom('provider_credentials').select(SEALED_COLUMNS);
  if (store.engine === 'sqlite') {
    const statement = prepareQuery(store.sqlite, query.where('gateway_user_id', '=', 0));
    return (gatewayUserId, keyring) => openRows(statement.all(gatewayUserId), keyring);
  }
  return async (gatewayUserId, keyring) => openRows(await query.where('gateway_user_id', '=', gatewayUserId).execute(), keyring);
}

/**
 * Re-seals every record (and every admin credential, `usage-report-credentials.ts`) under `to.current` in one transaction (records already under it are skipped).
 * `from` must open every record; otherwise nothing changes and `SecretOpenError` is thrown.
 * Returns how many records were re-sealed.
 */
export async function resealAll(db: Kysely<Database>, from: Keyring, to: Keyring): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const providerCredentials: SealedTable = {
      table: 'provider_credentials', keyColumn: 'id', aadOf: (row) => aadOf(row.gateway_user_id as number | null, row.provider as string),
    };
    // The admin (usage report) credentials are sealed under the same master key.
    return await resealTable(trx, providerCredentials, from, to) + await resealTable(trx, USAGE_REPORT_SEALED_TABLE, from, to);
  });
}

/** A user's credential for `provider`, masked, or undefined. */
export async function findProviderCredential(db: Kysely<Database>, gatewayUserId: number, provider: string): Promise<ProviderCredentialView | undefined> {
  return db
    .selectFrom('provider_credentials')
    .select(VIEW_COLUMNS)
    .where('gateway_user_id', '=', gatewayUserId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}
