/**
 * Calendar periods: which window of time a gateway user's spend belongs to (the budget plugin's
 * ledger, the account endpoint, the admin statistics).
 *
 * Periods are calendar-aligned in the gateway's IANA timezone: `daily` starts at local 00:00,
 * `weekly` on Monday 00:00 local (ISO 8601 weeks), `monthly` on the 1st at 00:00 local, and
 * `never` is one window for all time. Windows are computed lazily from a clock, so a period rolls
 * over exactly at its boundary without any timer. Pure apart from two caches; no I/O.
 */
import type { BudgetPeriod } from '../store/db-types.ts';

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

/** Reads the local calendar date and wall-clock time of an instant in one timezone. */
interface Zone {
  localTime(ms: number): LocalTime;
}

// UTC needs no Intl: the first DateTimeFormat a process builds maps ~8 MB of ICU data, and UTC is
// the default every gateway without a configured timezone runs on.
const UTC_ZONE: Zone = {
  localTime(ms) {
    const date = new Date(ms);
    return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), wallMs: ms };
  },
};
/** The names Intl resolves to UTC (lowercase; Intl takes them in any case). */
const UTC_NAMES = new Set([
  'utc', 'etc/utc', 'etc/uct', 'uct', 'etc/universal', 'universal', 'etc/zulu', 'zulu', 'gmt', 'etc/gmt',
  'etc/gmt0', 'etc/gmt+0', 'etc/gmt-0', 'gmt0', 'gmt+0', 'gmt-0', 'etc/greenwich', 'greenwich',
]);

/** A zone read through an Intl formatter (any IANA name the runtime knows). */
function intlZone(formatter: Intl.DateTimeFormat): Zone {
  return {
    localTime(ms) {
      const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
      for (const part of formatter.formatToParts(ms)) {
        if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
      }
      // Some ICU builds print midnight as 24 even with h23.
      const hour = fields.hour === 24 ? 0 : fields.hour;
      const wallSec = Date.UTC(fields.year, fields.month - 1, fields.day, hour, fields.minute, fields.second);
      return { year: fields.year, month: fields.month, day: fields.day, wallMs: wallSec + (ms - Math.floor(ms / 1000) * 1000) };
    },
  };
}

// Building a DateTimeFormat costs far more than formatting with one, and the zone is one
// configured value, so each zone is built once.
const zones = new Map<string, Zone>();
// Consecutive requests almost always fall in the same window: reuse it while now is inside.
const lastWindows = new Map<string, BudgetWindow>();

function zoneFor(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (zone) return zone;
  if (typeof timeZone === 'string' && UTC_NAMES.has(timeZone.toLowerCase())) zone = UTC_ZONE;
  else {
    try {
      zone = intlZone(new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }));
    } catch {
      throw new RangeError(
        `unknown timezone ${JSON.stringify(timeZone)}: expected an IANA name such as "UTC" or "Europe/Berlin"`,
      );
    }
  }
  zones.set(timeZone, zone);
  return zone;
}

/**
 * Whether `tz` names a timezone this runtime knows (IANA names such as `Europe/Berlin`, `UTC`,
 * `Etc/GMT+5`; case-insensitive as Intl accepts it). Never throws.
 */
export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    zoneFor(tz);
    return true;
  } catch {
    return false;
  }
}

/** Local wall-clock time minus UTC at instant `ms`, in ms. */
function offsetMs(zone: Zone, ms: number): number {
  return zone.localTime(ms).wallMs - ms;
}

/**
 * The first instant whose local wall-clock time is at or after `wallMs` (a local time read as UTC).
 * That is the instant of that local time, the earlier one if it occurs twice, or the end of the
 * DST gap if it does not occur at all. Follows the approach of Temporal's disambiguation: the
 * offsets a day either side bracket every candidate.
 */
function firstInstantAtOrAfter(zone: Zone, wallMs: number): number {
  const offsetBefore = offsetMs(zone, wallMs - DAY_MS);
  const offsetAfter = offsetMs(zone, wallMs + DAY_MS);
  const early = wallMs - offsetBefore;
  const late = wallMs - offsetAfter;
  // Without a transition nearby both candidates are the same instant: check it once.
  const first = Math.min(early, late);
  const second = Math.max(early, late);
  if (zone.localTime(first).wallMs === wallMs) return first;
  if (second !== first && zone.localTime(second).wallMs === wallMs) return second;
  // A gap: the wall clock jumps over wallMs. Find the jump; it lies between the two candidates.
  let lo = first;
  let hi = second;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (zone.localTime(mid).wallMs >= wallMs) hi = mid;
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

function computeWindow(period: BudgetPeriod, nowMs: number, zone: Zone): BudgetWindow {
  const [startWall, nextWall] = periodWallBounds(period, zone.localTime(nowMs));
  let startMs = firstInstantAtOrAfter(zone, startWall);
  let resetsAtMs = firstInstantAtOrAfter(zone, nextWall);
  // Only when a DST change moves the clock back across midnight can the local date lag behind
  // a boundary already crossed; the period rolled over when the boundary was first reached.
  while (nowMs >= resetsAtMs) {
    const [, followingWall] = periodWallBounds(period, zone.localTime(resetsAtMs));
    startMs = resetsAtMs;
    resetsAtMs = firstInstantAtOrAfter(zone, followingWall);
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
  const zone = zoneFor(timeZone);
  if (period === 'never') return NEVER_WINDOW;
  const key = `${period}\u0000${timeZone}`;
  const last = lastWindows.get(key);
  if (last && last.startMs <= nowMs && nowMs < (last.resetsAtMs as number)) return last;
  const window = computeWindow(period, nowMs, zone);
  lastWindows.set(key, window);
  return window;
}
