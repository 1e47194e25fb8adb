/**
 * Models served without a price: the "unpriced" flag of the pricing page and the dashboard. A model
 * counts when requests for it were logged with `unpriced = 1` in the range AND it still has no price
 * now (an admin may have priced it since), so the list empties as prices are set.
 */
import type { AdminContext } from './context.ts';

/** One model seen in traffic without a price. */
export interface UnpricedModel {
  /** Gateway provider id that served it; null for rows logged without one. */
  provider: string | null;
  /** The model id the upstream reported (`model_served`). */
  model: string;
  /** Unpriced requests for it in the range. */
  requests: number;
  /** ISO-8601 UTC time of the latest such request. */
  last_seen: string;
}

/**
 * Unpriced models in `[fromIso, toIso)` (either bound optional), grouped by provider + served
 * model, most requests first (ties: most recent first), at most `limit`. Each is checked against the
 * price book with the same resolution as real traffic (dated names included); without the pricing
 * plugin every logged one is kept. Queued log rows are flushed first so a request that just ended
 * is counted.
 */
export function listUnpricedModels(
  ctx: AdminContext,
  range: { fromIso?: string; toIso?: string },
  limit = 50,
): UnpricedModel[] {
  ctx.services.get('requestLog')?.flush();
  let query = ctx.store.db
    .selectFrom('llm_requests')
    .select((eb) => [
      'provider',
      'model_served',
      eb.fn.countAll<number>().as('requests'),
      eb.fn.max('created_at').as('last_seen'),
    ])
    .where('unpriced', '=', 1)
    .where('model_served', 'is not', null);
  if (range.fromIso !== undefined) query = query.where('created_at', '>=', range.fromIso);
  if (range.toIso !== undefined) query = query.where('created_at', '<', range.toIso);
  // Synchronous on purpose: better-sqlite3 is synchronous anyway, and the dashboard calls this inline.
  const compiled = query.groupBy(['provider', 'model_served']).orderBy('requests', 'desc').orderBy('last_seen', 'desc').compile();
  const rows = ctx.store.sqlite.prepare(compiled.sql).all(...compiled.parameters) as Array<{
    provider: string | null; model_served: string; requests: number; last_seen: string;
  }>;

  const book = ctx.services.get('pricing');
  const result: UnpricedModel[] = [];
  for (const row of rows) {
    if (result.length >= limit) break;
    // A row without a provider cannot be looked up; it stays listed (nothing could have priced it).
    if (book && row.provider !== null && book.priceFor(row.provider, row.model_served)) continue;
    result.push({ provider: row.provider, model: row.model_served, requests: Number(row.requests), last_seen: row.last_seen });
  }
  return result;
}
