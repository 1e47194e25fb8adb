/**
 * The response table on PostgreSQL (`store.ts` states the contract): Kysely queries on the pool. A
 * chain of turns is one recursive query, not a round trip per turn; a write is one transaction.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../core/store/db-types.ts';
import { nowIso } from '../../core/store/store.ts';
import {
  overQuota, parseResponseRow, serializeResponse, tooLargeAlone,
  type ResponseRow, type ResponseTable, type StoreQuota, type StoredItem, type StoredResponse, type StoreTotals,
} from './store.ts';

const COLUMNS = ['id', 'model', 'provider', 'served_natively', 'previous_response_id', 'input_items', 'response'] as const;

/** Oldest responses read per step of an expire-oldest insert (usually one or two are deleted). */
const OLDEST_BATCH = 64;

function totalsOfRow(row: { response_count: number | string; bytes: number | string } | undefined): StoreTotals {
  return { responseCount: Number(row?.response_count ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** Deletes the user's oldest responses, within `trx`, until one of `sizeBytes` fits `quota`. */
async function makeRoom(trx: Transaction<Database>, gatewayUserId: number, sizeBytes: number, quota: StoreQuota): Promise<void> {
  const used = totalsOfRow(await trx.selectFrom('response_totals').select(['response_count', 'bytes']).where('gateway_user_id', '=', gatewayUserId).executeTakeFirst());
  while (overQuota(used, sizeBytes, quota)) {
    const batch = await trx.selectFrom('responses').select(['id', 'size_bytes']).where('gateway_user_id', '=', gatewayUserId)
      .orderBy('created_at').orderBy('id').limit(OLDEST_BATCH).execute();
    if (batch.length === 0) return;
    const doomed: string[] = [];
    for (const row of batch) {
      doomed.push(row.id);
      used.responseCount -= 1;
      used.bytes -= Number(row.size_bytes);
      if (!overQuota(used, sizeBytes, quota)) break;
    }
    await trx.deleteFrom('responses').where('gateway_user_id', '=', gatewayUserId).where('id', 'in', doomed).execute();
  }
}

/** The table on a PostgreSQL store's `db`. */
export function createPostgresResponseTable(db: Kysely<Database>): ResponseTable {
  const table: ResponseTable = {
    async find(gatewayUserId, id, nowMs) {
      const row = await db.selectFrom('responses').select(COLUMNS)
        .where('gateway_user_id', '=', gatewayUserId).where('id', '=', id).where('expires_at', '>', nowIso(nowMs))
        .executeTakeFirst();
      return row ? parseResponseRow(row) : null;
    },
    async chain(gatewayUserId, id, nowMs, { maxDepth, maxBytes }) {
      const now = nowIso(nowMs);
      // Each step is one primary-key lookup; `depth` bounds the walk (and a cycle of repeated ids), and
      // `total` (the bytes up to and including the row) stops it one row past `maxBytes`.
      const { rows } = await sql<ResponseRow & { depth: number; total: number | string }>`
        WITH RECURSIVE chain AS (
          SELECT id, model, provider, served_natively, previous_response_id, input_items, response, 1 AS depth, size_bytes AS total
          FROM responses WHERE gateway_user_id = ${gatewayUserId} AND id = ${id} AND expires_at > ${now}
          UNION ALL
          SELECT r.id, r.model, r.provider, r.served_natively, r.previous_response_id, r.input_items, r.response, chain.depth + 1, chain.total + r.size_bytes
          FROM chain JOIN responses r ON r.gateway_user_id = ${gatewayUserId} AND r.id = chain.previous_response_id AND r.expires_at > ${now}
          WHERE chain.depth < ${maxDepth} AND chain.total <= ${maxBytes}
        )
        SELECT id, model, provider, served_natively, previous_response_id, input_items, response, depth, total FROM chain ORDER BY depth`.execute(db);
      const seen = new Set<string>();
      const turns: StoredResponse[] = [];
      for (const row of rows) {
        if (seen.has(row.id)) break;
        if (Number(row.total) > maxBytes) return { turns, overBytes: true };
        seen.add(row.id);
        turns.push(parseResponseRow(row));
      }
      return { turns, overBytes: false };
    },
    async findItems(gatewayUserId, itemIds, nowMs) {
      const found = new Map<string, StoredItem>();
      if (itemIds.length === 0) return found;
      const rows = await db.selectFrom('response_items as i')
        .innerJoin('responses as r', (join) => join.onRef('r.gateway_user_id', '=', 'i.gateway_user_id').onRef('r.id', '=', 'i.response_id'))
        .select(['i.item_id', 'i.item', 'r.id as response_id', 'r.provider', 'r.served_natively'])
        .where('i.gateway_user_id', '=', gatewayUserId).where('i.item_id', 'in', itemIds as string[])
        .where('r.expires_at', '>', nowIso(nowMs)).where('i.item', 'is not', null)
        .execute();
      for (const row of rows) {
        found.set(row.item_id, { itemId: row.item_id, json: row.item!, responseId: row.response_id, provider: row.provider, servedNatively: Number(row.served_natively) === 1 });
      }
      return found;
    },
    async insert(row, quota = null) {
      const serialized = serializeResponse(row);
      if (quota && tooLargeAlone(serialized.sizeBytes, quota)) return false;
      await db.transaction().execute(async (trx) => {
        // Deleting first drops the replaced response's items with it (the foreign key cascades).
        await trx.deleteFrom('responses').where('gateway_user_id', '=', row.gatewayUserId).where('id', '=', row.id).execute();
        if (quota) await makeRoom(trx, row.gatewayUserId, serialized.sizeBytes, quota);
        await trx.insertInto('responses').values({
          gateway_user_id: row.gatewayUserId, id: row.id, created_at: nowIso(row.createdAtMs), expires_at: nowIso(row.expiresAtMs),
          model: row.model, provider: row.provider, served_natively: row.servedNatively ? 1 : 0,
          previous_response_id: row.previousResponseId, input_items: serialized.inputItems, response: serialized.response, size_bytes: serialized.sizeBytes,
        }).execute();
        if (serialized.items.length === 0) return;
        // An item id this user already has elsewhere now points at the newer response.
        await trx.insertInto('response_items')
          .values(serialized.items.map(([itemId, item]) => ({ gateway_user_id: row.gatewayUserId, item_id: itemId, response_id: row.id, item })))
          .onConflict((oc) => oc.columns(['gateway_user_id', 'item_id']).doUpdateSet({
            response_id: (eb) => eb.ref('excluded.response_id'),
            item: (eb) => eb.ref('excluded.item'),
          }))
          .execute();
      });
      return true;
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
        .where((eb) => eb(eb.refTuple('gateway_user_id', 'id'), 'in',
          eb.selectFrom('responses').select(['gateway_user_id', 'id']).where('expires_at', '<=', nowIso(nowMs)).limit(limit)
            .$asTuple('gateway_user_id', 'id'),
        ))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async removeExpiredOf(gatewayUserId, nowMs) {
      const result = await db.deleteFrom('responses').where('gateway_user_id', '=', gatewayUserId).where('expires_at', '<=', nowIso(nowMs)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async totalsOf(gatewayUserId) {
      return totalsOfRow(await db.selectFrom('response_totals').select(['response_count', 'bytes']).where('gateway_user_id', '=', gatewayUserId).executeTakeFirst());
    },
    async totals() {
      const row = await db.selectFrom('response_totals')
        .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('response_count'), sql<number>`0`).as('response_count'), eb.fn.coalesce(eb.fn.sum<number>('bytes'), sql<number>`0`).as('bytes')])
        .executeTakeFirst();
      return totalsOfRow(row);
    },
  };
  return table;
}
