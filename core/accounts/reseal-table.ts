/**
 * Re-sealing one table of sealed secrets under a new master key (`tollgate secret rotate`): the
 * provider credentials and the admin (usage report) credentials share the columns of a sealed record
 * (`ciphertext`, `nonce`, `auth_tag`, `key_id`, `updated_at`) and differ only in the row's name and
 * its AAD, so one loop serves both.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { lockForWrite, nowIso } from '../store/store.ts';
import { open, seal, type Keyring } from './secret-box.ts';

/** The columns of a sealed record, plus the row's other columns. */
export interface SealedRecordRow {
  ciphertext: Buffer;
  nonce: Buffer;
  auth_tag: Buffer;
  key_id: string;
  updated_at: string;
  [column: string]: unknown;
}

/** A table of sealed records. */
export interface SealedTable {
  table: 'provider_credentials' | 'usage_report_credentials';
  /** The column that names one row (its primary key). */
  keyColumn: string;
  /** The AAD a row was sealed with (binds the ciphertext to its row). */
  aadOf(row: SealedRecordRow): string;
}

/**
 * Re-seals every record of `spec.table` under `to.current` inside `trx` (records already under it are
 * skipped), the table locked for writing first. Returns how many were re-sealed.
 * @throws SecretOpenError when `from` does not open a record (the caller's transaction then changes nothing).
 */
export async function resealTable(trx: Kysely<Database>, spec: SealedTable, from: Keyring, to: Keyring): Promise<number> {
  await lockForWrite(trx, spec.table);
  // The two tables' rows differ beyond the sealed columns: a view of just those serves both.
  const db = trx as unknown as Kysely<Record<string, SealedRecordRow>>;
  const rows = await db.selectFrom(spec.table).selectAll().orderBy(spec.keyColumn).execute() as SealedRecordRow[];
  let count = 0;
  for (const row of rows) {
    if (row.key_id === to.current.id) continue;
    const aad = spec.aadOf(row);
    const clear = open({ ciphertext: row.ciphertext, nonce: row.nonce, authTag: row.auth_tag, keyId: row.key_id }, from, aad);
    const sealed = seal(clear, to, aad);
    await db.updateTable(spec.table)
      .set({ ciphertext: sealed.ciphertext, nonce: sealed.nonce, auth_tag: sealed.authTag, key_id: sealed.keyId, updated_at: nowIso() })
      .where(spec.keyColumn, '=', row[spec.keyColumn])
      .execute();
    count++;
  }
  return count;
}
