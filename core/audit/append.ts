/**
 * `appendAudit`: adds one row at the head of the audit chain. The head (`audit_chain_head`) is read
 * and moved in the same transaction as the insert: on PostgreSQL `SELECT ... FOR UPDATE` on that one
 * row serialises every replica's appends, on SQLite the write lock is taken before the head is read
 * (`lockForWrite`), so two writers never give the same id or `prev_hash` (which is UNIQUE besides:
 * a fork could not be stored even if they did).
 */
import { isStoreUnavailableError } from '../store/store-errors.ts';
import { lockForWrite, nowIso, type Store } from '../store/store.ts';
import type { AuditLogTable } from '../store/db-types.ts';
import { auditRowHash, canonicalJson } from './audit-hash.ts';
import { redactSecrets } from './redact.ts';
import type { AuditEntry } from './audit.ts';

/** Attempts when SQLite answers "busy" (another process, e.g. the CLI, holds the write lock), and the wait between two, ms. */
const BUSY_ATTEMPTS = 40;
const BUSY_RETRY_MS = 25;

/**
 * Appends `entry` (secrets redacted, `before`/`after` as canonical JSON) and returns the stored row.
 * `atMs`: the action's time, ms since the epoch (default now). Retries while SQLite is locked by another
 * process for up to ~1 s; throws the store's error otherwise (the caller decides whether the action
 * stands without its row: the admin router logs it as an error).
 */
export async function appendAudit(store: Store, entry: AuditEntry, atMs: number = Date.now()): Promise<AuditLogTable> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await appendOnce(store, entry, atMs);
    } catch (err) {
      if (store.engine !== 'sqlite' || attempt >= BUSY_ATTEMPTS || !isStoreUnavailableError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
    }
  }
}

function appendOnce(store: Store, entry: AuditEntry, atMs: number): Promise<AuditLogTable> {
  return store.db.transaction().execute(async (trx) => {
    let headQuery = trx.selectFrom('audit_chain_head').select(['last_id', 'last_hash']).where('singleton', '=', 1);
    if (store.engine === 'postgres') headQuery = headQuery.forUpdate();
    else await lockForWrite(trx, 'audit_chain_head');
    const head = await headQuery.executeTakeFirstOrThrow();
    const fields = {
      id: Number(head.last_id) + 1,
      at: nowIso(atMs),
      actor: entry.actor,
      actor_kind: entry.actorKind,
      role: entry.role ?? null,
      ip: entry.ip ?? null,
      action: entry.action,
      object_type: entry.objectType ?? null,
      object_id: entry.objectId === undefined || entry.objectId === null ? null : String(entry.objectId),
      before: canonicalJson(redactSecrets(entry.before)),
      after: canonicalJson(redactSecrets(entry.after)),
      request_id: entry.requestId ?? null,
      prev_hash: head.last_hash,
    };
    const row: AuditLogTable = { ...fields, hash: auditRowHash(fields) };
    await trx.insertInto('audit_log').values(row).execute();
    await trx.updateTable('audit_chain_head').set({ last_id: row.id, last_hash: row.hash }).where('singleton', '=', 1).execute();
    return row;
  });
}
