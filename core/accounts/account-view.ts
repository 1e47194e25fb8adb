/**
 * A gateway user's budget and usage as their own views show them: `GET /api/account` (plugin
 * account) and the portal's `GET /portal/api/me` (docs/portal.md). Amounts are USD (nano-USD / 1e9,
 * for display); times ISO-8601 UTC.
 *
 * Usage comes from the quarter-hour usage rollups (`core/request-log/usage-rollups.ts`: a budget
 * period starts at a local midnight, a quarter-hour boundary in every zone, so it is a few indexed
 * rollup rows whatever the size of the log). Callers flush the request log first, so the user's last
 * request is counted.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import type { BudgetStatus } from '../services.ts';
import { usd } from '../money/money.ts';
import { usageSource } from '../request-log/usage-rollups.ts';

/** The columns the usage sums: all in the rollups' covering index by user. */
const USAGE_COLUMNS = ['requests', 'prompt_tokens', 'completion_tokens', 'cost_nanos'] as const;

/** The budget part of an account view, or null without a budget plugin (`status` undefined). */
export function budgetView(status: BudgetStatus | undefined, timeZone: string) {
  if (!status) return null;
  return {
    limit_usd: status.limitNanos === null ? null : usd(status.limitNanos),
    spent_usd: usd(status.spentNanos),
    reserved_usd: usd(status.reservedNanos),
    remaining_usd: status.remainingNanos === null ? null : usd(status.remainingNanos),
    period: status.period,
    period_start: status.period === 'never' ? null : nowIso(status.window.startMs),
    resets_at: status.window.resetsAtMs === null ? null : nowIso(status.window.resetsAtMs),
    time_zone: timeZone,
  };
}

/** User `userId`'s requests, tokens and cost logged since `sinceMs` (epoch ms). */
export async function usageSince(db: Kysely<Database>, userId: number, sinceMs: number) {
  const usage = usageSource({ fromIso: nowIso(sinceMs), userId }, USAGE_COLUMNS);
  const { rows } = await sql<{ requests: number; prompt_tokens: number; completion_tokens: number; cost_nanos: number }>`
    SELECT coalesce(sum(u.requests), 0) AS requests, coalesce(sum(u.prompt_tokens), 0) AS prompt_tokens,
      coalesce(sum(u.completion_tokens), 0) AS completion_tokens, coalesce(sum(u.cost_nanos), 0) AS cost_nanos
    FROM (${usage}) AS u`.execute(db);
  const row = rows[0]!;
  return {
    since: nowIso(sinceMs),
    requests: row.requests,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    cost_usd: usd(row.cost_nanos),
  };
}
