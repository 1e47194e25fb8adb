/**
 * The response table on SQLite (`store.ts` states the contract): statements prepared once and run
 * synchronously on better-sqlite3, each one indexed lookup or a bounded batch; the methods resolve at
 * once. A chain is walked one primary-key lookup per turn (microseconds each, no round trips).
 */
import type { SqliteDatabase as Sqlite } from '../../core/store/driver-sqlite.ts';
import { nowIso } from '../../core/store/store.ts';
import {
  overQuota, parseResponseRow, serializeResponse, tooLargeAlone,
  type NewStoredResponse, type ResponseRow, type ResponseTable, type StoreQuota, type StoredItem, type StoredResponse, type StoreTotals,
} from './store.ts';

type SizedRow = ResponseRow & { size_bytes: number };
type ItemRow = { item: string; response_id: string; provider: string; served_natively: number };

/** Oldest responses read per step of an expire-oldest insert (usually one or two are deleted). */
const OLDEST_BATCH = 64;

/** The table's statements on `sqlite`. */
export function createSqliteResponseTable(sqlite: Sqlite): ResponseTable {
  const select = sqlite.prepare<[number, string, string], SizedRow>(
    'SELECT id, model, provider, served_natively, previous_response_id, input_items, response, size_bytes FROM responses WHERE gateway_user_id = ? AND id = ? AND expires_at > ?',
  );
  // A plain delete first (not INSERT OR REPLACE): REPLACE's implicit delete fires no trigger, and
  // `response_totals` counts by triggers. The foreign key cascades to the replaced row's items.
  const removeSame = sqlite.prepare('DELETE FROM responses WHERE gateway_user_id = ? AND id = ?');
  const insert = sqlite.prepare(
    `INSERT INTO responses (gateway_user_id, id, created_at, expires_at, model, provider, served_natively, previous_response_id, input_items, response, size_bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byItem = sqlite.prepare<[number, string, string], ItemRow>(
    `SELECT i.item, r.id AS response_id, r.provider, r.served_natively FROM response_items i
     JOIN responses r ON r.gateway_user_id = i.gateway_user_id AND r.id = i.response_id
     WHERE i.gateway_user_id = ? AND i.item_id = ? AND r.expires_at > ? AND i.item IS NOT NULL`,
  );
  // An item id this user already has elsewhere now points at the newer response.
  const insertItem = sqlite.prepare('INSERT OR REPLACE INTO response_items (gateway_user_id, item_id, response_id, item) VALUES (?, ?, ?, ?)');
  const remove = sqlite.prepare('DELETE FROM responses WHERE gateway_user_id = ? AND id = ? AND expires_at > ?');
  const removeExpiredOf = sqlite.prepare('DELETE FROM responses WHERE gateway_user_id = ? AND expires_at <= ?');
  // rowid batches keep each delete (and the write lock it holds) short whatever the backlog.
  const sweep = sqlite.prepare('DELETE FROM responses WHERE rowid IN (SELECT rowid FROM responses WHERE expires_at <= ? LIMIT ?)');
  const oldest = sqlite.prepare<[number, number], { id: string; size_bytes: number }>(
    'SELECT id, size_bytes FROM responses WHERE gateway_user_id = ? ORDER BY created_at, id LIMIT ?',
  );
  const totalsOf = sqlite.prepare<[number], { response_count: number; bytes: number }>('SELECT response_count, bytes FROM response_totals WHERE gateway_user_id = ?');
  const totals = sqlite.prepare<[], { response_count: number; bytes: number }>(
    'SELECT coalesce(sum(response_count), 0) AS response_count, coalesce(sum(bytes), 0) AS bytes FROM response_totals',
  );
  const totalsFor = (gatewayUserId: number): StoreTotals => {
    const row = totalsOf.get(gatewayUserId);
    return { responseCount: row?.response_count ?? 0, bytes: row?.bytes ?? 0 };
  };
  /** Deletes the user's oldest responses until one of `sizeBytes` fits `quota`. */
  const makeRoom = (gatewayUserId: number, sizeBytes: number, quota: StoreQuota): void => {
    const used = totalsFor(gatewayUserId);
    while (overQuota(used, sizeBytes, quota)) {
      const batch = oldest.all(gatewayUserId, OLDEST_BATCH);
      if (batch.length === 0) return;
      for (const row of batch) {
        removeSame.run(gatewayUserId, row.id);
        used.responseCount -= 1;
        used.bytes -= row.size_bytes;
        if (!overQuota(used, sizeBytes, quota)) return;
      }
    }
  };
  // A response and its items are written together, with the room the quota makes for them.
  const insertWithItems = sqlite.transaction((row: NewStoredResponse, quota: StoreQuota | null): boolean => {
    const serialized = serializeResponse(row);
    if (quota && tooLargeAlone(serialized.sizeBytes, quota)) return false;
    removeSame.run(row.gatewayUserId, row.id);
    if (quota) makeRoom(row.gatewayUserId, serialized.sizeBytes, quota);
    insert.run(
      row.gatewayUserId, row.id, nowIso(row.createdAtMs), nowIso(row.expiresAtMs), row.model, row.provider, row.servedNatively ? 1 : 0,
      row.previousResponseId, serialized.inputItems, serialized.response, serialized.sizeBytes,
    );
    for (const [itemId, json] of serialized.items) insertItem.run(row.gatewayUserId, itemId, row.id, json);
    return true;
  });
  const find = (gatewayUserId: number, id: string, nowMs: number): StoredResponse | null => {
    const row = select.get(gatewayUserId, id, nowIso(nowMs));
    return row ? parseResponseRow(row) : null;
  };
  return {
    async find(gatewayUserId, id, nowMs) {
      return find(gatewayUserId, id, nowMs);
    },
    async chain(gatewayUserId, id, nowMs, { maxDepth, maxBytes }) {
      const now = nowIso(nowMs);
      const turns: StoredResponse[] = [];
      const seen = new Set<string>();
      let bytes = 0;
      let next: string | null = id;
      while (next && turns.length < maxDepth && !seen.has(next)) {
        const row = select.get(gatewayUserId, next, now);
        if (!row) break;
        bytes += row.size_bytes;
        // Past the bound nothing more is parsed: that is the work the bound caps.
        if (bytes > maxBytes) return { turns, overBytes: true };
        seen.add(next);
        const turn = parseResponseRow(row);
        turns.push(turn);
        next = turn.previousResponseId;
      }
      return { turns, overBytes: false };
    },
    async findItems(gatewayUserId, itemIds, nowMs) {
      const now = nowIso(nowMs);
      const found = new Map<string, StoredItem>();
      for (const itemId of itemIds) {
        const row = byItem.get(gatewayUserId, itemId, now);
        if (row) found.set(itemId, { itemId, json: row.item, responseId: row.response_id, provider: row.provider, servedNatively: row.served_natively === 1 });
      }
      return found;
    },
    async insert(row, quota = null) {
      return insertWithItems(row, quota);
    },
    async remove(gatewayUserId, id, nowMs) {
      return remove.run(gatewayUserId, id, nowIso(nowMs)).changes > 0;
    },
    async sweepBatch(nowMs, limit) {
      return sweep.run(nowIso(nowMs), limit).changes;
    },
    async removeExpiredOf(gatewayUserId, nowMs) {
      return removeExpiredOf.run(gatewayUserId, nowIso(nowMs)).changes;
    },
    async totalsOf(gatewayUserId) {
      return totalsFor(gatewayUserId);
    },
    async totals() {
      const row = totals.get()!;
      return { responseCount: row.response_count, bytes: row.bytes };
    },
  };
}
