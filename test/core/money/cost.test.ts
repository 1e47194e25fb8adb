/** The cost arithmetic: integer nano-USD, parts rounded once each, cached tokens never billed twice. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { costOf, maxCostNanos, partNanos, rateNanosPerMillion } from '../../../core/money/cost.ts';
import type { ModelPrice } from '../../../core/money/price-table.ts';
import type { TokenCounts } from '../../../core/canonical/chat-types.ts';
import type { RequestCost } from '../../../core/exchange.ts';

function price(input: number, output: number, cached: number | null = null, cacheWrite: number | null = null): ModelPrice {
  return {
    model: 'm', provider: null, input_price_per_million: input, output_price_per_million: output,
    cached_input_price_per_million: cached, cache_write_price_per_million: cacheWrite, source: 'manual',
  };
}

function usage(promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0): TokenCounts {
  return { promptTokens, completionTokens, cachedTokens, cacheWriteTokens };
}

/** The figures of a priced cost (`price` is the one billed: added by the assertion). */
function cost(inputNanos: number, cachedInputNanos: number, cacheWriteNanos: number, outputNanos: number): Omit<RequestCost, 'price'> {
  return { totalNanos: inputNanos + cachedInputNanos + cacheWriteNanos + outputNanos, inputNanos, cachedInputNanos, cacheWriteNanos, outputNanos, unpriced: false };
}

describe('costOf', () => {
  const cases: Array<[string, ModelPrice | null, TokenCounts, Omit<RequestCost, 'price'>]> = [
    // OpenAI: prompt_tokens 19 includes 3 cached (gpt-4o-mini: $0.15 in, $0.075 cached, $0.60 out).
    ['bills an OpenAI-shaped usage with its cached subset at the cached rate', price(0.15, 0.6, 0.075), usage(19, 24, 3), cost(16 * 150, 3 * 75, 0, 24 * 600)],
    // Anthropic: input_tokens 100 + cache_read 2000 + cache_creation 500 = canonical prompt 2600 (claude-3-5-haiku).
    ['bills an Anthropic-shaped usage with cache reads and cache writes at their own rates', price(0.8, 4, 0.08, 1), usage(2600, 300, 2000, 500), cost(80_000, 160_000, 500_000, 1_200_000)],
    ['bills cache reads at the input rate when the model has no cached rate', price(0.15, 0.6), usage(19, 24, 3), cost(16 * 150, 3 * 150, 0, 24 * 600)],
    ['bills cache writes at the input rate when the model has no cache-write rate', price(3, 15, 0.3), usage(1000, 0, 0, 400), cost(600 * 3000, 0, 400 * 3000, 0)],
    ['gives all zeros and unpriced for a model without a price', null, usage(19, 24, 3), { totalNanos: 0, inputNanos: 0, cachedInputNanos: 0, cacheWriteNanos: 0, outputNanos: 0, unpriced: true }],
    ['gives zeros but priced for a free model', price(0, 0), usage(19, 24, 3), cost(0, 0, 0, 0)],
    ['bills one token at $0.15 per million as exactly 150 nanos', price(0.15, 0.15), usage(1, 0), cost(150, 0, 0, 0)],
    ['rounds each part half up on its own', price(0.0015, 0.0025), usage(1, 1), cost(2, 0, 0, 3)],
    ['never bills a negative input when cached and cache-write counts exceed the prompt', price(1, 1, 0.5, 2), usage(10, 0, 8, 5), cost(0, 4_000, 10_000, 0)],
    ['treats missing or malformed token counts as zero', price(1, 1), usage(Number.NaN, -5), cost(0, 0, 0, 0)],
  ];
  for (const [title, p, u, expected] of cases) {
    // The billed price is kept with the figures (the log row's `billed_price`).
    test(title, () => assert.deepEqual(costOf(p, u), { ...expected, price: p }));
  }

  test('a million requests of one token at $0.15 per million sum to exactly 150,000,000 nanos ($0.15)', () => {
    const p = price(0.15, 0.15);
    let sumNanos = 0;
    for (let i = 0; i < 1_000_000; i++) sumNanos += costOf(p, usage(1, 0)).totalNanos;
    assert.equal(sumNanos, 150_000_000);
    let floatUsd = 0;
    for (let i = 0; i < 1_000_000; i++) floatUsd += 0.15 / 1_000_000;
    assert.notEqual(floatUsd, 0.15, 'the float sum this design avoids does drift');
  });

  test('stays exact past 2^53 by switching to BigInt', () => {
    const tokens = 123_456_789;
    const rate = rateNanosPerMillion(75.123456789);
    assert.ok(tokens * rate > Number.MAX_SAFE_INTEGER);
    const exact = Number((BigInt(tokens) * BigInt(rate) + 500_000n) / 1_000_000n);
    assert.equal(partNanos(tokens, rate), exact);
    assert.equal(costOf(price(75.123456789, 0), usage(tokens, 0)).totalNanos, exact);
  });

  test('converts each USD rate to whole nanos per million once, without float noise', () => {
    assert.deepEqual([0.15, 0.3, 2.5, 0.075, 1e-9].map(rateNanosPerMillion), [150_000_000, 300_000_000, 2_500_000_000, 75_000_000, 1]);
  });
});

describe('maxCostNanos', () => {
  const cases: Array<[string, ModelPrice | null, number, number, number]> = [
    ['is prompt tokens at the input rate plus max output at the output rate', price(0.15, 0.6, 0.075), 1000, 500, 150_000 + 300_000],
    ['takes prompt tokens at the cache-write rate when that is higher (a reservation is an upper bound)', price(3, 15, 0.3, 3.75), 1000, 100, 3_750_000 + 1_500_000],
    ['is 0 for an unpriced model', null, 1000, 500, 0],
  ];
  for (const [title, p, promptTokens, maxOutputTokens, expected] of cases) {
    test(title, () => assert.equal(maxCostNanos(p, promptTokens, maxOutputTokens), expected));
  }

  test('is never below the actual cost of any split of the same tokens', () => {
    const p = price(3, 15, 0.3, 3.75);
    const reserved = maxCostNanos(p, 1000, 200);
    for (const [cached, written] of [[0, 0], [900, 0], [0, 1000], [300, 700]] as const) {
      assert.ok(costOf(p, usage(1000, 200, cached, written)).totalNanos <= reserved, `cached ${cached}, written ${written}`);
    }
  });
});
