import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nowIso } from '../../../core/store/store.ts';

test('nowIso writes what Date#toISOString writes, within a second, across seconds and at the edges', () => {
  const base = Date.UTC(2026, 10, 26, 7, 27, 49, 0);
  const times = [
    base, base + 1, base + 9, base + 10, base + 99, base + 100, base + 999, base + 1000, base + 1001, base + 0.7, base + 5.999,
    base - 1, base - 1000, base + 86_400_000 - 1, 0, 1, -1, -0.5, -1001, 1.5, Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1), Date.UTC(10000, 0, 1) + 5, Date.UTC(-1, 0, 1, 0, 0, 0, 7), base + 42,
  ];
  // Twice: the second pass meets every value with another second cached.
  for (const ms of [...times, ...times.reverse()]) assert.equal(nowIso(ms), new Date(ms).toISOString(), String(ms));
  assert.throws(() => nowIso(Number.NaN), RangeError);
  assert.equal(nowIso(base + 3), new Date(base + 3).toISOString(), 'the cache survives a refused value');
});
