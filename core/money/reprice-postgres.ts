/**
 * Re-pricing on PostgreSQL (`reprice.ts`): one transaction that locks what it will rewrite before
 * reading it (`SELECT … FOR UPDATE`), in id order so two re-pricings cannot deadlock: the matching
 * log rows (another re-pricing of them waits), and the affected users (a replica's spend write waits
 * for the commit, then adds its delta to the corrected spend: none is lost). The rollups get deltas
 * (`cost_nanos + …`), which commute with the log writers' own increments, so they need no lock.
 * Each kind of write is one statement over `unnest` arrays, however many rows changed.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import type { PriceBook } from '../services.ts';
import {
  affectedUserIds, planRows, repriceResult, spendChanges, RepriceTooLargeError, REPRICE_ROW_COLUMNS,
  type RepriceOptions, type RepriceResult, type RepriceRow, type RepriceUser,
} from './reprice-plan.ts';

/** Re-prices in one transaction; `toIso` is the resolved end of the range. */
export async function repricePostgres(db: Kysely<Database>, book: PriceBook, options: RepriceOptions, toIso: string): Promise<RepriceResult> {
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom('llm_requests').select(REPRICE_ROW_COLUMNS)
      .where('created_at', '>=', options.fromIso).where('created_at', '<', toIso).where('model_served', '=', options.model)
      .where((eb) => eb.or([eb('prompt_tokens', 'is not', null), eb('completion_tokens', 'is not', null)]));
    if (options.provider !== undefined) query = query.where('provider', '=', options.provider);
    const rows = await query.orderBy('id').forUpdate().execute() as RepriceRow[];
    if (options.maxRows !== undefined && rows.length > options.maxRows) throw new RepriceTooLargeError(rows.length, options.maxRows);
    const plan = planRows(rows, book);
    const userIds = affectedUserIds(rows, plan.updates);
    const users = new Map<number, RepriceUser>();
    if (userIds.length > 0) {
      const found = await trx.selectFrom('gateway_users').select(['id', 'name', 'budget_period', 'budget_spent_nanos', 'budget_period_start'])
        .where('id', 'in', userIds).orderBy('id').forUpdate().execute();
      for (const user of found) users.set(user.id, user);
    }
    const spend = spendChanges(rows, plan.updates, users, options);
    if (!options.dryRun && plan.updates.length > 0) {
      const u = plan.updates;
      await sql`UPDATE llm_requests AS r SET cost_nanos = v.cost_nanos, unpriced = v.unpriced, billed_price = v.billed_price
        FROM unnest(${u.map((x) => x.id)}::bigint[], ${u.map((x) => x.costNanos)}::bigint[], ${u.map((x) => x.unpriced)}::smallint[],
          ${u.map((x) => x.billedPrice)}::text[]) AS v(id, cost_nanos, unpriced, billed_price)
        WHERE r.id = v.id`.execute(trx);
      const d = plan.rollupDeltas;
      const column = (i: number) => d.map((x) => x.key[i]);
      await sql`UPDATE usage_rollups AS t SET cost_nanos = t.cost_nanos + v.cost_nanos, unpriced_requests = t.unpriced_requests + v.unpriced
        FROM unnest(${column(0)}::text[], ${column(1)}::bigint[], ${column(2)}::text[], ${column(3)}::text[], ${column(4)}::text[],
          ${d.map((x) => x.costNanos)}::bigint[], ${d.map((x) => x.unpriced)}::bigint[])
          AS v(bucket_start, gateway_user_id, provider, model_requested, model_served, cost_nanos, unpriced)
        WHERE t.bucket_start = v.bucket_start AND t.gateway_user_id = v.gateway_user_id AND t.provider = v.provider
          AND t.model_requested = v.model_requested AND t.model_served = v.model_served`.execute(trx);
      for (const change of spend) {
        await trx.updateTable('gateway_users').set({ budget_spent_nanos: change.spent_after_nanos, budget_period_start: change.period_start })
          .where('id', '=', change.user_id).execute();
      }
    }
    return repriceResult(options, toIso, rows.length, plan, spend);
  });
}
