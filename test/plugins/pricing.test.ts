/**
 * The pricing plugin: the price store (manual wins over import), the dataset mapping, the price
 * book's lookup order and cache invalidation, the cost set when a response ends, and
 * `GET /api/pricing` through the whole gateway, with a price changed by the real CLI meanwhile.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { findProvider } from '@pydantic/genai-prices';
import type { Store } from '../../core/store/store.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { createLog } from '../../core/runtime/log.ts';
import { createServiceRegistry, type ServiceRegistry } from '../../core/services.ts';
import type { PluginContext, Plugin } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import type { TokenCounts } from '../../core/canonical/chat-types.ts';
import type { PriceBook } from '../../core/services.ts';
import { per1k } from '../../core/money/money.ts';
import { datasetModelId, datasetPrices, datasetPricesApart, DEFAULT_DATASET_PROVIDERS, priceInEffect } from '../../core/money/price-dataset.ts';
import { deletePrice, getPrice, importPrices, listPrices, PriceValidationError, setPrice } from '../../core/money/price-table.ts';
import { pricing } from '../../plugins/pricing/index.ts';
import { createPriceBook, type ClosablePriceBook } from '../../plugins/pricing/price-book.ts';
import type { PricingConfig } from '../../plugins/pricing/schema.ts';
import { startOpenAISimulator, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually } from '../helpers/eventually.ts';

const silentLog = createLog('error', () => {});
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
});

/** A store on a fresh data dir (on PostgreSQL runs, a fresh database), and the data dir. */
async function freshStore(): Promise<Store & { dataDir: string }> {
  const dataDir = tempDir();
  const store = await openTestStore(dataDir);
  stores.push(store);
  return Object.assign(store, { dataDir });
}

const NOW_MS = Date.parse('2026-06-01T00:00:00Z');

describe('pricing store', () => {
  test('set, get, list and delete a manual price; absent optional prices are null', async () => {
    const { db } = await freshStore();
    const row = await setPrice(db, { model: 'my-model', input_price_per_million: 1.5, output_price_per_million: 2 }, NOW_MS);
    assert.deepEqual(row, {
      model: 'my-model', provider: null, input_price_per_million: 1.5, output_price_per_million: 2,
      cached_input_price_per_million: null, cache_write_price_per_million: null, source: 'manual', updated_at: '2026-06-01T00:00:00.000Z',
    });
    assert.deepEqual(await getPrice(db, 'my-model'), row);
    await setPrice(db, { model: 'my-model', provider: 'openai', input_price_per_million: 3, output_price_per_million: 4, cached_input_price_per_million: 0.3 }, NOW_MS);
    assert.deepEqual((await listPrices(db)).map((r) => [r.model, r.provider, r.input_price_per_million, r.cached_input_price_per_million]), [['my-model', 'openai', 3, 0.3]]);
    assert.equal(await deletePrice(db, 'my-model'), true);
    assert.equal(await deletePrice(db, 'my-model'), false);
    assert.equal(await getPrice(db, 'my-model'), null);
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['a missing model', { input_price_per_million: 1, output_price_per_million: 1 }, /^model is required/],
    ['a negative input price', { model: 'm', input_price_per_million: -1, output_price_per_million: 1 }, /^input_price_per_million must be a non-negative number of USD per million tokens, got -1$/],
    ['a string output price', { model: 'm', input_price_per_million: 1, output_price_per_million: '1' }, /^output_price_per_million must be a non-negative number of USD per million tokens, got "1"$/],
    ['a missing output price', { model: 'm', input_price_per_million: 1 }, /^output_price_per_million is required/],
    ['a price above 100,000 USD per million', { model: 'm', input_price_per_million: 2e15, output_price_per_million: 1 }, /^input_price_per_million must be at most 100000 USD per million tokens, got 2000000000000000$/],
    ['a cache-write price above the bound', { model: 'm', input_price_per_million: 1, output_price_per_million: 1, cache_write_price_per_million: 100_000.01 }, /^cache_write_price_per_million must be at most 100000/],
    ['an infinite cached price', { model: 'm', input_price_per_million: 1, output_price_per_million: 1, cached_input_price_per_million: Infinity }, /^cached_input_price_per_million must be a non-negative number/],
    ['a provider that is not an id', { model: 'm', provider: 'Open AI', input_price_per_million: 1, output_price_per_million: 1 }, /^provider must be a provider id such as "openai"/],
  ];
  for (const [what, input, message] of invalid) {
    test(`setPrice refuses ${what} with a message naming the field`, async () => {
      const { db } = await freshStore();
      await assert.rejects(setPrice(db, input as never), (err: unknown) => err instanceof PriceValidationError && message.test(err.message));
      assert.deepEqual(await listPrices(db), []);
    });
  }

  test('an import never overwrites a manual price and counts what it skipped', async () => {
    const { db } = await freshStore();
    await setPrice(db, { model: 'gpt-4o-mini', input_price_per_million: 9, output_price_per_million: 9 });
    const first = await importPrices(db, [
      { model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6 },
      { model: 'gpt-4o', provider: 'openai', input_price_per_million: 2.5, output_price_per_million: 10 },
      { model: null, input_price_per_million: 1, output_price_per_million: 1 },
      { model: '', input_price_per_million: 1, output_price_per_million: 1 },
      { model: 'bad', input_price_per_million: Number.NaN, output_price_per_million: 1 },
      'not an object',
    ]);
    assert.deepEqual(first, { inserted: 1, updated: 0, skippedManual: 1, skippedInvalid: 4 });
    const second = await importPrices(db, [{ model: 'gpt-4o', provider: 'openai', input_price_per_million: 2, output_price_per_million: 8 }]);
    assert.deepEqual(second, { inserted: 0, updated: 1, skippedManual: 0, skippedInvalid: 0 });
    const rows = await listPrices(db);
    assert.deepEqual(rows.map((r) => [r.model, r.input_price_per_million, r.source]), [['gpt-4o', 2, 'import'], ['gpt-4o-mini', 9, 'manual']]);
  });
});

describe('price dataset', () => {
  test('takes the conditional price in effect: the latest start date not in the future', () => {
    const prices = [
      { prices: { input_mtok: 1 } },
      { constraint: { type: 'start_date' as const, start_date: '2026-01-01' }, prices: { input_mtok: 2 } },
      { constraint: { type: 'start_date' as const, start_date: '2026-05-01' }, prices: { input_mtok: 3 } },
      { constraint: { type: 'start_date' as const, start_date: '2027-01-01' }, prices: { input_mtok: 4 } },
      { constraint: { type: 'time_of_date' as const, start_time: '00:00:00Z', end_time: '08:00:00Z' }, prices: { input_mtok: 0.5 } },
    ];
    assert.deepEqual(priceInEffect(prices, NOW_MS), { input_mtok: 3 });
    assert.deepEqual(priceInEffect(prices, Date.parse('2025-12-31T00:00:00Z')), { input_mtok: 1 }, 'before any start date: the unconstrained price');
    assert.deepEqual(priceInEffect({ input_mtok: 7 }, NOW_MS), { input_mtok: 7 });
  });

  test('maps dataset providers to gateway ids, takes tiered prices at their base, and keeps colliding ids per provider', async () => {
    const { rows, unknownProviders } = await datasetPrices({ ...DEFAULT_DATASET_PROVIDERS, nowhere: 'no-such-provider' }, NOW_MS);
    assert.deepEqual(unknownProviders, ['nowhere']);
    const byModel = new Map(rows.map((r) => [r.model, r]));
    assert.equal(byModel.size, rows.length, 'model ids are unique');
    assert.deepEqual(byModel.get('gpt-4o-mini'), {
      model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6,
      cached_input_price_per_million: 0.075, cache_write_price_per_million: null,
    });
    assert.equal(byModel.get('gemini-2.0-flash')?.provider, 'gemini', 'the dataset\'s "google" is our "gemini"');

    const tiered = findProvider({ providerId: 'openai' })!.models.find((m) => !Array.isArray(m.prices) && typeof m.prices.input_mtok === 'object');
    assert.ok(tiered, 'the dataset has a tiered price to check');
    assert.equal(byModel.get(tiered.id)?.input_price_per_million, (tiered.prices as unknown as { input_mtok: { base: number } }).input_mtok.base);

    // Google (Vertex) also lists Claude models: Anthropic, first in the config, keeps the bare id.
    assert.equal(byModel.get('claude-3-5-sonnet')?.provider, 'anthropic');
    assert.equal(byModel.get('gemini/claude-3-5-sonnet')?.provider, 'gemini');
  });

  test('datasetPricesApart reads the same rows in a child process that answers and exits', async () => {
    const providers = { ...DEFAULT_DATASET_PROVIDERS, nowhere: 'no-such-provider' };
    const before = new Set(childPids());
    const apart = await datasetPricesApart(providers, NOW_MS);
    assert.deepEqual(apart, await datasetPrices(providers, NOW_MS));
    // The child disconnects once its answer is sent; its exit is reaped a moment later (waited for up to
    // 30 s: a liveness bound, as a busy machine may take seconds to end a process).
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && childPids().some((pid) => !before.has(pid));) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(childPids().filter((pid) => !before.has(pid)), [], 'no dataset process left running');
  });

  test('finds the canonical id of a dated model name with the library\'s own matching', async () => {
    assert.equal(await datasetModelId('anthropic', 'claude-3-5-haiku-20241022'), 'claude-3-5-haiku-latest');
    assert.equal(await datasetModelId('openai', 'gpt-4o-mini-2024-07-18'), 'gpt-4o-mini');
    assert.equal(await datasetModelId('openai', 'no-such-model-anywhere'), null);
  });
});

/** Live child processes of this process (Linux /proc), by pid. */
function childPids(): number[] {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function usage(promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0): TokenCounts {
  return { promptTokens, completionTokens, cachedTokens, cacheWriteTokens };
}

describe('price book', () => {
  test('looks up provider/model, then model for its provider, then the canonical id, then free providers', async () => {
    const store = await freshStore();
    await importPrices(store.db, [
      { model: 'shared-model', input_price_per_million: 1, output_price_per_million: 1 },
      { model: 'groq/shared-model', provider: 'groq', input_price_per_million: 2, output_price_per_million: 2 },
      { model: 'openai-only', provider: 'openai', input_price_per_million: 3, output_price_per_million: 3 },
      { model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6 },
    ]);
    const resolveModelId = (datasetProvider: string, model: string) => (datasetProvider === 'openai' && model === 'gpt-4o-mini-2024-07-18' ? 'gpt-4o-mini' : null);
    const book = createPriceBook(store, { datasetProviders: { openai: 'openai' }, freeProviders: ['ollama'], loadResolver: async () => resolveModelId }, silentLog);
    try {
      // PostgreSQL reads the table asynchronously (null at once on SQLite).
      await book.tableReady();
      // The matcher loads on first need: a dated name is unpriced until then, and ready() says when it is not.
      assert.equal(book.ready('openai', 'shared-model'), null, 'a model with its own row never waits');
      const loading = book.ready('openai', 'gpt-4o-mini-2024-07-18');
      assert.ok(loading, 'a dated name waits for the matcher');
      await loading;
      assert.equal(book.ready('openai', 'gpt-4o-mini-2024-07-18'), null);
      assert.equal(book.priceFor('openai', 'shared-model')?.input_price_per_million, 1, 'a row without provider applies to any provider');
      assert.equal(book.priceFor('groq', 'shared-model')?.input_price_per_million, 2, 'provider/model wins');
      assert.equal(book.priceFor('openai', 'openai-only')?.input_price_per_million, 3);
      assert.equal(book.priceFor('together', 'openai-only'), null, "another provider's row does not apply");
      assert.equal(book.priceFor('openai', 'gpt-4o-mini-2024-07-18')?.model, 'gpt-4o-mini', 'a dated name finds its canonical row');
      assert.deepEqual(book.priceFor('ollama', 'llama3.2:latest'), {
        model: 'llama3.2:latest', provider: 'ollama', input_price_per_million: 0, output_price_per_million: 0,
        cached_input_price_per_million: null, cache_write_price_per_million: null, source: 'free',
      });
      assert.equal(book.priceFor('openai', 'unknown-model'), null);
      assert.deepEqual(book.list().map((p) => p.model), ['gpt-4o-mini', 'groq/shared-model', 'openai-only', 'shared-model']);
    } finally {
      book.close();
    }
  });

  test('serves remembered lookups, misses included, until invalidated', async () => {
    const store = await freshStore();
    const book = createPriceBook(store, { datasetProviders: {}, freeProviders: [] }, silentLog);
    try {
      await book.tableReady();
      assert.equal(book.priceFor('openai', 'later-model'), null);
      await setPrice(store.db, { model: 'later-model', input_price_per_million: 1, output_price_per_million: 2 });
      assert.equal(book.priceFor('openai', 'later-model'), null, 'the miss is cached (same connection: no external change)');
      book.invalidate();
      await book.tableReady();
      assert.equal(book.priceFor('openai', 'later-model')?.output_price_per_million, 2);
    } finally {
      book.close();
    }
  });

  test("sees another process's commit without being told", async () => {
    const store = await freshStore();
    const book = createPriceBook(store, { datasetProviders: {}, freeProviders: [] }, silentLog);
    const other = await openTestStore(store.dataDir);
    stores.push(other);
    try {
      await book.tableReady();
      assert.equal(book.priceFor('openai', 'cli-model'), null);
      await setPrice(other.db, { model: 'cli-model', input_price_per_million: 4, output_price_per_million: 5 });
      // What the CLI does after a command: on SQLite it reaches no listener of this book (the book
      // notices by polling data_version); on PostgreSQL the NOTIFY is the only signal. The book's
      // LISTEN connection opens in the background, and a NOTIFY sent before it listens is heard by
      // no one (a loaded CI machine lost the first one): notify again until the book has seen it.
      await eventually(async () => {
        other.notifyChange();
        await book.tableReady();
        assert.equal(book.priceFor('openai', 'cli-model')?.input_price_per_million, 4);
      });
    } finally {
      book.close();
    }
  });
});

function pluginContext(store: Store, services: ServiceRegistry, log = silentLog): PluginContext {
  return { store, log, clock: () => NOW_MS, services } as unknown as PluginContext;
}

const defaults: PricingConfig = { seedOnFirstStart: true, datasetProviders: { ...DEFAULT_DATASET_PROVIDERS }, freeProviders: ['ollama'] };

function exchange(fields: Partial<Exchange>): Exchange {
  return { operation: 'chat.completions', target: null, usage: null, modelServed: null, cost: null, ...fields } as Exchange;
}

describe('the pricing plugin', () => {
  let store: Store;
  let plugin: Plugin<unknown>;
  let book: PriceBook;
  const logLines: string[] = [];

  before(async () => {
    store = await freshStore();
    const services = createServiceRegistry();
    plugin = await pricing.create(defaults, pluginContext(store, services, createLog('info', (l) => logLines.push(l))));
    book = services.get('pricing')!;
  });
  after(() => plugin.close?.());

  test('seeds an empty table from the dataset at first start and says how many rows', async () => {
    const rows = await listPrices(store.db);
    assert.ok(rows.length > 500, `${rows.length} rows`);
    assert.ok(rows.every((r) => r.source === 'import'));
    const seeded = logLines.map((l) => JSON.parse(l)).find((l) => l.msg.startsWith('pricing: seeded'));
    assert.equal(seeded?.inserted, rows.length);
  });

  test('does not seed again when the table has rows', async () => {
    const other = await freshStore();
    await setPrice(other.db, { model: 'only-this', input_price_per_million: 1, output_price_per_million: 1 });
    const again = await pricing.create(defaults, pluginContext(other, createServiceRegistry()));
    await again.close?.();
    assert.deepEqual((await listPrices(other.db)).map((r) => r.model), ['only-this']);
  });

  test('sets the exact cost of an OpenAI-shaped usage when a chat completion ends', async () => {
    const ex = exchange({ target: { provider: 'openai', model: 'gpt-4o-mini' }, usage: usage(19, 24, 3) });
    await plugin.onResponseEnd!(ex, undefined);
    // 16 × 150 + 3 × 75 + 24 × 600 nanos (gpt-4o-mini: $0.15 in, $0.075 cached, $0.60 out per million).
    const { price, ...figures } = ex.cost!;
    assert.deepEqual(figures, { totalNanos: 17_025, inputNanos: 2_400, cachedInputNanos: 225, cacheWriteNanos: 0, outputNanos: 14_400, unpriced: false });
    // The price billed is kept with the figures (the log row's billed_price).
    assert.equal(price?.model, 'gpt-4o-mini');
    assert.equal(price?.input_price_per_million, 0.15);
  });

  test('the first request for a dated name is priced: the hook waits for the dataset\'s matcher, loaded on that need', async () => {
    const services = createServiceRegistry();
    const fresh = await pricing.create(defaults, pluginContext(store, services, createLog('error')));
    try {
      const freshBook = services.get('pricing')! as ClosablePriceBook;
      await freshBook.tableReady();
      assert.equal(freshBook.ready('anthropic', 'claude-3-5-haiku-latest'), null, 'a name with its own row never waits');
      const ex = exchange({ target: { provider: 'anthropic', model: 'claude-3-5-haiku-20241022' }, usage: usage(100, 10) });
      await fresh.onResponseEnd!(ex, undefined);
      assert.equal(ex.cost?.unpriced, false);
      assert.equal(ex.cost?.price?.model, 'claude-3-5-haiku-latest');
    } finally {
      await fresh.close?.();
    }
  });

  test('prices a dated Anthropic name by its imported row, cache reads and writes at their own rates', async () => {
    // A dated name needs the dataset's matcher, loaded on first need.
    await book.ready('anthropic', 'claude-3-5-haiku-20241022');
    const price = book.priceFor('anthropic', 'claude-3-5-haiku-20241022');
    assert.equal(price?.model, 'claude-3-5-haiku-latest');
    const ex = exchange({ target: { provider: 'anthropic', model: 'claude-3-5-haiku-20241022' }, usage: usage(2600, 300, 2000, 500) });
    await plugin.onResponseEnd!(ex, undefined);
    const expected = book.costOf(price, usage(2600, 300, 2000, 500));
    assert.deepEqual(ex.cost, expected);
    assert.equal(ex.cost.cachedInputNanos, 2000 * Math.round(price.cached_input_price_per_million! * 1e9) / 1e6);
    assert.equal(ex.cost.cacheWriteNanos, 500 * Math.round(price.cache_write_price_per_million! * 1e9) / 1e6);
  });

  test('falls back to the model the upstream says it served', async () => {
    const ex = exchange({ target: { provider: 'openai', model: 'my-alias' }, modelServed: 'gpt-4o-mini-2024-07-18', usage: usage(1, 1) });
    await plugin.onResponseEnd!(ex, undefined);
    assert.deepEqual([ex.cost?.inputNanos, ex.cost?.outputNanos, ex.cost?.unpriced], [150, 600, false]);
  });

  test('bills ollama at zero and marks an unknown model unpriced', async () => {
    const free = exchange({ target: { provider: 'ollama', model: 'llama3.2:latest' }, usage: usage(100, 100) });
    const unknown = exchange({ target: { provider: 'openai', model: 'no-such-model' }, usage: usage(100, 100) });
    await plugin.onResponseEnd!(free, undefined);
    await plugin.onResponseEnd!(unknown, undefined);
    assert.deepEqual([free.cost?.totalNanos, free.cost?.unpriced], [0, false]);
    assert.deepEqual([unknown.cost?.totalNanos, unknown.cost?.unpriced], [0, true]);
  });

  test('leaves the cost unset when nothing was billed or the operation is not a completion', async () => {
    const noUsage = exchange({ target: { provider: 'openai', model: 'gpt-4o-mini' } });
    const noTarget = exchange({ usage: usage(1, 1) });
    const models = exchange({ operation: 'models.list', target: { provider: 'openai', model: 'gpt-4o-mini' }, usage: usage(1, 1) });
    for (const ex of [noUsage, noTarget, models]) {
      await plugin.onResponseEnd!(ex, undefined);
      assert.equal(ex.cost, null);
    }
  });

  test('answers only GET /api/pricing itself', async () => {
    assert.equal(await plugin.onRequest!(exchange({}), undefined), undefined);
    const answer = await plugin.onRequest!(exchange({ operation: 'pricing.list' }), undefined);
    assert.equal(answer?.status, 200);
  });
});

describe('GET /api/pricing through the gateway', () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;

  before(async () => {
    sim = await startOpenAISimulator({ models: ['gpt-4o-mini'] });
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } } });
  });
  after(async () => {
    await tg?.close();
    await sim?.close();
  });

  interface PricingItem {
    model: string;
    provider: string | null;
    display_name: string;
    input_price_per_1k: number;
    output_price_per_1k: number;
    cached_input_price_per_1k: number | null;
    cache_write_price_per_1k: number | null;
    input_price_per_million: number;
    output_price_per_million: number;
    cached_input_price_per_million: number | null;
    cache_write_price_per_million: number | null;
    source: string;
  }

  async function listPricing(): Promise<PricingItem[]> {
    const res = await fetch(`${tg.gateway.origin}/api/pricing`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { object: string; data: PricingItem[] };
    assert.equal(body.object, 'list');
    return body.data;
  }

  test('lists the seeded prices with display names and per-1k prices without float noise', async () => {
    const data = await listPricing();
    const mini = data.find((p) => p.model === 'gpt-4o-mini');
    assert.deepEqual(mini, {
      model: 'gpt-4o-mini', provider: 'openai', display_name: 'GPT 4o Mini',
      input_price_per_1k: 0.00015, output_price_per_1k: 0.0006, cached_input_price_per_1k: 0.000075, cache_write_price_per_1k: null,
      input_price_per_million: 0.15, output_price_per_million: 0.6, cached_input_price_per_million: 0.075, cache_write_price_per_million: null,
      source: 'import',
    });
    for (const item of data) {
      assert.equal(typeof item.model, 'string');
      assert.equal(item.input_price_per_1k, per1k(item.input_price_per_million));
      assert.equal(item.output_price_per_1k, per1k(item.output_price_per_million));
    }
    assert.deepEqual(data.map((p) => p.model), [...data.map((p) => p.model)].sort(), 'sorted by model');
  });

  test('refuses a caller without an API key', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/pricing`);
    assert.equal(res.status, 401);
  });

  test('shows a price set with the CLI while the gateway runs, and the completion still succeeds', async () => {
    const set = await runCli(['pricing', 'set', 'gpt-4o-mini', '--input', '0.3', '--output', '1.2', '--cached-input', '0.03'], { dataDir: tg.dataDir });
    assert.equal(set.code, 0, set.stderr);
    await eventually(async () => {
      const mini = (await listPricing()).find((p) => p.model === 'gpt-4o-mini');
      assert.deepEqual([mini?.source, mini?.provider, mini?.input_price_per_1k, mini?.output_price_per_1k, mini?.cached_input_price_per_1k], ['manual', null, 0.0003, 0.0012, 0.00003]);
    });
    const completion = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.usage?.prompt_tokens, SIM_USAGE.prompt_tokens);
  });
});
