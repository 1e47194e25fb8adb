/**
 * Calendar periods: which window of time a gateway user's spend belongs to (the budget plugin's
 * ledger, the account endpoint, the admin statistics).
 *
 * Periods are calendar-aligned in the gateway's IANA timezone: `daily` starts at local 00:00,
 * `weekly` on Monday 00:00 local (ISO 8601 weeks), `monthly` on the 1st at 00:00 local, and
 * `never` is one window for all time. Windows are computed lazily from a clock, so a period rolls
 * over exactly at its boundary without any timer. Pure apart from two caches; no I/O.
 */
import type { BudgetPeriod } from './db-types.ts';

/**
 * A half-open span of time `[startMs, resetsAtMs)` in ms since the Unix epoch.
 * `resetsAtMs` is `null` for a window that never ends (period `never`).
 * Windows returned by {@link budgetWindow} are frozen and shared between callers.
 */
export interface BudgetWindow {
  startMs: number;
  resetsAtMs: number | null;
}

const DAY_MS = 86_400_000;
const NEVER_WINDOW: BudgetWindow = Object.freeze({ startMs: 0, resetsAtMs: null });

/** Local calendar date and wall-clock time; `wallMs` is that wall time read as if it were UTC. */
interface LocalTime {
  year: number;
  month: number; // 1-12
  day: number;
  wallMs: number;
}

// Building a DateTimeFormat costs far more than formatting with one, and the zone is one
// configured value, so each zone's formatter is built once.
const formatters = new Map<string, Intl.DateTimeFormat>();
// Consecutive requests almost always fall in the same window: reuse it while now is inside.
const lastWindows = new Map<string, BudgetWindow>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter) return formatter;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new RangeError(
      `unknown timezone ${JSON.stringify(timeZone)}: expected an IANA name such as "UTC" or "Europe/Berlin"`,
    );
  }
  formatters.set(timeZone, formatter);
  return formatter;
}

/**
 * Whether `tz` names a timezone this runtime knows (IANA names such as `Europe/Berlin`, `UTC`,
 * `Etc/GMT+5`; case-insensitive as Intl accepts it). Never throws.
 */
export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
}

function localTime(formatter: Intl.DateTimeFormat, ms: number): LocalTime {
  const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatter.formatToParts(ms)) {
    if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
  }
  // Some ICU builds print midnight as 24 even with h23.
  const hour = fields.hour === 24 ? 0 : fields.hour;
  const wallSec = Date.UTC(fields.year, fields.month - 1, fields.day, hour, fields.minute, fields.second);
  return { year: fields.year, month: fields.month, day: fields.day, wallMs: wallSec + (ms - Math.floor(ms / 1000) * 1000) };
}

/** Local wall-clock time minus UTC at instant `ms`, in ms. */
function offsetMs(formatter: Intl.DateTimeFormat, ms: number): number {
  return localTime(formatter, ms).wallMs - ms;
}

/**
 * The first instant whose local wall-clock time is at or after `wallMs` (a local time read as UTC).
 * That is the instant of that local time, the earlier one if it occurs twice, or the end of the
 * DST gap if it does not occur at all. Follows the approach of Temporal's disambiguation: the
 * offsets a day either side bracket every candidate.
 */
function firstInstantAtOrAfter(formatter: Intl.DateTimeFormat, wallMs: number): number {
  const offsetBefore = offsetMs(formatter, wallMs - DAY_MS);
  const offsetAfter = offsetMs(formatter, wallMs + DAY_MS);
  const early = wallMs - offsetBefore;
  const late = wallMs - offsetAfter;
  // Without a transition nearby both candidates are the same instant: check it once.
  const first = Math.min(early, late);
  const second = Math.max(early, late);
  if (localTime(formatter, first).wallMs === wallMs) return first;
  if (second !== first && localTime(formatter, second).wallMs === wallMs) return second;
  // A gap: the wall clock jumps over wallMs. Find the jump; it lies between the two candidates.
  let lo = first;
  let hi = second;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (localTime(formatter, mid).wallMs >= wallMs) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Local start of the period containing the local date, and of the next one (both wall ms). */
function periodWallBounds(period: BudgetPeriod, local: LocalTime): [number, number] {
  const { year, month, day } = local;
  switch (period) {
    case 'daily':
      return [Date.UTC(year, month - 1, day), Date.UTC(year, month - 1, day + 1)];
    case 'weekly': {
      const sinceMonday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
      return [Date.UTC(year, month - 1, day - sinceMonday), Date.UTC(year, month - 1, day - sinceMonday + 7)];
    }
    case 'monthly':
      return [Date.UTC(year, month - 1, 1), Date.UTC(year, month, 1)];
    default:
      throw new RangeError(
        `unknown budget period ${JSON.stringify(period)}: expected daily, weekly, monthly or never`,
      );
  }
}

function computeWindow(period: BudgetPeriod, nowMs: number, formatter: Intl.DateTimeFormat): BudgetWindow {
  const [startWall, nextWall] = periodWallBounds(period, localTime(formatter, nowMs));
  let startMs = firstInstantAtOrAfter(formatter, startWall);
  let resetsAtMs = firstInstantAtOrAfter(formatter, nextWall);
  // Only when a DST change moves the clock back across midnight can the local date lag behind
  // a boundary already crossed; the period rolled over when the boundary was first reached.
  while (nowMs >= resetsAtMs) {
    const [, followingWall] = periodWallBounds(period, localTime(formatter, resetsAtMs));
    startMs = resetsAtMs;
    resetsAtMs = firstInstantAtOrAfter(formatter, followingWall);
  }
  return Object.freeze({ startMs, resetsAtMs });
}

/**
 * The budget window of `period` that contains `nowMs`: `startMs <= nowMs < resetsAtMs`.
 *
 * - `daily` / `weekly` / `monthly`: boundaries are the UTC instants of local midnight (weekly on
 *   Monday, monthly on the 1st) in `timeZone`, so a day is 23 or 25 hours long across a DST change
 *   and months have their real lengths. If local midnight does not exist (a DST jump at 00:00),
 *   the boundary is the first instant after the jump; if it occurs twice, the first occurrence.
 * - `never`: `{ startMs: 0, resetsAtMs: null }`.
 *
 * @param period the user's reset period.
 * @param nowMs the current instant, ms since the Unix epoch (from a `Clock`, `clock.ts`).
 * @param timeZone IANA timezone of the gateway, default `'UTC'`.
 * @returns a frozen window, possibly the same object as a previous call returned.
 * @throws RangeError for an unknown period, an unknown timezone or a non-finite `nowMs`.
 */
export function budgetWindow(period: BudgetPeriod, nowMs: number, timeZone = 'UTC'): BudgetWindow {
  if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be a finite number of ms since the epoch, got ${nowMs}`);
  const formatter = formatterFor(timeZone);
  if (period === 'never') return NEVER_WINDOW;
  const key = `${period}\u0000${timeZone}`;
  const last = lastWindows.get(key);
  if (last && last.startMs <= nowMs && nowMs < (last.resetsAtMs as number)) return last;
  const window = computeWindow(period, nowMs, formatter);
  lastWindows.set(key, window);
  return window;
}
