/** Component schemas of `GET /api/pricing` (the view `pricingView` builds). */
import type { JsonSchema } from '../../core/json-schema.ts';
import { list, nullableUsd, object, str, usd } from '../../core/openapi/openapi-schema.ts';

const pricePer = (what: string, per: string, orNull: boolean): JsonSchema =>
  (orNull ? nullableUsd : usd)(`Price of ${per} ${what}${orNull ? '; null = no separate rate, these tokens cost the input rate' : ''}`);

const pricingRow = object('The price of one model.', {
  model: str('Model id the price applies to.'),
  provider: { type: ['string', 'null'], description: 'Provider id the price is for; null = any provider serving this model id.' },
  display_name: str('Human-readable model name.'),
  input_price_per_1k: pricePer('input tokens', '1,000', false),
  output_price_per_1k: pricePer('output tokens', '1,000', false),
  cached_input_price_per_1k: pricePer('cached input tokens', '1,000', true),
  cache_write_price_per_1k: pricePer('input tokens written to the prompt cache', '1,000', true),
  input_price_per_million: pricePer('input tokens', '1,000,000', false),
  output_price_per_million: pricePer('output tokens', '1,000,000', false),
  cached_input_price_per_million: pricePer('cached input tokens', '1,000,000', true),
  cache_write_price_per_million: pricePer('input tokens written to the prompt cache', '1,000,000', true),
  source: { enum: ['manual', 'import', 'free'], description: '`manual`: set by an admin or `tollgate pricing set` (always wins over imports); `import`: from the bundled price dataset; `free`: zero, for a provider the gateway treats as free (local models).' },
});

export const pricingSchemas: Record<string, JsonSchema> = {
  PricingRow: pricingRow,
  PricingList: list('Every priced model. Per-1k prices are the stored per-million prices / 1000.', 'PricingRow'),
};
