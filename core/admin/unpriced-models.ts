/**
 * Models served without a price: the "unpriced" flag of the pricing page and the dashboard. A model
 * counts when requests for it were logged with `unpriced = 1` in the range AND it still has no price
 * now (an admin may have priced it since), so the list empties as prices are set.
 */
import type { AdminContext } from './context.ts';
import { sql } from 'kysely';
import { usageSource } from '../request-log/usage-rollups.ts';

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
export async function listUnpricedModels(
  ctx: AdminContext,
  range: { fromIso?: string; toIso?: string },
  limit = 50,
): Promise<UnpricedModel[]> {
  // Logged names are often dated: check them with the dataset's matcher loaded.
  await ctx.services.get('pricing')?.ready();
  await ctx.services.get('requestLog')?.flush();
  // From the quarter-hour rollups (exact for any range, `usage-rollups.ts`), not a scan of the log.
  // Grouped by the raw provider ('' = none; PostgreSQL would group by the output alias otherwise).
  const { rows } = await sql<{ provider: string | null; model_served: string; requests: number; last_seen: string }>`
    SELECT nullif(u.provider, '') AS provider, u.model_served, sum(u.unpriced_requests) AS requests, max(u.last_unpriced_at) AS last_seen
      FROM (${usageSource(range)}) AS u WHERE u.unpriced_requests > 0 AND u.model_served != ''
      GROUP BY u.provider, u.model_served ORDER BY requests DESC, last_seen DESC`.execute(ctx.store.db);

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
