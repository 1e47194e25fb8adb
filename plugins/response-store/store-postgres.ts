/**
 * The response table on PostgreSQL (`store.ts` states the contract): Kysely queries on the pool. A
 * chain of turns is one recursive query, not a round trip per turn; a write is one transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../core/store/db-types.ts';
import { nowIso } from '../../core/store/store.ts';
import { outputItemIds, parseResponseRow, type ResponseRow, type ResponseTable, type StoredResponse } from './store.ts';

const COLUMNS = ['id', 'model', 'provider', 'served_natively', 'previous_response_id', 'input_items', 'response'] as const;

/** The table on a PostgreSQL store's `db`. */
export function createPostgresResponseTable(db: Kysely<Database>): ResponseTable {
  const table: ResponseTable = {
    async find(gatewayUserId, id, nowMs) {
      const row = await db.selectFrom('responses').select(COLUMNS)
        .where('gateway_user_id', '=', gatewayUserId).where('id', '=', id).where('expires_at', '>', nowIso(nowMs))
        .executeTakeFirst();
      return row ? parseResponseRow(row) : null;
    },
    async chain(gatewayUserId, id, nowMs, maxDepth) {
      const now = nowIso(nowMs);
      // Each step is one primary-key lookup; `depth` bounds the walk (and a cycle of repeated ids).
      const { rows } = await sql<ResponseRow & { depth: number }>`
        WITH RECURSIVE chain AS (
          SELECT id, model, provider, served_natively, previous_response_id, input_items, response, 1 AS depth
          FROM responses WHERE gateway_user_id = ${gatewayUserId} AND id = ${id} AND expires_at > ${now}
          UNION ALL
          SELECT r.id, r.model, r.provider, r.served_natively, r.previous_response_id, r.input_items, r.response, chain.depth + 1
          FROM chain JOIN responses r ON r.gateway_user_id = ${gatewayUserId} AND r.id = chain.previous_response_id AND r.expires_at > ${now}
          WHERE chain.depth < ${maxDepth}
        )
        SELECT id, model, provider, served_natively, previous_response_id, input_items, response, depth FROM chain ORDER BY depth`.execute(db);
      const seen = new Set<string>();
      const turns: StoredResponse[] = [];
      for (const row of rows) {
        if (seen.has(row.id)) break;
        seen.add(row.id);
        turns.push(parseResponseRow(row));
      }
      return turns;
    },
    async findByItem(gatewayUserId, itemId, nowMs) {
      const hit = await db.selectFrom('response_items').select('response_id')
        .where('gateway_user_id', '=', gatewayUserId).where('item_id', '=', itemId).executeTakeFirst();
      return hit ? table.find(gatewayUserId, hit.response_id, nowMs) : null;
    },
    async insert(row) {
      const itemIds = outputItemIds(row.response);
      await db.transaction().execute(async (trx) => {
        // Deleting first drops the replaced response's item ids with it (the foreign key cascades).
        await trx.deleteFrom('responses').where('gateway_user_id', '=', row.gatewayUserId).where('id', '=', row.id).execute();
        await trx.insertInto('responses').values({
          gateway_user_id: row.gatewayUserId, id: row.id, created_at: nowIso(row.createdAtMs), expires_at: nowIso(row.expiresAtMs),
          model: row.model, provider: row.provider, served_natively: row.servedNatively ? 1 : 0,
          previous_response_id: row.previousResponseId, input_items: JSON.stringify(row.inputItems), response: JSON.stringify(row.response),
        }).execute();
        if (itemIds.length === 0) return;
        // An item id this user already has elsewhere now points at the newer response.
        await trx.insertInto('response_items')
          .values(itemIds.map((itemId) => ({ gateway_user_id: row.gatewayUserId, item_id: itemId, response_id: row.id })))
          .onConflict((oc) => oc.columns(['gateway_user_id', 'item_id']).doUpdateSet({ response_id: (eb) => eb.ref('excluded.response_id') }))
          .execute();
      });
    },
    async remove(gatewayUserId, id, nowMs) {
      const result = await db.deleteFrom('responses')
        .where('gateway_user_id', '=', gatewayUserId).where('id', '=', id).where('expires_at', '>', nowIso(nowMs))
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async sweepBatch(nowMs, limit) {
      // Batches keep each delete (and the locks it holds) short whatever the backlog; the primary key
      // pair stands in for SQLite's rowid (ctid IN (subquery) would not use a TID scan).
      const result = await db.deleteFrom('responses')
        .where(({ eb, refTuple, selectFrom }) => eb(refTuple('gateway_user_id', 'id'), 'in',
          selectFrom('responses').select(['gateway_user_id', 'id']).where('expires_at', '<=', nowIso(nowMs)).limit(limit)
            .$asTuple('gateway_user_id', 'id'),
        ))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
  return table;
}
