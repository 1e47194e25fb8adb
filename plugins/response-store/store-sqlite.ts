/**
 * The response table on SQLite (`store.ts` states the contract): statements prepared once and run
 * synchronously on better-sqlite3, each one indexed lookup or a bounded batch; the methods resolve at
 * once. A chain is walked one primary-key lookup per turn (microseconds each, no round trips).
 */
import type { SqliteDatabase as Sqlite } from '../../core/store/driver-sqlite.ts';
import { nowIso } from '../../core/store/store.ts';
import { outputItemIds, parseResponseRow, type NewStoredResponse, type ResponseRow, type ResponseTable, type StoredResponse } from './store.ts';

/** The table's statements on `sqlite`. */
export function createSqliteResponseTable(sqlite: Sqlite): ResponseTable {
  const select = sqlite.prepare<[number, string, string], ResponseRow>(
    'SELECT id, model, provider, served_natively, previous_response_id, input_items, response FROM responses WHERE gateway_user_id = ? AND id = ? AND expires_at > ?',
  );
  // REPLACE deletes the row it replaces, and the foreign key cascades to that row's item ids.
  const insert = sqlite.prepare(
    `INSERT OR REPLACE INTO responses (gateway_user_id, id, created_at, expires_at, model, provider, served_natively, previous_response_id, input_items, response)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byItem = sqlite.prepare<[number, string], { response_id: string }>('SELECT response_id FROM response_items WHERE gateway_user_id = ? AND item_id = ?');
  const insertItem = sqlite.prepare('INSERT OR REPLACE INTO response_items (gateway_user_id, item_id, response_id) VALUES (?, ?, ?)');
  const remove = sqlite.prepare('DELETE FROM responses WHERE gateway_user_id = ? AND id = ? AND expires_at > ?');
  // rowid batches keep each delete (and the write lock it holds) short whatever the backlog.
  const sweep = sqlite.prepare('DELETE FROM responses WHERE rowid IN (SELECT rowid FROM responses WHERE expires_at <= ? LIMIT ?)');
  // A response and its item ids are written together.
  const insertWithItems = sqlite.transaction((row: NewStoredResponse) => {
    insert.run(
      row.gatewayUserId, row.id, nowIso(row.createdAtMs), nowIso(row.expiresAtMs), row.model, row.provider, row.servedNatively ? 1 : 0,
      row.previousResponseId, JSON.stringify(row.inputItems), JSON.stringify(row.response),
    );
    for (const itemId of outputItemIds(row.response)) insertItem.run(row.gatewayUserId, itemId, row.id);
  });
  const find = (gatewayUserId: number, id: string, nowMs: number): StoredResponse | null => {
    const row = select.get(gatewayUserId, id, nowIso(nowMs));
    return row ? parseResponseRow(row) : null;
  };
  return {
    async find(gatewayUserId, id, nowMs) {
      return find(gatewayUserId, id, nowMs);
    },
    async chain(gatewayUserId, id, nowMs, maxDepth) {
      const first = find(gatewayUserId, id, nowMs);
      if (!first) return [];
      const chain = [first];
      const seen = new Set([id]);
      let next = first.previousResponseId;
      while (next && chain.length < maxDepth && !seen.has(next)) {
        const turn = find(gatewayUserId, next, nowMs);
        if (!turn) break;
        seen.add(next);
        chain.push(turn);
        next = turn.previousResponseId;
      }
      return chain;
    },
    async findByItem(gatewayUserId, itemId, nowMs) {
      const hit = byItem.get(gatewayUserId, itemId);
      return hit ? find(gatewayUserId, hit.response_id, nowMs) : null;
    },
    async insert(row) {
      insertWithItems(row);
    },
    async remove(gatewayUserId, id, nowMs) {
      return remove.run(gatewayUserId, id, nowIso(nowMs)).changes > 0;
    },
    async sweepBatch(nowMs, limit) {
      return sweep.run(nowIso(nowMs), limit).changes;
    },
  };
}
