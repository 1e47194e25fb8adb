/**
 * Budget period calendar logic: exact rollover instants per period, in UTC and in zones with and
 * without DST, and properties that must hold for any instant. Time is injected as plain numbers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { budgetWindow, isValidTimeZone, type BudgetWindow } from '../../../core/money/calendar-period.ts';
import { systemClock } from '../../../core/runtime/clock.ts';
import type { BudgetPeriod } from '../../../core/store/db-types.ts';

const HOUR_MS = 3_600_000;
const at = (iso: string): number => {
  const ms = Date.parse(iso);
  assert.ok(Number.isFinite(ms), `bad fixture ${iso}`);
  return ms;
};

interface BoundaryCase {
  title: string;
  period: BudgetPeriod;
  timeZone: string;
  /** Start of the old window. */
  previous: string;
  /** The rollover instant: end of the old window, start of the new one. */
  boundary: string;
  /** End of the new window. */
  next: string;
}

const boundaryCases: BoundaryCase[] = [
  { title: 'daily rolls over at 00:00 UTC', period: 'daily', timeZone: 'UTC',
    previous: '2025-03-10T00:00:00Z', boundary: '2025-03-11T00:00:00Z', next: '2025-03-12T00:00:00Z' },
  { title: 'weekly rolls over from Sunday 23:59:59.999 to Monday 00:00 UTC', period: 'weekly', timeZone: 'UTC',
    previous: '2025-03-03T00:00:00Z', boundary: '2025-03-10T00:00:00Z', next: '2025-03-17T00:00:00Z' },
  { title: 'monthly rolls over from January 31 to February 1 UTC', period: 'monthly', timeZone: 'UTC',
    previous: '2027-01-01T00:00:00Z', boundary: '2027-02-01T00:00:00Z', next: '2027-03-01T00:00:00Z' },
  { title: 'monthly rolls over from February 28 to March 1 in a non-leap year UTC', period: 'monthly', timeZone: 'UTC',
    previous: '2027-02-01T00:00:00Z', boundary: '2027-03-01T00:00:00Z', next: '2027-04-01T00:00:00Z' },
  { title: 'monthly rolls over from February 29 to March 1 in a leap year UTC', period: 'monthly', timeZone: 'UTC',
    previous: '2028-02-01T00:00:00Z', boundary: '2028-03-01T00:00:00Z', next: '2028-04-01T00:00:00Z' },
  { title: 'monthly rolls over from December 31 to January 1 of the next year UTC', period: 'monthly', timeZone: 'UTC',
    previous: '2027-12-01T00:00:00Z', boundary: '2028-01-01T00:00:00Z', next: '2028-02-01T00:00:00Z' },
  { title: 'weekly rolls over across the new year UTC', period: 'weekly', timeZone: 'UTC',
    previous: '2027-12-27T00:00:00Z', boundary: '2028-01-03T00:00:00Z', next: '2028-01-10T00:00:00Z' },

  { title: 'daily rolls over at local midnight in Asia/Tokyo', period: 'daily', timeZone: 'Asia/Tokyo',
    previous: '2025-03-10T00:00:00+09:00', boundary: '2025-03-11T00:00:00+09:00', next: '2025-03-12T00:00:00+09:00' },
  { title: 'weekly rolls over on Monday local midnight in Asia/Tokyo, still Sunday in UTC', period: 'weekly',
    timeZone: 'Asia/Tokyo',
    previous: '2025-03-03T00:00:00+09:00', boundary: '2025-03-10T00:00:00+09:00', next: '2025-03-17T00:00:00+09:00' },
  { title: 'monthly rolls over from January 31 to February 1 in Asia/Tokyo', period: 'monthly', timeZone: 'Asia/Tokyo',
    previous: '2027-01-01T00:00:00+09:00', boundary: '2027-02-01T00:00:00+09:00', next: '2027-03-01T00:00:00+09:00' },
  { title: 'monthly rolls over from February 28 to March 1 in a non-leap year in Asia/Tokyo', period: 'monthly',
    timeZone: 'Asia/Tokyo',
    previous: '2027-02-01T00:00:00+09:00', boundary: '2027-03-01T00:00:00+09:00', next: '2027-04-01T00:00:00+09:00' },
  { title: 'monthly rolls over from February 29 to March 1 in a leap year in Asia/Tokyo', period: 'monthly',
    timeZone: 'Asia/Tokyo',
    previous: '2028-02-01T00:00:00+09:00', boundary: '2028-03-01T00:00:00+09:00', next: '2028-04-01T00:00:00+09:00' },
  { title: 'monthly rolls over from December 31 to January 1 in Asia/Tokyo', period: 'monthly', timeZone: 'Asia/Tokyo',
    previous: '2027-12-01T00:00:00+09:00', boundary: '2028-01-01T00:00:00+09:00', next: '2028-02-01T00:00:00+09:00' },

  // 2025-03-09 is the spring-forward day in New York (02:00 EST -> 03:00 EDT): 23 hours long.
  { title: 'daily rolls over into the 23-hour spring-forward day in America/New_York', period: 'daily',
    timeZone: 'America/New_York',
    previous: '2025-03-08T00:00:00-05:00', boundary: '2025-03-09T00:00:00-05:00', next: '2025-03-10T00:00:00-04:00' },
  { title: 'daily rolls over out of the 23-hour spring-forward day in America/New_York', period: 'daily',
    timeZone: 'America/New_York',
    previous: '2025-03-09T00:00:00-05:00', boundary: '2025-03-10T00:00:00-04:00', next: '2025-03-11T00:00:00-04:00' },
  { title: 'daily rolls over out of the 25-hour fall-back day in America/New_York', period: 'daily',
    timeZone: 'America/New_York',
    previous: '2025-11-02T00:00:00-04:00', boundary: '2025-11-03T00:00:00-05:00', next: '2025-11-04T00:00:00-05:00' },
  { title: 'weekly rolls over after a 167-hour week in America/New_York', period: 'weekly', timeZone: 'America/New_York',
    previous: '2025-03-03T00:00:00-05:00', boundary: '2025-03-10T00:00:00-04:00', next: '2025-03-17T00:00:00-04:00' },
  { title: 'monthly rolls over after March loses an hour in America/New_York', period: 'monthly',
    timeZone: 'America/New_York',
    previous: '2025-03-01T00:00:00-05:00', boundary: '2025-04-01T00:00:00-04:00', next: '2025-05-01T00:00:00-04:00' },
  { title: 'daily rolls over across the summer-time change in Europe/Berlin', period: 'daily', timeZone: 'Europe/Berlin',
    previous: '2025-03-30T00:00:00+01:00', boundary: '2025-03-31T00:00:00+02:00', next: '2025-04-01T00:00:00+02:00' },

  // Chile moves clocks from 00:00 to 01:00: local midnight of 2024-09-08 never happens.
  { title: 'daily rolls over at the first instant after a missing midnight in America/Santiago', period: 'daily',
    timeZone: 'America/Santiago',
    previous: '2024-09-07T00:00:00-04:00', boundary: '2024-09-08T01:00:00-03:00', next: '2024-09-09T00:00:00-03:00' },
  // Chile moves clocks from 24:00 back to 23:00: the Saturday is 25 hours long.
  { title: 'daily rolls over after a 25-hour day ending in a repeated hour in America/Santiago', period: 'daily',
    timeZone: 'America/Santiago',
    previous: '2025-04-05T00:00:00-03:00', boundary: '2025-04-06T00:00:00-04:00', next: '2025-04-07T00:00:00-04:00' },
  // Lebanon moved clocks from 00:00 to 01:00 on the last Sunday of March.
  { title: 'weekly rolls over on the Monday after a missing Sunday midnight in Asia/Beirut', period: 'weekly',
    timeZone: 'Asia/Beirut',
    previous: '2022-03-21T00:00:00+02:00', boundary: '2022-03-28T00:00:00+03:00', next: '2022-04-04T00:00:00+03:00' },
  { title: 'daily rolls over at the first instant after a missing midnight in Asia/Beirut', period: 'daily',
    timeZone: 'Asia/Beirut',
    previous: '2022-03-26T00:00:00+02:00', boundary: '2022-03-27T01:00:00+03:00', next: '2022-03-28T00:00:00+03:00' },
  // Samoa skipped 2011-12-30 entirely, jumping from UTC-10 to UTC+14.
  { title: 'daily rolls over straight into December 31 when Pacific/Apia skipped a day', period: 'daily',
    timeZone: 'Pacific/Apia',
    previous: '2011-12-29T00:00:00-10:00', boundary: '2011-12-31T00:00:00+14:00', next: '2012-01-01T00:00:00+14:00' },
];

describe('budgetWindow boundaries', () => {
  for (const c of boundaryCases) {
    test(`${c.title}: 1 ms before is the old window, the boundary itself the new one`, () => {
      const boundaryMs = at(c.boundary);
      assert.deepEqual(budgetWindow(c.period, boundaryMs - 1, c.timeZone), {
        startMs: at(c.previous),
        resetsAtMs: boundaryMs,
      });
      assert.deepEqual(budgetWindow(c.period, boundaryMs, c.timeZone), { startMs: boundaryMs, resetsAtMs: at(c.next) });
      // And the old window's own first instant, computed without a cached window to lean on.
      assert.deepEqual(budgetWindow(c.period, at(c.previous), c.timeZone), {
        startMs: at(c.previous),
        resetsAtMs: boundaryMs,
      });
    });
  }

  test('the spring-forward day in America/New_York is 23 hours and the fall-back day 25 hours', () => {
    const spring = budgetWindow('daily', at('2025-03-09T12:00:00Z'), 'America/New_York');
    assert.equal(spring.startMs, at('2025-03-09T05:00:00Z'));
    assert.equal(spring.resetsAtMs, at('2025-03-10T04:00:00Z'));
    assert.equal((spring.resetsAtMs ?? 0) - spring.startMs, 23 * HOUR_MS);
    const fall = budgetWindow('daily', at('2025-11-02T12:00:00Z'), 'America/New_York');
    assert.equal((fall.resetsAtMs ?? 0) - fall.startMs, 25 * HOUR_MS);
  });

  test('the repeated hour before a Santiago midnight still belongs to the 25-hour Saturday', () => {
    // 03:30Z reads 23:30 on Saturday for the second time.
    assert.deepEqual(budgetWindow('daily', at('2025-04-06T03:30:00Z'), 'America/Santiago'), {
      startMs: at('2025-04-05T00:00:00-03:00'),
      resetsAtMs: at('2025-04-06T00:00:00-04:00'),
    });
  });

  test('months have their real calendar lengths, never 30 days', () => {
    const lengthsInDays = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    lengthsInDays.forEach((days, month) => {
      const window = budgetWindow('monthly', Date.UTC(2028, month, 15), 'UTC');
      assert.equal(window.startMs, Date.UTC(2028, month, 1));
      assert.equal(((window.resetsAtMs ?? 0) - window.startMs) / (24 * HOUR_MS), days, `month ${month + 1}`);
    });
  });

  test('an earlier instant after a later one gets its own window, not the cached one', () => {
    const later = budgetWindow('daily', at('2026-05-20T10:00:00Z'));
    const earlier = budgetWindow('daily', at('2026-05-19T10:00:00Z'));
    assert.equal(later.startMs, at('2026-05-20T00:00:00Z'));
    assert.equal(earlier.startMs, at('2026-05-19T00:00:00Z'));
  });

  test('the timezone defaults to UTC', () => {
    assert.deepEqual(budgetWindow('daily', at('2026-05-20T23:30:00Z')), {
      startMs: at('2026-05-20T00:00:00Z'),
      resetsAtMs: at('2026-05-21T00:00:00Z'),
    });
  });
});

describe('budgetWindow never period', () => {
  test('never gives one window from the epoch with resetsAtMs null', () => {
    for (const nowMs of [0, at('2025-03-09T12:00:00Z'), at('2099-12-31T23:59:59.999Z')]) {
      assert.deepEqual(budgetWindow('never', nowMs, 'Asia/Tokyo'), { startMs: 0, resetsAtMs: null });
    }
  });
});

describe('budgetWindow errors', () => {
  test('throws a RangeError naming an unknown timezone', () => {
    for (const period of ['daily', 'never'] as const) {
      assert.throws(() => budgetWindow(period, 0, 'Mars/Olympus_Mons'), {
        name: 'RangeError',
        message: 'unknown timezone "Mars/Olympus_Mons": expected an IANA name such as "UTC" or "Europe/Berlin"',
      });
    }
  });

  test('throws a RangeError naming an unknown period', () => {
    assert.throws(() => budgetWindow('yearly' as BudgetPeriod, 0), {
      name: 'RangeError',
      message: 'unknown budget period "yearly": expected daily, weekly, monthly or never',
    });
  });

  test('throws a RangeError for an instant that is not a finite number', () => {
    assert.throws(() => budgetWindow('daily', Number.NaN), { name: 'RangeError' });
  });
});

describe('isValidTimeZone', () => {
  const cases: Array<[string, boolean]> = [
    ['UTC', true],
    ['utc', true],
    ['Europe/Berlin', true],
    ['America/New_York', true],
    ['Etc/GMT+5', true],
    ['Mars/Olympus_Mons', false],
    ['', false],
    ['UTC ', false],
  ];
  for (const [tz, valid] of cases) {
    test(`${JSON.stringify(tz)} is ${valid ? 'a valid' : 'not a'} timezone`, () => {
      assert.equal(isValidTimeZone(tz), valid);
    });
  }
});

test('UTC and its aliases (read without Intl) give the windows Intl gives for a zone always at UTC', () => {
  // Africa/Abidjan has been UTC+0 without DST since 1912 and goes through Intl.
  const random = seededRandom(17);
  for (let i = 0; i < 300; i++) {
    const nowMs = Date.UTC(1990, 0, 1) + Math.floor(random() * 60 * 365 * 24 * HOUR_MS);
    for (const period of ['daily', 'weekly', 'monthly'] as const) {
      const viaIntl = budgetWindow(period, nowMs, 'Africa/Abidjan');
      for (const tz of ['UTC', 'etc/utc', 'GMT', 'Etc/Zulu']) {
        assert.deepEqual(budgetWindow(period, nowMs, tz), viaIntl, `${period} at ${new Date(nowMs).toISOString()} in ${tz}`);
      }
    }
  }
});

test('systemClock reads the current time in ms', () => {
  const before = Date.now();
  const now = systemClock();
  assert.ok(now >= before && now <= Date.now());
});

/** Deterministic PRNG (mulberry32) so a failure names a reproducible instant. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// Zones where local midnight always exists, so a window must start at 00:00 local.
const midnightZones = ['UTC', 'Asia/Tokyo', 'America/New_York', 'Europe/Berlin', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
// Zones where midnight is sometimes skipped or a whole day is.
const oddZones = ['America/Santiago', 'Asia/Beirut', 'Pacific/Apia'];

const localFormatters = new Map<string, Intl.DateTimeFormat>();
function localParts(ms: number, timeZone: string): Record<string, string> {
  let formatter = localFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', weekday: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    localFormatters.set(timeZone, formatter);
  }
  return Object.fromEntries(formatter.formatToParts(ms).map((p) => [p.type, p.value]));
}

function assertWindowProperties(window: BudgetWindow, period: BudgetPeriod, nowMs: number, timeZone: string): void {
  const where = `${period} ${timeZone} at ${new Date(nowMs).toISOString()}`;
  const resetsAtMs = window.resetsAtMs;
  assert.ok(resetsAtMs !== null, where);
  assert.ok(window.startMs <= nowMs && nowMs < resetsAtMs, where);
  assert.equal(budgetWindow(period, resetsAtMs, timeZone).startMs, resetsAtMs, where);
  assert.equal(budgetWindow(period, window.startMs - 1, timeZone).resetsAtMs, window.startMs, where);
  if (!midnightZones.includes(timeZone)) return;
  const local = localParts(window.startMs, timeZone);
  assert.equal(`${local.hour}:${local.minute}:${local.second}`, '00:00:00', where);
  if (period === 'weekly') assert.equal(local.weekday, 'Mon', where);
  if (period === 'monthly') assert.equal(local.day, '1', where);
}

test('for random instants over several years and zones, the window holds now and abuts its neighbours', () => {
  const random = seededRandom(20250309);
  const fromMs = Date.UTC(2010, 0, 1);
  const toMs = Date.UTC(2031, 0, 1);
  for (const timeZone of [...midnightZones, ...oddZones]) {
    for (const period of ['daily', 'weekly', 'monthly'] as const) {
      for (let i = 0; i < 300; i++) {
        const nowMs = fromMs + Math.floor(random() * (toMs - fromMs));
        assertWindowProperties(budgetWindow(period, nowMs, timeZone), period, nowMs, timeZone);
      }
    }
  }
});

test('consecutive windows through a DST-heavy year tile the timeline without gaps', () => {
  for (const timeZone of [...oddZones, 'America/New_York', 'Australia/Lord_Howe']) {
    let window = budgetWindow('daily', Date.UTC(2011, 0, 1), timeZone);
    for (let day = 0; day < 800; day++) {
      const resetsAtMs = window.resetsAtMs ?? 0;
      const next = budgetWindow('daily', resetsAtMs, timeZone);
      assert.equal(next.startMs, resetsAtMs, `${timeZone} at ${new Date(resetsAtMs).toISOString()}`);
      const lengthHours = ((next.resetsAtMs ?? 0) - next.startMs) / HOUR_MS;
      // Even Samoa's skipped day leaves no odd window: December 29 runs straight into December 31.
      assert.ok(lengthHours >= 22 && lengthHours <= 26, `${timeZone} day of ${lengthHours} h`);
      window = next;
    }
  }
});
