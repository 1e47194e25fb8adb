/**
 * The `responses` table (schema.sql version 7): one row per stored response, keyed by its owner and
 * the id the client saw. Every read names the owner, so another user's id reads as missing; rows past
 * `expires_at` read as missing too, before the sweep removes them. Statements are prepared once and run
 * synchronously (better-sqlite3): each is one indexed lookup or a bounded batch.
 */
import type { ResponsesTable } from '../../core/db-types.ts';
import type { SqliteDatabase as Sqlite } from '../../core/sqlite-driver.ts';
import { nowIso } from '../../core/db.ts';
import type { Item } from './conversation.ts';

/** A stored response as the plugin reads it (JSON columns parsed). */
export interface StoredResponse {
  id: string;
  model: string;
  provider: string;
  servedNatively: boolean;
  previousResponseId: string | null;
  inputItems: Item[];
  /** The final response object, as the client received it. */
  response: Record<string, unknown>;
}

/** What is written for one response. */
export interface NewStoredResponse extends StoredResponse {
  gatewayUserId: number;
  createdAtMs: number;
  expiresAtMs: number;
}

export interface ResponseTable {
  /** The caller's unexpired response `id`, or null. */
  find(gatewayUserId: number, id: string, nowMs: number): StoredResponse | null;
  /** The caller's unexpired response holding the output item `itemId`, or null. */
  findByItem(gatewayUserId: number, itemId: string, nowMs: number): StoredResponse | null;
  /** Writes a response; an id the same user already has is replaced (an upstream that repeats ids). */
  insert(row: NewStoredResponse): void;
  /** Deletes the caller's unexpired response `id`; false when there was none. */
  remove(gatewayUserId: number, id: string, nowMs: number): boolean;
  /** Deletes at most `limit` rows expired at `nowMs`; returns how many it deleted. */
  sweepBatch(nowMs: number, limit: number): number;
}

type Row = Pick<ResponsesTable, 'id' | 'model' | 'provider' | 'served_natively' | 'previous_response_id' | 'input_items' | 'response'>;

/** Prepares the table's statements on `sqlite` (the gateway's store, migrated to version 7). */
export function createResponseTable(sqlite: Sqlite): ResponseTable {
  const select = sqlite.prepare<[number, string, string], Row>(
    'SELECT id, model, provider, served_natively, previous_response_id, input_items, response FROM responses WHERE gateway_user_id = ? AND id = ? AND expires_at > ?',
  );
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
    const output = Array.isArray(row.response.output) ? (row.response.output as unknown[]) : [];
    for (const item of output) {
      const itemId = (item as { id?: unknown } | null)?.id;
      if (typeof itemId === 'string' && itemId !== '') insertItem.run(row.gatewayUserId, itemId, row.id);
    }
  });
  const table: ResponseTable = {
    findByItem(gatewayUserId, itemId, nowMs) {
      const hit = byItem.get(gatewayUserId, itemId);
      return hit ? table.find(gatewayUserId, hit.response_id, nowMs) : null;
    },
    find(gatewayUserId, id, nowMs) {
      const row = select.get(gatewayUserId, id, nowIso(nowMs));
      if (!row) return null;
      return {
        id: row.id, model: row.model, provider: row.provider, servedNatively: row.served_natively === 1,
        previousResponseId: row.previous_response_id,
        inputItems: JSON.parse(row.input_items) as Item[],
        response: JSON.parse(row.response) as Record<string, unknown>,
      };
    },
    insert(row) {
      insertWithItems(row);
    },
    remove(gatewayUserId, id, nowMs) {
      return remove.run(gatewayUserId, id, nowIso(nowMs)).changes > 0;
    },
    sweepBatch(nowMs, limit) {
      return sweep.run(nowIso(nowMs), limit).changes;
    },
  };
  return table;
}
