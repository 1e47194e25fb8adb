/**
 * The price book: `model_pricing` served from memory. All rows are read once (one query) and kept in
 * a Map by model id; lookups by (provider, model), misses included, are remembered (`LookupCache`), so
 * the hot path is one cache hit. Both are dropped by `invalidate()` and when another process (the CLI)
 * commits to the database; the next lookup reads the table again. On SQLite that read is synchronous;
 * on PostgreSQL it is a Promise, and until it resolves lookups answer from an empty table without
 * remembering it: callers that bill await `ready(provider, model)` first, which waits for it.
 *
 * A price applies to provider P when its row's `provider` is null (any provider) or P. Lookup order
 * for (provider, model):
 * 1. the row `provider/model` (a price for that provider only);
 * 2. the row `model`;
 * 3. the dataset's canonical id of `model` (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`), through the
 *    provider's dataset id (config `datasetProviders`), as `provider/id` then `id`;
 * 4. a provider in `freeProviders` (local models) → a zero price with source `free`;
 * otherwise null: the request is served but unpriced.
 *
 * The dataset's matcher (step 3) holds ~16 MB and is loaded on the first lookup that needs it, not at
 * start: requests for models with their own rows never load it. Until it is loaded, such a lookup
 * answers without step 3 and is not remembered; callers that bill await `ready(provider, model)` first.
 */
import type { Store } from '../../core/store/store.ts';
import type { Log } from '../../core/runtime/log.ts';
import type { PriceBook } from '../../core/services.ts';
import { costOf, maxCostNanos } from '../../core/money/cost.ts';
import { createPriceReader, toModelPrice, type ModelPrice } from '../../core/money/price-table.ts';
import type { ModelIdResolver } from '../../core/money/price-dataset.ts';

export interface PriceBookConfig {
  datasetProviders: Readonly<Record<string, string>>;
  freeProviders: readonly string[];
  /** Loads dated-name matching (`createModelIdResolver()`), on first need; absent = step 3 is skipped. */
  loadResolver?: () => Promise<ModelIdResolver | undefined>;
}

/** The price book plus what its owner needs to shut it down. */
export interface ClosablePriceBook extends PriceBook {
  /** Resolves once `list()` and `priceFor` see the stored table (PostgreSQL loads it asynchronously); null when they do. Never rejects. */
  tableReady(): Promise<void> | null;
  /** Stops listening for other processes' changes. */
  close(): void;
}

const LOOKUP_CACHE_SIZE = 10_000;

/**
 * Lookups by provider, then model: no key string built per lookup (the hot path looks up each
 * request's target two or three times). Past `LOOKUP_CACHE_SIZE` entries it starts over; cheaper per
 * hit than an LRU, and the set of models in use is far smaller.
 */
class LookupCache {
  private readonly byProvider = new Map<string, Map<string, ModelPrice | false>>();
  private size = 0;

  get(provider: string, model: string): ModelPrice | false | undefined {
    return this.byProvider.get(provider)?.get(model);
  }

  set(provider: string, model: string, price: ModelPrice | false): void {
    if (this.size >= LOOKUP_CACHE_SIZE) this.clear();
    let models = this.byProvider.get(provider);
    if (!models) this.byProvider.set(provider, (models = new Map<string, false | ModelPrice>()));
    if (!models.has(model)) this.size++;
    models.set(model, price);
  }

  clear(): void {
    this.byProvider.clear();
    this.size = 0;
  }
}

function freePrice(provider: string, model: string): ModelPrice {
  return Object.freeze({
    model, provider, input_price_per_million: 0, output_price_per_million: 0,
    cached_input_price_per_million: null, cache_write_price_per_million: null, source: 'free' as const,
  });
}

export function createPriceBook(store: Store, config: PriceBookConfig, log: Log): ClosablePriceBook {
  const readRows = createPriceReader(store);
  const free = new Set(config.freeProviders);
  const lookups = new LookupCache();
  let rows: Map<string, ModelPrice> | null = null;
  /** The asynchronous read of the table in progress (PostgreSQL), and which invalidation it follows. */
  let rowsLoading: Promise<void> | null = null;
  let rowsGeneration = 0;
  /** undefined: not loaded (yet); null: none (not configured, or the load failed). */
  let resolveModelId: ModelIdResolver | null | undefined = config.loadResolver ? undefined : null;
  let loading: Promise<void> | null = null;

  /** Loads the matcher once; resolves when it is usable (or known to be absent). */
  function loadResolver(): Promise<void> | null {
    if (resolveModelId !== undefined) return null;
    loading ??= config.loadResolver!().then(
      (resolver) => {
        resolveModelId = resolver ?? null;
        lookups.clear();
      },
      (err: unknown) => {
        log.warn('pricing: the price dataset could not be loaded; dated model names will not match their prices', { err: String(err) });
        resolveModelId = null;
      },
    );
    return loading;
  }

  function install(list: readonly ModelPrice[]): void {
    rows = new Map(list.map((row) => [row.model, Object.freeze(toModelPrice(row))]));
    log.debug('pricing: loaded prices', { rows: rows.size });
  }

  /**
   * Reads the table if it is not loaded: at once on SQLite (null), else the read in progress. A read
   * overtaken by an invalidation is read again, so whoever awaits it sees the newer table.
   */
  function loadTable(): Promise<void> | null {
    if (rows) return null;
    if (rowsLoading) return rowsLoading;
    const read = readRows();
    if (!(read instanceof Promise)) {
      install(read);
      return null;
    }
    const generation = rowsGeneration;
    const loading: Promise<void> = read.then(
      (list) => {
        if (rowsLoading === loading) rowsLoading = null;
        if (generation === rowsGeneration) install(list);
        else return loadTable() ?? undefined;
      },
      (err: unknown) => {
        if (rowsLoading === loading) rowsLoading = null;
        log.warn('pricing: could not read the price table; requests stay unpriced until it can', { err: String(err) });
      },
    );
    rowsLoading = loading;
    return loading;
  }

  /** The loaded table; empty while PostgreSQL reads it. */
  function table(): Map<string, ModelPrice> {
    // Fire and forget: a failed read is logged in loadTable, and the next call reads again.
    void loadTable();
    return rows ?? new Map<string, ModelPrice>();
  }

  function row(id: string, provider: string): ModelPrice | null {
    const price = table().get(id);
    return price && (price.provider === null || price.provider === provider) ? price : null;
  }

  function canonicalId(provider: string, model: string): string | null {
    const datasetId = config.datasetProviders[provider];
    if (!datasetId || !resolveModelId) return null;
    const id = resolveModelId(datasetId, model);
    return id && id !== model ? id : null;
  }

  const exactRow = (provider: string, model: string) => row(`${provider}/${model}`, provider) ?? row(model, provider);
  /** Would a lookup of (provider, model) consult the matcher, which is not loaded yet? */
  const needsResolver = (provider: string, model: string) =>
    resolveModelId === undefined && config.datasetProviders[provider] !== undefined && !exactRow(provider, model);

  function resolve(provider: string, model: string): ModelPrice | null {
    const exact = exactRow(provider, model);
    if (exact) return exact;
    const canonical = canonicalId(provider, model);
    const matched = canonical ? row(`${provider}/${canonical}`, provider) ?? row(canonical, provider) : null;
    if (matched) return matched;
    return free.has(provider) ? freePrice(provider, model) : null;
  }

  const invalidate = () => {
    rows = null;
    rowsGeneration++;
    lookups.clear();
  };
  const unsubscribe = store.onExternalChange(invalidate);

  const book: ClosablePriceBook = {
    datasetProviders: config.datasetProviders,
    priceFor(provider, model) {
      const cached = lookups.get(provider, model);
      if (cached !== undefined) return cached || null;
      const price = resolve(provider, model);
      // Without the table or the matcher the answer may change once it is loaded: not remembered, and the load starts.
      if (!rows) return price;
      if (needsResolver(provider, model)) void loadResolver();
      else lookups.set(provider, model, price ?? false);
      return price;
    },
    ready(provider, model) {
      // A remembered lookup is final (the table and, if it needs it, the matcher were loaded): nothing to wait for.
      if (provider !== undefined && model !== undefined && rows && lookups.get(provider, model) !== undefined) return null;
      const loading = loadTable();
      if (loading) return loading.then(() => book.ready(provider, model) ?? undefined);
      if (provider === undefined || model === undefined) return config.loadResolver ? loadResolver() : null;
      return needsResolver(provider, model) ? loadResolver() : null;
    },
    tableReady: loadTable,
    costOf,
    maxCostNanos,
    list: () => [...table().values()],
    invalidate,
    close: unsubscribe,
  };
  return book;
}
