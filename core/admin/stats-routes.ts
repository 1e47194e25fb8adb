/**
 * `GET /admin/api/stats?from&to&per` (`docs/admin-api.md`, "Dashboard"): the figures of the dashboard
 * for a period, in the budget plugin's timezone (UTC without it). Default period: the last 30 local
 * calendar days, today included.
 */
import { nowIso } from '../store/store.ts';
import { invalidRequest } from '../errors.ts';
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { parseQueryTime, queryString } from './fields.ts';
import { listUnpricedModels } from './unpriced-models.ts';
import { usd } from '../money/money.ts';
import {
  addDays, localDate, queryPercentiles, queryUsage, startOfLocalDay,
  type StatsRange,
} from './stats-query.ts';

const DEFAULT_DAYS = 30;
/** A longer period would only make a per-day series nobody can read (and a bigger query). */
export const MAX_STATS_DAYS = 400;
const TOP_LIMIT = 5;
const UNPRICED_LIMIT = 10;
/** Users at or above this share of their period's budget are listed in `budget_alerts`. */
const ALERT_RATIO = 0.8;

export interface BudgetAlert {
  user_id: number;
  user_name: string;
  limit_usd: number;
  spent_usd: number;
  /** spent / limit (1 for a zero limit). */
  ratio: number;
}

/**
 * The period of a stats query. A `YYYY-MM-DD` bound is a local calendar day in `timeZone`: `from`
 * starts at its midnight, `to` includes it (the period ends at the next midnight). ISO timestamps
 * are taken as they are, `to` exclusive. Bounds lie between 2000-01-01 and a year from now
 * (`parseQueryTime`), the period is at most `MAX_STATS_DAYS` long. 400 (`param`) for an unreadable,
 * out-of-range, empty or too long period.
 */
export function parseStatsRange(query: URLSearchParams, nowMs: number, timeZone: string): StatsRange {
  const to = readBound(query, 'to', timeZone, 1, nowMs) ?? startOfLocalDay(addDays(localDate(nowMs, timeZone), 1), timeZone);
  const from = readBound(query, 'from', timeZone, 0, nowMs)
    ?? startOfLocalDay(addDays(localDate(to - 1, timeZone), 1 - DEFAULT_DAYS), timeZone);
  if (from >= to) throw invalidRequest('"to" must be later than "from".', 'to');
  if (to - from > MAX_STATS_DAYS * 86_400_000) throw invalidRequest(`The period must be at most ${MAX_STATS_DAYS} days.`, 'from');
  return { fromMs: from, toMs: to, fromIso: nowIso(from), toIso: nowIso(to) };
}

/** A bound as epoch ms: a date is the local midnight `dayOffset` days after it; undefined when absent. */
function readBound(query: URLSearchParams, name: 'from' | 'to', timeZone: string, dayOffset: 0 | 1, nowMs: number): number | undefined {
  const value = queryString(query, name);
  if (value === undefined) return undefined;
  const ms = parseQueryTime(value, name, nowMs);
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? startOfLocalDay(addDays(value, dayOffset), timeZone) : ms;
}

/** Hours in a period that `per=hour` may ask for: a week (168 bars still read as a chart). */
const MAX_PER_HOUR_DAYS = 7;

/**
 * `per=hour` asks for `per_hour` too (the dashboard's "Last 24 hours"); absent, the answer is as before.
 * 400 (`param` "per") for another value or a period longer than a week.
 */
function parsePer(query: URLSearchParams, range: StatsRange): boolean {
  const per = queryString(query, 'per');
  if (per === undefined || per === 'day') return false;
  if (per !== 'hour') throw invalidRequest('"per" must be "hour" or "day".', 'per');
  if (range.toMs - range.fromMs > MAX_PER_HOUR_DAYS * 86_400_000) throw invalidRequest(`An hourly series covers at most ${MAX_PER_HOUR_DAYS} days.`, 'per');
  return true;
}

/** Users with a budget limit whose current period's spend is at least 80 % of it, highest ratio first. */
async function budgetAlerts(ctx: AdminContext): Promise<BudgetAlert[]> {
  const budget = ctx.services.get('budget');
  if (!budget) return [];
  const users = await ctx.store.db.selectFrom('gateway_users').select(['id', 'name']).where('budget_limit_micros', 'is not', null).execute();
  const alerts: BudgetAlert[] = [];
  // Read together, as the users list reads them: shared by replicas, each is a Redis call.
  const statuses = await Promise.all(users.map((user) => budget.status(user.id)));
  for (const [i, user] of users.entries()) {
    const status = statuses[i];
    if (!status || status.limitNanos === null) continue;
    const ratio = status.limitNanos === 0 ? 1 : status.spentNanos / status.limitNanos;
    if (ratio < ALERT_RATIO) continue;
    alerts.push({ user_id: user.id, user_name: user.name, limit_usd: usd(status.limitNanos), spent_usd: usd(status.spentNanos), ratio });
  }
  return alerts.sort((a, b) => b.ratio - a.ratio || a.user_name.localeCompare(b.user_name));
}

export function createStatsRoutes(ctx: AdminContext): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: '/admin/api/stats',
      handler: async function getStats({ query }) {
        const timeZone = ctx.services.get('budget')?.timeZone ?? 'UTC';
        const range = parseStatsRange(query, ctx.clock(), timeZone);
        await ctx.services.get('requestLog')?.flush();
        const { db } = ctx.store;
        const perHour = parsePer(query, range);
        const usage = await queryUsage(db, range, timeZone, TOP_LIMIT, { perHour });
        const { ttftCount, ...totals } = usage.totals;
        return json(200, {
          from: range.fromIso,
          to: range.toIso,
          time_zone: timeZone,
          totals,
          latency_ms: await queryPercentiles(db, range, 'latency_ms', totals.requests),
          ttft_ms: await queryPercentiles(db, range, 'ttft_ms', ttftCount),
          per_day: usage.perDay,
          ...(perHour ? { per_hour: usage.perHour } : {}),
          top_users: usage.topUsers,
          top_models: usage.topModels,
          budget_alerts: await budgetAlerts(ctx),
          unpriced_models: await listUnpricedModels(ctx, { fromIso: range.fromIso, toIso: range.toIso }, UNPRICED_LIMIT),
        });
      },
    },
  ];
}
