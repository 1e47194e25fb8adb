/**
 * `verifyAuditChain`: reads the audit log in id order and checks, row by row, that ids follow each other
 * (a gap is a deleted row), that each `prev_hash` is the previous row's `hash`, and that each `hash`
 * matches the row's content; then that the chain head names the last row (rows deleted at the end).
 */
import type { Store } from '../store/store.ts';
import type { AuditLogTable } from '../store/db-types.ts';
import { auditRowHash, GENESIS_HASH } from './audit-hash.ts';
import type { AuditVerification } from './audit.ts';

/** Rows read per query: the log is read in pages so a long one never sits in memory whole. */
const PAGE_ROWS = 1000;

/** Checks the whole chain; `{ok: true, rows}` or the first bad row's id and why (`AuditVerification`). */
export async function verifyAuditChain(store: Store): Promise<AuditVerification> {
  let lastId = 0;
  let lastHash = GENESIS_HASH;
  let rows = 0;
  const bad = (firstBadId: number, reason: string): AuditVerification => ({ ok: false, rows, firstBadId, reason });
  for (;;) {
    const page: AuditLogTable[] = await store.db.selectFrom('audit_log').selectAll().where('id', '>', lastId).orderBy('id').limit(PAGE_ROWS).execute();
    for (const raw of page) {
      const row = { ...raw, id: Number(raw.id) };
      if (row.id !== lastId + 1) {
        return bad(lastId + 1, row.id - lastId === 2 ? `row ${lastId + 1} is missing (deleted)` : `rows ${lastId + 1} to ${row.id - 1} are missing (deleted)`);
      }
      if (row.prev_hash !== lastHash) return bad(row.id, `row ${row.id}'s prev_hash does not match row ${lastId}'s hash`);
      if (auditRowHash(row) !== row.hash) return bad(row.id, `row ${row.id}'s hash does not match its content (edited)`);
      lastId = row.id;
      lastHash = row.hash;
      rows++;
    }
    if (page.length < PAGE_ROWS) break;
  }
  const head = await store.db.selectFrom('audit_chain_head').select(['last_id', 'last_hash']).where('singleton', '=', 1).executeTakeFirst();
  if (!head) return bad(lastId + 1, 'the chain head (audit_chain_head) is missing');
  const headId = Number(head.last_id);
  if (headId > lastId) return bad(lastId + 1, headId === lastId + 1 ? `row ${headId} is missing (deleted): the chain head names it` : `rows ${lastId + 1} to ${headId} are missing (deleted): the chain head names row ${headId}`);
  if (headId !== lastId || head.last_hash !== lastHash) return bad(lastId, `the chain head does not name row ${lastId}'s hash`);
  return { ok: true, rows, firstBadId: null, reason: null };
}
