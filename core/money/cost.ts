/**
 * The cost of a request from its token counts, in integer nano-USD (1 USD = 1e9).
 *
 * Each USD-per-million rate is converted once to an integer "nanos per million tokens"
 * (`usdToNanos`, `money.ts`), and each part is `round(tokens × rate / 1e6)`, rounded on its own; the
 * total is the sum of the parts. So one token at $0.15/M costs exactly 150 nanos, and a million such
 * requests sum to exactly $0.15: no float is ever summed.
 *
 * Token counts are canonical (`TokenCounts`): `promptTokens` INCLUDES cache reads (`cachedTokens`)
 * and cache writes (`cacheWriteTokens`), so those are billed at their own rates and taken out of the
 * tokens billed at the input rate, never counted twice.
 *
 * Every result is a safe integer: rates are clamped to `MAX_USD_PER_MILLION`, token counts and sums
 * to `Number.MAX_SAFE_INTEGER`. With usage validated on arrival (at most `MAX_REPORTED_TOKENS` per
 * field) no clamp is ever reached: four parts of at most 1e15 nanos each stay below 2^53.
 */
import type { TokenCounts } from '../canonical/chat-types.ts';
import type { RequestCost } from '../exchange.ts';
import type { ModelPrice } from './price-table.ts';
import { usdToNanos } from './money.ts';
import { MAX_USD_PER_MILLION } from './price-bounds.ts';

const TOKENS_PER_MILLION = 1_000_000;
const BIG_MILLION = 1_000_000n;
const BIG_HALF_MILLION = 500_000n;

/** The highest rate, nanos per million tokens: `MAX_USD_PER_MILLION` (`price-bounds.ts`). */
const MAX_RATE_NANOS = usdToNanos(MAX_USD_PER_MILLION);

/**
 * A USD-per-million rate as integer nano-USD per million tokens, from 0 to `MAX_RATE_NANOS`. Prices
 * are bounded on input; the clamp keeps a row stored before that bound (or edited by hand) from
 * breaking the arithmetic. A non-finite rate is 0.
 */
export function rateNanosPerMillion(usdPerMillion: number): number {
  if (!Number.isFinite(usdPerMillion) || usdPerMillion <= 0) return 0;
  return Math.min(usdToNanos(usdPerMillion), MAX_RATE_NANOS);
}

/**
 * A token count as a safe non-negative integer (a malformed count must not bill negatively, nor as
 * NaN or Infinity). Usage is validated when it arrives (`tokenCountsOf`); this is the last line.
 */
function tokenCount(tokens: number): number {
  return Number.isFinite(tokens) && tokens > 0 ? Math.min(Math.round(tokens), Number.MAX_SAFE_INTEGER) : 0;
}

/** A sum of nanos, at most `Number.MAX_SAFE_INTEGER` so it is always stored as an exact integer. */
function safeNanos(nanos: number): number {
  return Number.isSafeInteger(nanos) ? nanos : Number.MAX_SAFE_INTEGER;
}

/**
 * `tokens` at `rateNanos` (nanos per million tokens), rounded half up to whole nanos. Exact: when the
 * product would pass 2^53 (10M tokens at $1,000/M) it is computed with BigInt. Always a safe integer:
 * a result past 2^53 − 1 (impossible for a validated usage at a validated price: 1e7 tokens ×
 * 1e14 nanos/M = 1e15) is clamped to it.
 */
export function partNanos(tokens: number, rateNanos: number): number {
  const product = tokens * rateNanos;
  if (product <= Number.MAX_SAFE_INTEGER) return Math.round(product / TOKENS_PER_MILLION);
  const exact = (BigInt(tokens) * BigInt(rateNanos) + BIG_HALF_MILLION) / BIG_MILLION;
  return exact > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(exact);
}

const UNPRICED: Readonly<RequestCost> = Object.freeze({
  totalNanos: 0, inputNanos: 0, cachedInputNanos: 0, cacheWriteNanos: 0, outputNanos: 0, unpriced: true, price: null,
});

/**
 * The cost of `usage` at `price` (see the module doc for the rules). A null price gives all zeros
 * with `unpriced: true`; a free price (all rates 0) gives zeros with `unpriced: false`.
 */
export function costOf(price: ModelPrice | null, usage: TokenCounts): RequestCost {
  if (!price) return { ...UNPRICED };
  const inputRate = rateNanosPerMillion(price.input_price_per_million);
  const cachedRate = price.cached_input_price_per_million === null ? inputRate : rateNanosPerMillion(price.cached_input_price_per_million);
  const writeRate = price.cache_write_price_per_million === null ? inputRate : rateNanosPerMillion(price.cache_write_price_per_million);
  const outputRate = rateNanosPerMillion(price.output_price_per_million);

  const cached = tokenCount(usage.cachedTokens);
  const written = tokenCount(usage.cacheWriteTokens);
  const plainInput = Math.max(0, tokenCount(usage.promptTokens) - cached - written);

  const inputNanos = partNanos(plainInput, inputRate);
  const cachedInputNanos = partNanos(cached, cachedRate);
  const cacheWriteNanos = partNanos(written, writeRate);
  const outputNanos = partNanos(tokenCount(usage.completionTokens), outputRate);
  return {
    totalNanos: safeNanos(inputNanos + cachedInputNanos + cacheWriteNanos + outputNanos),
    inputNanos, cachedInputNanos, cacheWriteNanos, outputNanos,
    unpriced: false,
    price,
  };
}

/**
 * Worst-case cost for a budget reservation, nano-USD: `promptTokens` at the input rate plus
 * `maxOutputTokens` at the output rate. When the model's cache-write rate is higher than its input
 * rate (Anthropic: 1.25×), prompt tokens are taken at that rate instead: before the answer nobody
 * knows how many will be cache writes, and a reservation must never be below the actual cost.
 * 0 when unpriced.
 */
export function maxCostNanos(price: ModelPrice | null, promptTokens: number, maxOutputTokens: number): number {
  if (!price) return 0;
  const inputRate = rateNanosPerMillion(price.input_price_per_million);
  const writeRate = price.cache_write_price_per_million === null ? inputRate : rateNanosPerMillion(price.cache_write_price_per_million);
  return safeNanos(partNanos(tokenCount(promptTokens), Math.max(inputRate, writeRate))
    + partNanos(tokenCount(maxOutputTokens), rateNanosPerMillion(price.output_price_per_million)));
}
