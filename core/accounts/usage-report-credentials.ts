/**
 * Admin ("usage report") credentials: one per provider id, the key that reads the provider's own
 * usage and cost reports for reconciliation (`core/reconcile/`). An OpenAI `sk-admin-...` or an
 * Anthropic `sk-ant-admin...` key can read the whole organization's spend, so it is sealed like every
 * provider credential (AES-256-GCM under the master key, `secret-box.ts`), shown only as its masked
 * hint, opened only in memory for the report calls, and never logged. The AAD binds it to its
 * provider: a ciphertext moved to another row does not open.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import type { SealedTable } from './reseal-table.ts';
import { maskSecret, open, seal, type Keyring } from './secret-box.ts';

/** A stored admin credential as the CLI and APIs show it: never the key. */
export interface UsageReportCredentialView {
  provider: string;
  /** The report API (`openai`, `anthropic`). */
  kind: string;
  hint: string;
  base_url: string | null;
  /** The provider-side ids of the keys Tollgate uses; null = not told. */
  gateway_key_ids: string[] | null;
  /** The provider's own key ids → the fingerprints of the Tollgate credentials they are (`…a1b2`); null = not told. */
  key_map: Record<string, string> | null;
  key_id: string;
  created_at: string;
  updated_at: string;
}

/** An opened admin credential. */
export interface OpenedUsageReportCredential {
  provider: string;
  kind: string;
  adminKey: string;
  baseUrl: string | null;
  gatewayKeyIds: string[] | null;
  /** Provider key id → Tollgate credential fingerprint; null = not told. */
  keyMap: Record<string, string> | null;
}

function aadOf(provider: string): string {
  return `usage_report_credentials:${provider}`;
}

const VIEW_COLUMNS = ['provider', 'kind', 'hint', 'base_url', 'gateway_key_ids', 'key_map', 'key_id', 'created_at', 'updated_at'] as const;

function toView(row: { gateway_key_ids: string | null; key_map: string | null } & Omit<UsageReportCredentialView, 'gateway_key_ids' | 'key_map'>): UsageReportCredentialView {
  return { ...row, gateway_key_ids: parseJson<string[]>(row.gateway_key_ids), key_map: parseJson<Record<string, string>>(row.key_map) };
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : JSON.parse(text) as T;
}

/** Stores (or replaces) the admin credential of `provider`. */
export async function setUsageReportCredential(
  db: Kysely<Database>, keyring: Keyring,
  input: { provider: string; kind: string; adminKey: string; baseUrl?: string | null; gatewayKeyIds?: string[] | null; keyMap?: Record<string, string> | null },
): Promise<UsageReportCredentialView> {
  const sealed = seal(input.adminKey, keyring, aadOf(input.provider));
  const now = nowIso();
  const values = {
    kind: input.kind, ciphertext: sealed.ciphertext, nonce: sealed.nonce, auth_tag: sealed.authTag, key_id: sealed.keyId,
    hint: maskSecret(input.adminKey), base_url: input.baseUrl ?? null,
    gateway_key_ids: input.gatewayKeyIds ? JSON.stringify(input.gatewayKeyIds) : null,
    key_map: input.keyMap ? JSON.stringify(input.keyMap) : null, updated_at: now,
  };
  const row = await db.insertInto('usage_report_credentials').values({ provider: input.provider, created_at: now, ...values })
    .onConflict((oc) => oc.column('provider').doUpdateSet(values))
    .returning(VIEW_COLUMNS).executeTakeFirstOrThrow();
  return toView(row);
}

/** Every stored admin credential, masked, by provider id. */
export async function listUsageReportCredentials(db: Kysely<Database>): Promise<UsageReportCredentialView[]> {
  const rows = await db.selectFrom('usage_report_credentials').select(VIEW_COLUMNS).orderBy('provider').execute();
  return rows.map(toView);
}

/** Deletes the admin credential of `provider`; false when there was none. */
export async function deleteUsageReportCredential(db: Kysely<Database>, provider: string): Promise<boolean> {
  const result = await db.deleteFrom('usage_report_credentials').where('provider', '=', provider).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The admin credentials, opened (only `providers` when given). Throws `SecretOpenError` for a record
 * that does not open (a master key this gateway does not hold).
 */
export async function openUsageReportCredentials(db: Kysely<Database>, keyring: Keyring, providers?: readonly string[]): Promise<OpenedUsageReportCredential[]> {
  let query = db.selectFrom('usage_report_credentials').selectAll().orderBy('provider');
  if (providers && providers.length > 0) query = query.where('provider', 'in', [...providers]);
  const rows = await query.execute();
  return rows.map((row) => ({
    provider: row.provider,
    kind: row.kind,
    adminKey: open({ ciphertext: row.ciphertext, nonce: row.nonce, authTag: row.auth_tag, keyId: row.key_id }, keyring, aadOf(row.provider)),
    baseUrl: row.base_url,
    gatewayKeyIds: parseJson<string[]>(row.gateway_key_ids),
    keyMap: parseJson<Record<string, string>>(row.key_map),
  }));
}

/** How many admin credentials are stored (the daily job runs only when there is one). */
export async function countUsageReportCredentials(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('usage_report_credentials').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The admin credentials as `resealTable` (`tollgate secret rotate`, with `resealAll`) re-seals them. */
export const USAGE_REPORT_SEALED_TABLE: SealedTable = {
  table: 'usage_report_credentials',
  keyColumn: 'provider',
  aadOf: (row) => aadOf(row.provider as string),
};
