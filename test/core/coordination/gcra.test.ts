/**
 * The GCRA limiter with explicit times: burst, steady rate, exact retry-after (also when the emission
 * interval is not a whole ms), weighted costs, refunds, debt, clamping, and the lazy sweep of idle keys.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createGcraLimiter, type GcraDecision, type GcraLimiter } from '../../../core/coordination/gcra.ts';

type Step =
  | { at: number; take: number; key?: string; expect: Partial<GcraDecision> }
  | { at: number; check: number; key?: string; expect: Partial<GcraDecision> }
  | { at: number; peek: true; key?: string; expect: Partial<GcraDecision> }
  | { at: number; adjust: number; key?: string };

interface Case {
  title: string;
  limit: number;
  steps: Step[];
}

const MINUTE = 60_000;

const cases: Case[] = [
  {
    title: 'a fresh key may spend the whole burst at once, then is refused until one interval passes',
    limit: 3,
    steps: [
      { at: 0, take: 1, expect: { allowed: true, remaining: 2, resetMs: 20_000, retryAfterMs: 0 } },
      { at: 0, take: 1, expect: { allowed: true, remaining: 1, resetMs: 40_000 } },
      { at: 0, take: 1, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 0, take: 1, expect: { allowed: false, remaining: 0, resetMs: 60_000, retryAfterMs: 20_000 } },
      { at: 19_999, take: 1, expect: { allowed: false, retryAfterMs: 1 } },
      { at: 20_000, take: 1, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
    ],
  },
  {
    title: 'after the burst the key regains exactly one unit per period / limit',
    limit: 60,
    steps: [
      { at: 0, take: 60, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 999, take: 1, expect: { allowed: false, retryAfterMs: 1 } },
      { at: 1_000, take: 1, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 2_000, take: 1, expect: { allowed: true, remaining: 0 } },
      { at: 2_500, take: 1, expect: { allowed: false, retryAfterMs: 500 } },
      { at: 32_000, peek: true, expect: { allowed: true, remaining: 30, resetMs: 30_000 } },
      { at: 62_000, peek: true, expect: { remaining: 60, resetMs: 0 } },
    ],
  },
  {
    title: 'retry-after is exact, rounded up to whole ms, when the interval is not a whole ms (60000 / 7)',
    limit: 7,
    steps: [
      { at: 0, take: 7, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 0, take: 1, expect: { allowed: false, retryAfterMs: 8_572 } },
      { at: 8_571, take: 1, expect: { allowed: false, retryAfterMs: 1 } },
      { at: 8_572, take: 1, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
    ],
  },
  {
    title: 'weighted costs take that many units, and a refused one waits for all of them',
    limit: 1_000,
    steps: [
      { at: 0, take: 400, expect: { allowed: true, remaining: 600, resetMs: 24_000 } },
      { at: 0, take: 700, expect: { allowed: false, remaining: 600, resetMs: 24_000, retryAfterMs: 6_000 } },
      { at: 6_000, take: 700, expect: { allowed: true, remaining: 0, resetMs: 60_000, cost: 700 } },
    ],
  },
  {
    title: 'check decides like take but takes nothing',
    limit: 10,
    steps: [
      { at: 0, check: 10, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 0, check: 11, expect: { allowed: true, cost: 10 } },
      { at: 0, peek: true, expect: { remaining: 10, resetMs: 0 } },
      { at: 0, take: 4, expect: { allowed: true, remaining: 6 } },
      { at: 0, check: 7, expect: { allowed: false, remaining: 6, retryAfterMs: 6_000 } },
      { at: 0, peek: true, expect: { remaining: 6, resetMs: 24_000 } },
    ],
  },
  {
    title: 'a settlement refund gives back the unused reservation',
    limit: 1_000,
    steps: [
      { at: 0, take: 1_000, expect: { allowed: true, remaining: 0 } },
      { at: 0, adjust: -957 },
      { at: 0, peek: true, expect: { remaining: 957, resetMs: 2_580 } },
      { at: 0, take: 957, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
    ],
  },
  {
    title: 'a refund never makes the bucket fuller than full',
    limit: 1_000,
    steps: [
      { at: 0, take: 100, expect: { allowed: true, remaining: 900 } },
      { at: 3_000, adjust: -500 },
      { at: 3_000, peek: true, expect: { remaining: 1_000, resetMs: 0 } },
      { at: 3_000, take: 1_000, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 3_000, take: 1, expect: { allowed: false } },
    ],
  },
  {
    title: 'a settlement charge beyond the bucket is debt that delays the next request',
    limit: 1_000,
    steps: [
      { at: 0, take: 100, expect: { allowed: true } },
      { at: 0, adjust: 1_900 },
      { at: 0, peek: true, expect: { allowed: false, remaining: 0, resetMs: 120_000 } },
      { at: 0, take: 1, expect: { allowed: false, retryAfterMs: 60_060 } },
      { at: 60_059, take: 1, expect: { allowed: false, retryAfterMs: 1 } },
      { at: 60_060, take: 1, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
    ],
  },
  {
    title: 'a cost above the limit is clamped: admitted only with a full bucket, then settled to its actual',
    limit: 1_000,
    steps: [
      { at: 0, take: 10, key: 'b', expect: { allowed: true, remaining: 990 } },
      { at: 0, take: 5_000, key: 'b', expect: { allowed: false, retryAfterMs: 600, cost: 1_000 } },
      { at: 0, take: 5_000, key: 'a', expect: { allowed: true, remaining: 0, resetMs: 60_000, cost: 1_000 } },
      { at: 0, adjust: 2_000, key: 'a' },
      { at: 0, peek: true, key: 'a', expect: { allowed: false, remaining: 0, resetMs: 180_000 } },
    ],
  },
  {
    title: 'fractional costs round up and zero costs take nothing',
    limit: 10,
    steps: [
      { at: 0, take: 0.2, expect: { allowed: true, remaining: 9, cost: 1 } },
      { at: 0, take: 0, expect: { allowed: true, remaining: 9, cost: 0 } },
      { at: 0, take: -5, expect: { allowed: true, remaining: 9, cost: 0 } },
    ],
  },
  {
    title: 'a clock that steps back counts as no time passing',
    limit: 2,
    steps: [
      { at: 10_000, take: 2, expect: { allowed: true, remaining: 0, resetMs: 60_000 } },
      { at: 5_000, take: 1, expect: { allowed: false, retryAfterMs: 30_000 } },
      { at: 40_000, take: 1, expect: { allowed: true, remaining: 0 } },
    ],
  },
];

function run(limiter: GcraLimiter, step: Step): void {
  const key = step.key ?? 'k';
  let actual: GcraDecision;
  if ('adjust' in step) return limiter.adjust(key, step.adjust, step.at);
  if ('take' in step) actual = limiter.tryTake(key, step.take, step.at);
  else if ('check' in step) actual = limiter.check(key, step.check, step.at);
  else actual = limiter.peek(key, step.at);
  const picked = Object.fromEntries(Object.keys(step.expect).map((field) => [field, actual[field as keyof GcraDecision]]));
  assert.deepEqual(picked, step.expect, `at ${step.at} ms: ${JSON.stringify(step)}`);
}

describe('GCRA limiter', () => {
  for (const c of cases) {
    test(c.title, () => {
      const limiter = createGcraLimiter({ limit: c.limit, periodMs: MINUTE });
      for (const step of c.steps) run(limiter, step);
    });
  }

  test('keys are independent', () => {
    const limiter = createGcraLimiter({ limit: 1, periodMs: MINUTE });
    assert.equal(limiter.tryTake('alice', 1, 0).allowed, true);
    assert.equal(limiter.tryTake('alice', 1, 0).allowed, false);
    assert.equal(limiter.tryTake('bob', 1, 0).allowed, true);
  });

  test('a key whose bucket refilled reads as full and is kept, updated in place, until a sweep', () => {
    const limiter = createGcraLimiter({ limit: 5, periodMs: MINUTE });
    limiter.tryTake('k', 2, 0);
    assert.equal(limiter.size(), 1);
    assert.equal(limiter.peek('k', 23_999).remaining, 4);
    assert.deepEqual(limiter.peek('k', 24_000), { allowed: true, remaining: 5, resetMs: 0, retryAfterMs: 0, cost: 0 });
    assert.equal(limiter.size(), 1, 'not deleted when read: no delete and re-insert per request');
    // Taken again from full: the same as a fresh key.
    assert.deepEqual(limiter.tryTake('k', 5, 30_000), { allowed: true, remaining: 0, resetMs: 60_000, retryAfterMs: 0, cost: 5 });
    assert.equal(limiter.tryTake('k', 1, 30_000).allowed, false);
    assert.equal(limiter.size(), 1);
  });

  test('a refund back to full leaves the bucket full (the key kept until a sweep)', () => {
    const limiter = createGcraLimiter({ limit: 100, periodMs: MINUTE });
    limiter.tryTake('k', 60, 0);
    limiter.adjust('k', -60, 0);
    assert.deepEqual(limiter.peek('k', 0), { allowed: true, remaining: 100, resetMs: 0, retryAfterMs: 0, cost: 0 });
    // A refund beyond what was taken never makes the bucket hold more than full.
    limiter.adjust('k', -500, 0);
    assert.equal(limiter.tryTake('k', 100, 0).allowed, true);
    assert.equal(limiter.tryTake('k', 1, 0).allowed, false);
  });

  test('idle keys are swept when the map grows, so memory stays bounded', () => {
    const limiter = createGcraLimiter({ limit: 1, periodMs: MINUTE });
    for (let i = 0; i < 1023; i++) limiter.tryTake(`idle-${i}`, 1, 0);
    assert.equal(limiter.size(), 1023);
    // The 1024th key triggers the sweep; every idle key's bucket refilled at 60 000 ms.
    limiter.tryTake('fresh', 1, 60_000);
    assert.equal(limiter.size(), 1);
  });

  test('the sweep keeps keys whose bucket is still refilling', () => {
    const limiter = createGcraLimiter({ limit: 1, periodMs: MINUTE });
    for (let i = 0; i < 1023; i++) limiter.tryTake(`busy-${i}`, 1, 0);
    limiter.tryTake('fresh', 1, 59_999);
    assert.equal(limiter.size(), 1024);
    assert.deepEqual(limiter.tryTake('busy-0', 1, 59_999), { allowed: false, remaining: 0, resetMs: 1, retryAfterMs: 1, cost: 1 });
  });

  test('rejects a limit or period that is not a positive integer', () => {
    assert.throws(() => createGcraLimiter({ limit: 0, periodMs: MINUTE }), /limit must be an integer ≥ 1, got 0/);
    assert.throws(() => createGcraLimiter({ limit: 1.5, periodMs: MINUTE }), /limit must be an integer ≥ 1, got 1.5/);
    assert.throws(() => createGcraLimiter({ limit: 1, periodMs: 0 }), /periodMs must be an integer ≥ 1, got 0/);
  });
});
