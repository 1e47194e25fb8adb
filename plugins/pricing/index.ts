/**
 * pricing: what each request cost. Offers the price book (`ctx.services.get('pricing')`) to budget
 * (reservations) and others; sets `ex.cost` (integer nano-USD) when a chat completion ends, from the
 * usage the upstream reported or the gateway counted; answers `GET /api/pricing`.
 *
 * Listed after budget in the manifest so that, on the way back (reverse order), the cost is set
 * before budget settles its reservation and before the logger writes the row. A model without a
 * price is still served: its cost is all zeros with `unpriced: true`, never a silent $0.
 *
 * At first start (empty `model_pricing`) the table is seeded from the bundled price dataset.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import { jsonOk } from '../../core/openapi/openapi-errors.ts';
import { pricingSchemas } from './openapi.ts';
import { isModelOperation } from '../../core/dialects/index.ts';
import { reply } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { getModelDisplayName } from '../../core/catalog/model-display-name.ts';
import { createModelIdResolver, datasetPricesApart } from '../../core/money/price-dataset.ts';
import { importPrices, type ModelPrice } from '../../core/money/price-table.ts';
import { per1k } from '../../core/money/money.ts';
import { createPriceBook, type ClosablePriceBook } from './price-book.ts';
import { pricingSchema, type PricingConfig } from './schema.ts';

/** One item of `GET /api/pricing`. */
export function pricingView(price: ModelPrice) {
  return {
    model: price.model,
    provider: price.provider,
    display_name: getModelDisplayName({ id: price.model }),
    input_price_per_1k: per1k(price.input_price_per_million),
    output_price_per_1k: per1k(price.output_price_per_million),
    cached_input_price_per_1k: per1k(price.cached_input_price_per_million),
    cache_write_price_per_1k: per1k(price.cache_write_price_per_million),
    input_price_per_million: price.input_price_per_million,
    output_price_per_million: price.output_price_per_million,
    cached_input_price_per_million: price.cached_input_price_per_million,
    cache_write_price_per_million: price.cache_write_price_per_million,
    source: price.source,
  };
}

/** Seeds an empty `model_pricing` from the dataset (read in a child process: none of it stays in memory); a failure is logged, never fatal. */
async function seedIfEmpty(config: PricingConfig, ctx: PluginContext): Promise<void> {
  const any = await ctx.store.db.selectFrom('model_pricing').select('model').limit(1).executeTakeFirst();
  if (any) return;
  try {
    const { rows, unknownProviders } = await datasetPricesApart(config.datasetProviders, ctx.clock());
    const result = await importPrices(ctx.store.db, rows, ctx.clock());
    ctx.log.info('pricing: seeded model_pricing from the price dataset', Object.assign({} as Record<string, unknown>, result, { unknownProviders }));
  } catch (err) {
    ctx.log.warn('pricing: could not seed prices from the dataset; set them with `tollgate pricing set`', { err });
  }
}


async function createPricing(config: PricingConfig, ctx: PluginContext): Promise<Plugin> {
  if (config.seedOnFirstStart) await seedIfEmpty(config, ctx);
  // The dataset's matcher loads on the first lookup that needs it (price-book.ts); none without dataset providers.
  const loadResolver = Object.keys(config.datasetProviders).length > 0 ? createModelIdResolver : undefined;
  const book: ClosablePriceBook = createPriceBook(ctx.store, Object.assign({}, config, loadResolver ? { loadResolver } : {}), ctx.log);
  ctx.services.provide('pricing', book);

  return {
    name: 'pricing',
    onRequest(ex: Exchange) {
      if (ex.operation !== 'pricing.list') return;
      const answer = () => reply(200, { object: 'list', data: book.list().map(pricingView) });
      const loading = book.tableReady();
      return loading ? loading.then(answer) : answer();
    },
    onResponseEnd(ex: Exchange) {
      const { target, usage } = ex;
      if (!isModelOperation(ex.operation) || !target || !usage) return;
      const served = ex.modelServed;
      const model = target.priceModel ?? target.model;
      const price = () => book.priceFor(target.provider, model) ?? (served ? book.priceFor(target.provider, served) : null);
      const found = price();
      if (found) {
        ex.cost = book.costOf(found, usage);
        return;
      }
      // A dated name may need the dataset's matcher: wait for it once, then price.
      const loading = book.ready(target.provider, model) ?? (served ? book.ready(target.provider, served) : null);
      if (!loading) {
        ex.cost = book.costOf(null, usage);
        return;
      }
      return loading.then(() => void (ex.cost = book.costOf(price(), usage)));
    },
    close() {
      book.close();
    },
  };
}

export const pricing = definePlugin<PricingConfig>({
  name: 'pricing',
  description: 'Prices models (USD per million tokens in model_pricing, seeded from a maintained dataset) and sets each request\'s cost in integer nano-USD.',
  configSchema: pricingSchema,
  routes: [{
    method: 'GET', path: '/api/pricing', operation: 'pricing.list',
    doc: {
      operationId: 'listPricing',
      tag: { name: 'Pricing', description: 'What each model costs.' },
      summary: 'Model prices',
      description: 'Every priced model, per 1,000 and per 1,000,000 tokens in USD. Per-1k prices are the stored per-million prices / 1000.',
      success: jsonOk('Every priced model (rows without a model are never listed), prices in USD.', 'PricingList'),
      errors: {},
      schemas: pricingSchemas,
    },
  }],
  order: [{ relation: 'after', plugin: 'budget', why: 'on the way back (reverse order) pricing must set the cost before budget settles its reservation' }],
  create: createPricing,
});
