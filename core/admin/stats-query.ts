/**
 * The dashboard's figures (`docs/admin-api.md`, "Dashboard") over a half-open time range
 * `[fromIso, toIso)`: totals, nearest-rank percentiles, per-day (and, for a week at most, per-hour)
 * series in a timezone, top users and models by cost.
 *
 * Why they cost the same at a million rows as at a thousand: sums come from the quarter-hour rollups
 * (`core/request-log/usage-rollups.ts`, exact for any range), never from a scan of `llm_requests`. Percentiles
 * cannot come from sums: up to `EXACT_PERCENTILE_MAX_ROWS` requests they are exact (one index range
 * and a sort); above, they are the nearest-rank values of a sample of
 * `PERCENTILE_SAMPLE_ROWS` row ids scattered between the range's first and last rows (rowid lookups: bounded
 * work; the rank error of a 10,000-row sample is a fraction of a percent).
 *
 * Why per-day is folded in JS: SQLite knows no timezones (and PostgreSQL's tz database may differ
 * from Node's ICU: folding in JS gives the same days on both engines), so usage is summed per UTC quarter hour in
 * SQL (every zone's offset is a multiple of 15 minutes, so a quarter hour never straddles a local
 * midnight) and the quarters are folded into local calendar days with Intl.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { usageSource, type RollupColumn } from '../request-log/usage-rollups.ts';
import { budgetWindow } from '../money/calendar-period.ts';
import { usd } from '../money/money.ts';

const DAY_MS = 86_400_000;

/** Instants as epoch ms and as stored (ISO-8601 UTC with ms); `to` is exclusive. */
export interface StatsRange {
  fromMs: number;
  toMs: number;
  fromIso: string;
  toIso: string;
}

export interface StatsTotals {
  requests: number;
  /** What the gateway or an upstream failed (`countsAsError` in `usage-rollup-writer.ts`), not refusals of the request. */
  errors: number;
  /** errors / requests; 0 without requests. */
  error_rate: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Integer nano-USD. */
  cost_nanos: number;
}

/** p50 / p95 in ms; null when no row has the value. */
export interface Percentiles {
  p50: number | null;
  p95: number | null;
}

export interface DayStats {
  /** Local calendar date `YYYY-MM-DD` in the stats timezone. */
  date: string;
  requests: number;
  errors: number;
  total_tokens: number;
  cost_usd: number;
  cost_nanos: number;
}

/** One local clock hour of the range (the first and last may be partial). */
export interface HourStats {
  /** The hour's first instant, ISO-8601 UTC. */
  start: string;
  requests: number;
  errors: number;
  total_tokens: number;
  cost_usd: number;
  cost_nanos: number;
}

export interface TopUser {
  /** null for the requests of deleted users (one group for all of them). */
  user_id: number | null;
  user_name: string | null;
  requests: number;
  total_tokens: number;
  cost_usd: number;
  cost_nanos: number;
}

export interface TopModel {
  provider: string | null;
  /** The served model, or the requested one when nothing was served. */
  model: string;
  requests: number;
  total_tokens: number;
  cost_usd: number;
  cost_nanos: number;
}

/** Up to this many rows in the range, percentiles are exact. */
export const EXACT_PERCENTILE_MAX_ROWS = 20_000;
/** Rows read for sampled percentiles. */
export const PERCENTILE_SAMPLE_ROWS = 10_000;

/**
 * Nearest-rank percentiles of `column` over `count` rows that have it: the value at rank
 * ⌈p/100 · count⌉ in ascending order, read with `LIMIT 1 OFFSET rank-1`; over a sample when `count`
 * is above `EXACT_PERCENTILE_MAX_ROWS` (see the file's comment). Same SQL on both engines.
 */
export async function queryPercentiles(db: Kysely<Database>, range: StatsRange, column: 'latency_ms' | 'ttft_ms', count: number): Promise<Percentiles> {
  if (count === 0) return { p50: null, p95: null };
  if (count > EXACT_PERCENTILE_MAX_ROWS) return sampledPercentiles(db, range, column);
  const at = async (p: number) => {
    const row = await db.selectFrom('llm_requests').select(`${column} as value`)
      .where('created_at', '>=', range.fromIso).where('created_at', '<', range.toIso).where(column, 'is not', null)
      .orderBy(column).limit(1).offset(Math.max(1, Math.ceil((p / 100) * count)) - 1)
      .executeTakeFirst();
    return row?.value ?? null;
  };
  return { p50: await at(50), p95: await at(95) };
}

/**
 * Knuth's multiplicative hash constant (a prime): `i · M mod (span + 1)` visits distinct, scattered
 * offsets, so the sample is spread over the range without the aliasing of a fixed stride against
 * periodic traffic, and is the same on every call (the dashboard does not jitter).
 */
const SAMPLE_MULTIPLIER = 2_654_435_761;

/**
 * Nearest-rank percentiles of `column` over a sample of `PERCENTILE_SAMPLE_ROWS` ids scattered between
 * the range's first and last rows (ids grow with time: rows are inserted as requests end), those in the range.
 * The bounds are cast to bigint: PostgreSQL would otherwise type `? + 1` as a 32-bit integer.
 */
async function sampledPercentiles(db: Kysely<Database>, range: StatsRange, column: 'latency_ms' | 'ttft_ms'): Promise<Percentiles> {
  const edge = async (order: 'asc' | 'desc') => (await db.selectFrom('llm_requests').select('id')
    .where('created_at', '>=', range.fromIso).where('created_at', '<', range.toIso)
    .orderBy('created_at', order).orderBy('id', order).limit(1).executeTakeFirst())?.id;
  const first = await edge('asc');
  const last = await edge('desc');
  if (first === undefined || last === undefined) return { p50: null, p95: null };
  const low = Math.min(first, last);
  const span = Math.max(first, last) - low;
  const steps = Math.min(PERCENTILE_SAMPLE_ROWS, span + 1) - 1;
  const { rows } = await sql<{ value: number }>`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${steps})
      SELECT r.${sql.ref(column)} AS value FROM s
      JOIN llm_requests r ON r.id = CAST(${low} AS bigint) + (s.i * ${sql.lit(SAMPLE_MULTIPLIER)}) % (CAST(${span} AS bigint) + 1)
      WHERE r.created_at >= ${range.fromIso} AND r.created_at < ${range.toIso} AND r.${sql.ref(column)} IS NOT NULL
      ORDER BY r.${sql.ref(column)}`.execute(db);
  if (rows.length === 0) return { p50: null, p95: null };
  const at = (p: number) => rows[Math.max(1, Math.ceil((p / 100) * rows.length)) - 1]!.value;
  return { p50: at(50), p95: at(95) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The local calendar date (`YYYY-MM-DD`) of instant `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(ms)) parts[part.type] = part.value;
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** `date` (`YYYY-MM-DD`) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The first instant (ms) of local calendar date `date` in `timeZone` (DST-aware, via the budget periods). */
export function startOfLocalDay(date: string, timeZone: string): number {
  // UTC noon of that date, shifted by the zone's offset then, is within a few hours of local noon,
  // always inside the local date; the daily budget window around it starts at its midnight.
  const noonUtc = Date.parse(`${date}T12:00:00Z`);
  const offsetMs = Date.parse(`${localDateTime(noonUtc, timeZone)}Z`) - noonUtc;
  return budgetWindow('daily', noonUtc - offsetMs, timeZone).startMs;
}

function localDateTime(ms: number, timeZone: string): string {
  const formatter = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
  });
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(ms)) parts[part.type] = part.value;
  const hour = parts.hour === '24' ? '00' : parts.hour;
  return `${parts.year}-${parts.month}-${parts.day}T${hour}:${parts.minute}:00`;
}

/**
 * The most days `queryPerDay` lists, whatever range it is given: the walk compares date strings, and
 * past year 9999 they stop being dates (`addDays` gives `+010000-01`, which sorts before `9999-12-31`
 * and maps to itself), so it is bounded by steps.
 */
export const MAX_PER_DAY_BUCKETS = 1_000;

/** The last calendar date an ISO-8601 instant can name. */
const LAST_DATE = '9999-12-31';

/** Everything the dashboard sums, from one read of the range's rollup rows. */
export interface UsageBreakdown {
  /** `ttftCount` is how many rows have a time to first token. */
  totals: StatsTotals & { ttftCount: number };
  /** One entry per local calendar day of the range (zeros included, at most `MAX_PER_DAY_BUCKETS`), oldest first. */
  perDay: DayStats[];
  /**
   * Users by cost, most first (ties: more requests, then lower id), at most `limit`. Usage of users
   * deleted since (no `gateway_users` row) is one group with a null id, as in the log.
   */
  topUsers: TopUser[];
  /** Provider + model pairs by cost, most first (ties: more requests, then model), at most `limit`. */
  topModels: TopModel[];
  /** With `perHour`: one entry per local clock hour of the range, zeros included, oldest first. */
  perHour?: HourStats[];
}

/** The local days of the range, zero-filled, and the first instant (ms) of the day after each. */
function emptyDays(range: StatsRange, timeZone: string): { days: DayStats[]; nextStarts: number[] } {
  const days: DayStats[] = [];
  const lastDate = localDate(range.toMs - 1, timeZone);
  let date = localDate(range.fromMs, timeZone);
  // Past 9999-12-31 `addDays` yields "+010000-01", which compares below any date: stop there too.
  for (let step = 0; date <= lastDate && date <= LAST_DATE && /^\d{4}-/.test(date) && step < MAX_PER_DAY_BUCKETS; step++, date = addDays(date, 1)) {
    days.push({ date, requests: 0, errors: 0, total_tokens: 0, cost_usd: 0, cost_nanos: 0 });
  }
  // The day after 9999-12-31 has no instant: the last day then runs to the end of the range.
  const nextStarts = days.map((day) => (day.date >= LAST_DATE ? Infinity : startOfLocalDay(addDays(day.date, 1), timeZone)));
  return { days, nextStarts };
}

const HOUR_MS = 3_600_000;
/** The most hours `queryUsage` lists: a week and the partial hour it starts in. */
export const MAX_PER_HOUR_BUCKETS = 7 * 24 + 1;

/**
 * The start (ms) of the local clock hour in `timeZone` holding instant `ms`. Every zone's offset is a
 * multiple of 15 minutes, so a local hour starts on a UTC quarter hour and never splits a rollup.
 */
export function startOfLocalHour(ms: number, timeZone: string): number {
  const minuteMs = ms - (((ms % 60_000) + 60_000) % 60_000);
  return minuteMs - Number(localDateTime(ms, timeZone).slice(14, 16)) * 60_000;
}

/** The local hours of the range, zero-filled (at most `MAX_PER_HOUR_BUCKETS`), and the first one's start (ms). */
function emptyHours(range: StatsRange, timeZone: string): { hours: HourStats[]; firstMs: number } {
  const firstMs = startOfLocalHour(range.fromMs, timeZone);
  const count = Math.min(MAX_PER_HOUR_BUCKETS, Math.ceil((range.toMs - firstMs) / HOUR_MS));
  const hours = Array.from({ length: count }, (_, i) => ({
    start: new Date(firstMs + i * HOUR_MS).toISOString(), requests: 0, errors: 0, total_tokens: 0, cost_usd: 0, cost_nanos: 0,
  }));
  return { hours, firstMs };
}

/** Index of the day holding instant `ms`: the first whose next day starts after it (binary search); -1 past the last. */
function dayIndex(nextStarts: number[], ms: number): number {
  let low = 0;
  let high = nextStarts.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ms >= nextStarts[mid]!) low = mid + 1;
    else high = mid;
  }
  return low < nextStarts.length ? low : -1;
}

const byCost = <T extends { requests: number; cost_nanos: number }>(a: T, b: T) => b.cost_nanos - a.cost_nanos || b.requests - a.requests;

/**
 * Totals, per-day series, top users and top models of `range`, from its rollup-shaped rows
 * (`usage-rollups.ts`), in two aggregates: per quarter hour (days and totals) and per user × model
 * (both rankings). Each names only the columns it needs (SQLite reads every column a compound subquery
 * names) and groups by raw columns (a GROUP BY on `coalesce(nullif(...))` cost twice as much); JS
 * folds the groups. At a million log rows this is half the CPU of the four aggregates it replaced;
 * reading the rollup rows themselves into JS was slower than either (120 ms for 70,000 rows).
 */
export async function queryUsage(
  db: Kysely<Database>, range: StatsRange, timeZone: string, limit: number, options: { perHour?: boolean } = {},
): Promise<UsageBreakdown> {
  const bounds = { fromIso: range.fromIso, toIso: range.toIso };
  // Positional columns (c0, c1, ...) so the rows destructure as the tuples SQLite's raw mode gave.
  const aggregate = async <Row extends unknown[]>(columns: RollupColumn[], select: string[], groupBy: string) => {
    const usage = usageSource(bounds, columns);
    const list = sql.raw(select.map((expression, i) => `${expression} AS c${i}`).join(', '));
    const { rows } = await sql<Record<string, unknown>>`SELECT ${list} FROM (${usage}) AS u GROUP BY ${sql.raw(groupBy)}`.execute(db);
    return rows.map((row) => select.map((_, i) => row[`c${i}`]) as Row);
  };

  // Per quarter hour: the days, and the totals as their sum.
  const { days, nextStarts } = emptyDays(range, timeZone);
  const { hours, firstMs } = options.perHour ? emptyHours(range, timeZone) : { hours: [], firstMs: 0 };
  let [requests, errors, prompt, completion, cost, ttftCount] = [0, 0, 0, 0, 0, 0];
  for (const [quarter, quarterRequests, quarterErrors, quarterPrompt, quarterCompletion, quarterCost, quarterTtft] of await aggregate<
    [string, number, number, number, number, number, number]
  >(
    ['bucket_start', 'requests', 'errors', 'prompt_tokens', 'completion_tokens', 'cost_nanos', 'ttft_count'],
    ['bucket_start', 'sum(requests)', 'sum(errors)', 'sum(prompt_tokens)', 'sum(completion_tokens)', 'sum(cost_nanos)', 'sum(ttft_count)'],
    'bucket_start',
  )) {
    requests += quarterRequests;
    errors += quarterErrors;
    prompt += quarterPrompt;
    completion += quarterCompletion;
    cost += quarterCost;
    ttftCount += quarterTtft;
    const quarterMs = Date.parse(quarter);
    const hour = options.perHour ? hours[Math.floor((quarterMs - firstMs) / HOUR_MS)] : undefined;
    for (const bucket of [days[dayIndex(nextStarts, quarterMs)], hour]) {
      if (!bucket) continue;
      bucket.requests += quarterRequests;
      bucket.errors += quarterErrors;
      bucket.total_tokens += quarterPrompt + quarterCompletion;
      bucket.cost_nanos += quarterCost;
    }
  }

  // Per user and model at once (users × models groups, a few hundred), folded into both rankings.
  const names = new Map((await db.selectFrom('gateway_users').select(['id', 'name']).execute()).map((u) => [u.id, u.name]));
  const users = new Map<number | null, Omit<TopUser, 'cost_usd'>>();
  const models = new Map<string, Omit<TopModel, 'cost_usd'>>();
  for (const [userId, provider, served, requested, groupRequests, tokens, groupCost] of await aggregate<
    [number, string, string, string, number, number, number]
  >(
    ['gateway_user_id', 'provider', 'model_served', 'model_requested', 'requests', 'prompt_tokens', 'completion_tokens', 'cost_nanos'],
    ['gateway_user_id', 'provider', 'model_served', 'model_requested', 'sum(requests)', 'sum(prompt_tokens) + sum(completion_tokens)', 'sum(cost_nanos)'],
    'gateway_user_id, provider, model_served, model_requested',
  )) {
    // Ids without a user (deleted: the rollups' 0, or a log row's id of a user gone since) are one group.
    const name = names.get(userId);
    const id = name === undefined ? null : userId;
    const user = users.get(id) ?? { user_id: id, user_name: name ?? null, requests: 0, total_tokens: 0, cost_nanos: 0 };
    users.set(id, { ...user, requests: user.requests + groupRequests, total_tokens: user.total_tokens + tokens, cost_nanos: user.cost_nanos + groupCost });
    const model = served || requested;
    if (!model) continue;
    const key = `${provider}\n${model}`;
    const entry = models.get(key) ?? { provider: provider || null, model, requests: 0, total_tokens: 0, cost_nanos: 0 };
    models.set(key, { ...entry, requests: entry.requests + groupRequests, total_tokens: entry.total_tokens + tokens, cost_nanos: entry.cost_nanos + groupCost });
  }

  return {
    totals: {
      requests,
      errors,
      error_rate: requests === 0 ? 0 : errors / requests,
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      cost_usd: usd(cost),
      cost_nanos: cost,
      ttftCount,
    },
    perDay: days.map((entry) => ({ ...entry, cost_usd: usd(entry.cost_nanos) })),
    ...(options.perHour ? { perHour: hours.map((entry) => ({ ...entry, cost_usd: usd(entry.cost_nanos) })) } : {}),
    topUsers: [...users.values()]
      .sort((a, b) => byCost(a, b) || (a.user_id ?? -Infinity) - (b.user_id ?? -Infinity))
      .slice(0, limit).map((row) => ({ ...row, cost_usd: usd(row.cost_nanos) })),
    topModels: [...models.values()]
      .sort((a, b) => byCost(a, b) || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))
      .slice(0, limit).map((row) => ({ ...row, cost_usd: usd(row.cost_nanos) })),
  };
}
