/**
 * What the pricing plugin offers other plugins (`ctx.services.get('pricing')`): the price of a model
 * and the cost of a request. Prices are USD per million tokens (what providers publish); costs are
 * integer nano-USD (`RequestCost`).
 */
import type { TokenCounts } from '../../core/chat-types.ts';
import type { RequestCost } from '../../core/exchange.ts';

/** One model's price, as stored in `model_pricing` (USD per million tokens). */
export interface ModelPrice {
  model: string;
  provider: string | null;
  input_price_per_million: number;
  output_price_per_million: number;
  /** Cache reads; null = billed at the input rate. */
  cached_input_price_per_million: number | null;
  /** Cache writes (Anthropic charges 1.25× input); null = billed at the input rate. */
  cache_write_price_per_million: number | null;
  /** `manual` (admin or `pricing set`, always wins), `import` (the dataset), `free` (a provider declared free). */
  source: 'manual' | 'import' | 'free';
}

export interface PriceBook {
  /** The price of `model` served by provider `provider` (ids without prefix), or null = unpriced. */
  priceFor(provider: string, model: string): ModelPrice | null;
  /** The cost of `usage` at `price`; a null price gives all zeros with `unpriced: true`. */
  costOf(price: ModelPrice | null, usage: TokenCounts): RequestCost;
  /**
   * Worst-case cost for a reservation: `promptTokens` at the input rate + `maxOutputTokens` at the output rate. 0 when unpriced.
   * (When the cache-write rate is above the input rate, prompt tokens are taken at the cache-write rate: an upper bound.)
   */
  maxCostNanos(price: ModelPrice | null, promptTokens: number, maxOutputTokens: number): number;
  /** Every stored price (rows with a null model never appear), sorted by model. */
  list(): ModelPrice[];
  /** Gateway provider id → the price dataset's provider id (config `datasetProviders`), for imports. */
  readonly datasetProviders: Readonly<Record<string, string>>;
  /** Forgets cached prices; call after writing `model_pricing`. */
  invalidate(): void;
}

declare module '../../core/services.ts' {
  interface GatewayServices {
    pricing: PriceBook;
  }
}
