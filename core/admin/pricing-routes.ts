/**
 * `/admin/api/pricing`: model prices (USD per million tokens) and the cost calculator
 * (`docs/admin-api.md`, "Model pricing"). Storage and arithmetic are core domain modules
 * (`price-table.ts`, `cost.ts`): this file only validates, maps errors and shapes replies.
 *
 * Every write drops the in-process price book (`pricing.invalidate()`) so the very next request is
 * billed at the new price; `notifyChange()` tells the other caches.
 */
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { booleanField, objectBody, onlyFields, numberField, parseQueryTime, queryString, stringField, type Body } from './fields.ts';
import { reprice, RepriceTooLargeError, type RepriceResult } from '../money/reprice.ts';
import { conflict, invalidRequest, modelNotFound, resourceNotFound } from '../errors.ts';
import {
  deletePrice, getPrice, importPrices, PriceValidationError, searchPrices, setPrice, toModelPrice, validatePrice,
  type ModelPrice, type PriceInput, type StoredPrice,
} from '../money/price-table.ts';
import { datasetPricesApart, DEFAULT_DATASET_PROVIDERS } from '../money/price-dataset.ts';
import { costOf } from '../money/cost.ts';
import { MAX_REPORTED_TOKENS } from '../canonical/chat-types.ts';
import { usd } from '../money/money.ts';
import { listUnpricedModels } from './unpriced-models.ts';

/** The contract's Price object: a stored price and when it changed (null only for a provider's implicit free price). */
export type AdminPrice = ModelPrice & { updated_at: string | null };

const PRICE_FIELDS = [
  'model', 'provider', 'input_price_per_million', 'output_price_per_million',
  'cached_input_price_per_million', 'cache_write_price_per_million',
] as const;
/** Read-only fields of a Price object: accepted (and ignored) so a row read by GET can be sent back as is. */
const READ_ONLY_FIELDS = ['source', 'updated_at'] as const;
const CALCULATE_FIELDS = ['model', 'provider', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cache_write_tokens'] as const;

function priceView(row: StoredPrice | (ModelPrice & { updated_at?: string })): AdminPrice {
  return { ...toModelPrice(row), updated_at: row.updated_at ?? null };
}

/** The store's validation error as the contract's 400 naming the field. */
function asInvalidRequest(err: unknown): never {
  if (err instanceof PriceValidationError) throw invalidRequest(err.message, err.field);
  throw err;
}

/** The body's price fields, checked by the store's own rules (the CLI's). */
function priceBody(raw: unknown): Required<PriceInput> {
  const body = objectBody(raw);
  onlyFields(body, [...PRICE_FIELDS, ...READ_ONLY_FIELDS]);
  const fields: Record<string, unknown> = {};
  for (const name of PRICE_FIELDS) if (body[name] !== undefined) fields[name] = body[name];
  try {
    return validatePrice(fields);
  } catch (err) {
    return asInvalidRequest(err);
  }
}

function priceNotFound(model: string) {
  return resourceNotFound('price_not_found', `No price is stored for "${model}". GET /admin/api/pricing lists the stored prices.`, 'model');
}

/** A non-negative whole token count; `required` false gives 0 when absent. */
function tokens(body: Body, name: string, required: boolean): number {
  // One request's worth: the most any usage report may bill (`MAX_REPORTED_TOKENS`).
  const rule = { integer: true, min: 0, max: MAX_REPORTED_TOKENS };
  const value = required ? numberField(body, name, { ...rule, required: true }) : numberField(body, name, rule);
  return value ?? 0;
}

const REPRICE_FIELDS = ['model', 'provider', 'from', 'to', 'dry_run'];
/**
 * Rows one admin call re-prices at most: the work is synchronous on the gateway's thread (about a
 * second per 100,000 rows); larger ranges go to `tollgate pricing reprice`.
 */
export const ADMIN_REPRICE_MAX_ROWS = 50_000;

export function createPricingRoutes(ctx: AdminContext): AdminRoute[] {
  // The pricing plugin's own mapping (manifest `datasetProviders`); its defaults when it is absent.
  const datasetProviders = () => ctx.services.get('pricing')?.datasetProviders ?? DEFAULT_DATASET_PROVIDERS;

  /** After every write: the next request must see it (see the module doc). */
  function changed(): void {
    ctx.services.get('pricing')?.invalidate();
    ctx.notifyChange();
  }

  async function store(price: Required<PriceInput>): Promise<AdminPrice> {
    const row = await setPrice(ctx.store.db, price, ctx.clock()).catch(asInvalidRequest);
    changed();
    return priceView(row);
  }

  /** With `provider`: what real traffic would pay (dated names included); without: the stored row. */
  async function lookUp(model: string, provider: string | undefined): Promise<AdminPrice | null> {
    const book = ctx.services.get('pricing');
    if (provider !== undefined && book) {
      await book.ready(provider, model);
      const price = book.priceFor(provider, model);
      if (!price) return null;
      // The book has no timestamps; the stored row (absent for a free provider's implicit price) does.
      const stored = price.source === 'free' ? null : await getPrice(ctx.store.db, price.model);
      return priceView({ ...price, ...(stored ? { updated_at: stored.updated_at } : {}) });
    }
    const stored = await getPrice(ctx.store.db, model);
    if (!stored || (provider !== undefined && stored.provider !== null && stored.provider !== provider)) return null;
    return priceView(stored);
  }

  return [
    {
      method: 'GET',
      pattern: '/admin/api/pricing',
      async handler({ query }) {
        const rows = await searchPrices(ctx.store.db, queryString(query, 'search') ?? '');
        return json(200, { data: rows.map(priceView), unpriced: await listUnpricedModels(ctx, {}) });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/pricing',
      async handler({ body, audit }) {
        const price = priceBody(body);
        if (await getPrice(ctx.store.db, price.model)) {
          throw conflict(`"${price.model}" has a price already. Edit it with PUT /admin/api/pricing/${encodeURIComponent(price.model)}.`, 'model');
        }
        const after = await store(price);
        audit({ action: 'pricing.create', objectType: 'price', objectId: price.model, before: null, after });
        return json(201, after);
      },
    },
    {
      method: 'PUT',
      pattern: '/admin/api/pricing/:model',
      async handler({ params, body, audit }) {
        const model = params.model ?? '';
        const previous = await getPrice(ctx.store.db, model);
        const raw = objectBody(body);
        if (raw.model !== undefined && (typeof raw.model !== 'string' || raw.model.trim() !== model)) {
          throw invalidRequest(`"model" in the body must match the model in the path ("${model}"), or be left out.`, 'model');
        }
        const after = await store(priceBody({ ...raw, model }));
        audit({ action: 'pricing.set', objectType: 'price', objectId: model, before: previous && priceView(previous), after });
        return json(200, after);
      },
    },
    {
      method: 'DELETE',
      pattern: '/admin/api/pricing/:model',
      async handler({ params, audit }) {
        const model = params.model ?? '';
        const previous = await getPrice(ctx.store.db, model);
        if (!previous || !(await deletePrice(ctx.store.db, model))) throw priceNotFound(model);
        changed();
        audit({ action: 'pricing.delete', objectType: 'price', objectId: model, before: priceView(previous), after: null });
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/pricing/import',
      async handler({ body, audit }) {
        onlyFields(objectBody(body), []);
        const { rows, unknownProviders } = await datasetPricesApart(datasetProviders(), ctx.clock());
        const result = await importPrices(ctx.store.db, rows, ctx.clock());
        changed();
        ctx.log.info('admin: imported prices from the dataset', { ...result, unknownProviders });
        audit({ action: 'pricing.import', objectType: 'price', objectId: null, after: { ...result, unknownProviders } });
        return json(200, { inserted: result.inserted, updated: result.updated, kept_manual: result.skippedManual, skipped: result.skippedInvalid });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/pricing/calculate',
      audit: false,
      async handler({ body: raw }) {
        const body = objectBody(raw);
        onlyFields(body, CALCULATE_FIELDS);
        const model = stringField(body, 'model', { required: true, maxLength: 300 });
        const provider = stringField(body, 'provider', { nonEmpty: true, maxLength: 100 }) ?? undefined;
        const input = tokens(body, 'input_tokens', true);
        const output = tokens(body, 'output_tokens', true);
        const cached = tokens(body, 'cached_input_tokens', false);
        const written = tokens(body, 'cache_write_tokens', false);
        if (cached + written > input) {
          throw invalidRequest('"cached_input_tokens" plus "cache_write_tokens" must not exceed "input_tokens" (input_tokens includes them).', 'cached_input_tokens');
        }
        const price = await lookUp(model, provider);
        if (!price) {
          const where = provider ? ` served by "${provider}"` : '';
          throw modelNotFound(model, `No price for "${model}"${where}. Set one with POST /admin/api/pricing${provider ? '' : ', or pass "provider" to match dated names'}.`);
        }
        const cost = costOf(price, {
          promptTokens: input, completionTokens: output, cachedTokens: cached, cacheWriteTokens: written,
        });
        return json(200, {
          model, provider: provider ?? price.provider, price,
          input_tokens: input, cached_input_tokens: cached, cache_write_tokens: written, output_tokens: output,
          input_cost_usd: usd(cost.inputNanos),
          cached_input_cost_usd: usd(cost.cachedInputNanos),
          cache_write_cost_usd: usd(cost.cacheWriteNanos),
          output_cost_usd: usd(cost.outputNanos),
          cost_usd: usd(cost.totalNanos),
          cost_nanos: cost.totalNanos,
        });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/pricing/reprice',
      async handler({ body: raw, audit }) {
        const body = objectBody(raw);
        onlyFields(body, REPRICE_FIELDS);
        const model = stringField(body, 'model', { required: true, maxLength: 300 });
        const provider = stringField(body, 'provider', { nonEmpty: true, maxLength: 100 }) ?? undefined;
        const nowMs = ctx.clock();
        const fromMs = parseQueryTime(stringField(body, 'from', { required: true, maxLength: 40 }), 'from', nowMs);
        const to = stringField(body, 'to', { nonEmpty: true, maxLength: 40 });
        const toMs = to ? parseQueryTime(to, 'to', nowMs) : nowMs;
        if (toMs <= fromMs) throw invalidRequest('"to" must be after "from".', 'to');
        const dryRun = booleanField(body, 'dry_run') ?? false;
        const book = ctx.services.get('pricing');
        if (!book) throw invalidRequest('The gateway runs without the pricing plugin: there is no price to bill at.', null);
        // Served names are often dated: the dataset's matcher must be loaded before the synchronous pass.
        await book.ready();
        // The log rows (and the spends queued with them) must be in the tables to be re-priced.
        await ctx.services.get('requestLog')?.flush();
        let result: RepriceResult;
        try {
          result = await reprice(ctx.store, book, {
            model, provider, fromIso: new Date(fromMs).toISOString(), toIso: new Date(toMs).toISOString(), dryRun,
            timeZone: ctx.services.get('budget')?.timeZone ?? 'UTC', nowMs, maxRows: ADMIN_REPRICE_MAX_ROWS,
          });
        } catch (err) {
          if (err instanceof RepriceTooLargeError) throw invalidRequest(err.message, 'from');
          throw err;
        }
        if (!dryRun) {
          await ctx.services.get('budget')?.invalidate();
          ctx.notifyChange();
          ctx.log.info('admin: re-priced log rows', { model, provider: provider ?? null, rows: result.changed_rows, costBeforeNanos: result.cost_before_nanos, costAfterNanos: result.cost_after_nanos });
          audit({
            action: 'pricing.reprice', objectType: 'price', objectId: model,
            before: { cost_nanos: result.cost_before_nanos }, after: { cost_nanos: result.cost_after_nanos, changed_rows: result.changed_rows, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() },
          });
        } else {
          audit(false);
        }
        return json(200, {
          ...result,
          cost_before_usd: usd(result.cost_before_nanos),
          cost_after_usd: usd(result.cost_after_nanos),
          spend: result.spend.map((s) => ({ ...s, spent_before_usd: usd(s.spent_before_nanos), spent_after_usd: usd(s.spent_after_nanos) })),
        });
      },
    },
  ];
}
