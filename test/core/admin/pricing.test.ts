/**
 * `/admin/api/pricing`: list and search, create, replace, delete, import from the bundled dataset,
 * the cost calculator with exact nano figures, unpriced models seen in traffic, and a price set here
 * billing the very next real request (the in-process price book is invalidated on every write).
 */
import { writeLogRows } from '../../helpers/log-rows.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, manualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';
import { datasetPrices, DEFAULT_DATASET_PROVIDERS } from '../../../core/money/price-dataset.ts';
import { listPrices, validatePrice, type ModelPrice } from '../../../core/money/price-table.ts';
import { listUnpricedModels } from '../../../core/admin/unpriced-models.ts';
import type { AdminContext } from '../../../core/admin/context.ts';
import type { Store } from '../../../core/store/store.ts';
import { openTestStore } from '../../helpers/test-store.ts';
import { createServiceRegistry } from '../../../core/services.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { tempDir } from '../../helpers/tmp.ts';

const NOW_MS = Date.parse('2026-11-20T10:00:00.000Z');
const NOW_ISO = new Date(NOW_MS).toISOString();
const EVIL = { origin: 'http://evil.example' };
const NO_SESSION = { cookie: null };
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  const dataDir = await dataDirWithPrices([
    { model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 },
    { model: 'calc-model', input: 2.5, output: 10, cachedInput: 1.25 },
  ]);
  tg = await startTestGateway({
    dataDir,
    clock: manualClock(NOW_MS),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk' } },
    config: { pricing: { seedOnFirstStart: false } },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

/** The stored row's `updated_at` (rows written by `dataDirWithPrices` carry the real time). */
async function updatedAt(model: string): Promise<string> {
  const row = await tg.gateway.store.db.selectFrom('model_pricing').select('updated_at').where('model', '=', model).executeTakeFirstOrThrow();
  return row.updated_at;
}

describe('listing and searching prices', () => {
  test('lists every stored row as a Price object, sorted by model', async () => {
    const res = await admin.get('/admin/api/pricing');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, [
      {
        model: 'calc-model', provider: null, input_price_per_million: 2.5, output_price_per_million: 10,
        cached_input_price_per_million: 1.25, cache_write_price_per_million: null, source: 'manual', updated_at: await updatedAt('calc-model'),
      },
      {
        model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6,
        cached_input_price_per_million: 0.075, cache_write_price_per_million: null, source: 'manual', updated_at: await updatedAt('gpt-4o-mini'),
      },
    ]);
    assert.deepEqual(res.body.unpriced, []);
  });

  test('search matches model or provider, case-insensitively, and treats % and _ literally', async () => {
    assert.deepEqual((await admin.get('/admin/api/pricing?search=CALC')).body.data.map((p: any) => p.model), ['calc-model']);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=openai')).body.data.map((p: any) => p.model), ['gpt-4o-mini']);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=%25')).body.data, []);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=_')).body.data, []);
    assert.equal((await admin.get('/admin/api/pricing?search=')).body.data.length, 2);
  });

  test('answers 401 without a session', async () => {
    assertError(await admin.get('/admin/api/pricing', NO_SESSION), 401, 'session_required', null);
  });
});

describe('creating, replacing and deleting prices', () => {
  test('POST creates a manual price and answers 201 with it', async () => {
    const res = await admin.post('/admin/api/pricing', {
      model: 'new-model', provider: 'openai', input_price_per_million: 1, output_price_per_million: 4, cache_write_price_per_million: 1.25,
    });
    assert.equal(res.status, 201);
    const expected = {
      model: 'new-model', provider: 'openai', input_price_per_million: 1, output_price_per_million: 4,
      cached_input_price_per_million: null, cache_write_price_per_million: 1.25, source: 'manual', updated_at: NOW_ISO,
    };
    assert.deepEqual(res.body, expected);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=new-model')).body.data, [expected]);
  });

  test('POST for a model that has a row answers 409 conflict on model and changes nothing', async () => {
    const res = await admin.post('/admin/api/pricing', { model: 'calc-model', input_price_per_million: 9, output_price_per_million: 9 });
    assertError(res, 409, 'conflict', 'model');
    assert.equal((await admin.get('/admin/api/pricing?search=calc-model')).body.data[0].input_price_per_million, 2.5);
  });

  test('POST rejects bad fields with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ input_price_per_million: 1, output_price_per_million: 1 }, 'model'],
      [{ model: '  ', input_price_per_million: 1, output_price_per_million: 1 }, 'model'],
      [{ model: 'm', output_price_per_million: 1 }, 'input_price_per_million'],
      [{ model: 'm', input_price_per_million: -1, output_price_per_million: 1 }, 'input_price_per_million'],
      [{ model: 'm', input_price_per_million: 1, output_price_per_million: '2' }, 'output_price_per_million'],
      [{ model: 'm', input_price_per_million: 1, output_price_per_million: 2e15 }, 'output_price_per_million'],
      [{ model: 'm', input_price_per_million: 1, output_price_per_million: 1, cached_input_price_per_million: -0.5 }, 'cached_input_price_per_million'],
      [{ model: 'm', input_price_per_million: 1, output_price_per_million: 1, provider: 'Open AI' }, 'provider'],
      [{ model: 'm', input_price_per_million: 1, output_price_per_million: 1, inputPrice: 1 }, 'inputPrice'],
    ];
    for (const [body, param] of cases) {
      assertError(await admin.post('/admin/api/pricing', body), 400, 'invalid_request', param);
    }
    assert.deepEqual((await admin.get('/admin/api/pricing?search=m')).body.data.filter((p: any) => p.model === 'm'), []);
  });

  test('PUT creates then replaces a price whose model id contains a slash (URL-encoded in the path)', async () => {
    const path = `/admin/api/pricing/${encodeURIComponent('openrouter/acme/model-x')}`;
    const created = await admin.put(path, { provider: 'openrouter', input_price_per_million: 3, output_price_per_million: 15 });
    assert.equal(created.status, 200);
    assert.deepEqual(created.body, {
      model: 'openrouter/acme/model-x', provider: 'openrouter', input_price_per_million: 3, output_price_per_million: 15,
      cached_input_price_per_million: null, cache_write_price_per_million: null, source: 'manual', updated_at: NOW_ISO,
    });
    // A row read by GET can be sent back as is (read-only fields are ignored); absent optional prices become null.
    const replaced = await admin.put(path, { ...created.body, input_price_per_million: 2, cached_input_price_per_million: 0.2, source: 'import' });
    assert.equal(replaced.status, 200);
    const expected = {
      model: 'openrouter/acme/model-x', provider: 'openrouter', input_price_per_million: 2, output_price_per_million: 15,
      cached_input_price_per_million: 0.2, cache_write_price_per_million: null, source: 'manual', updated_at: NOW_ISO,
    };
    assert.deepEqual(replaced.body, expected);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=acme')).body.data, [expected]);
  });

  test('PUT rejects a body model that differs from the path and bad prices, with the field as param', async () => {
    assertError(await admin.put('/admin/api/pricing/calc-model', { model: 'other', input_price_per_million: 1, output_price_per_million: 1 }), 400, 'invalid_request', 'model');
    assertError(await admin.put('/admin/api/pricing/calc-model', { input_price_per_million: 1 }), 400, 'invalid_request', 'output_price_per_million');
    assertError(await admin.put('/admin/api/pricing/calc-model', [1]), 400, 'invalid_request', null);
  });

  test('DELETE removes a price (204), then answers 404 price_not_found', async () => {
    const path = `/admin/api/pricing/${encodeURIComponent('openrouter/acme/model-x')}`;
    const res = await admin.delete(path);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.deepEqual((await admin.get('/admin/api/pricing?search=acme')).body.data, []);
    assertError(await admin.delete(path), 404, 'price_not_found', 'model');
    assertError(await admin.delete('/admin/api/pricing/never-priced'), 404, 'price_not_found', 'model');
  });

  test('every mutating route answers 401 without a session and 403 for a foreign Origin, changing nothing', async () => {
    const body = { model: 'evil', input_price_per_million: 0, output_price_per_million: 0 };
    const calc = { model: 'calc-model', input_tokens: 1, output_tokens: 1 };
    const calls: Array<[string, string, unknown]> = [
      ['POST', '/admin/api/pricing', body],
      ['PUT', '/admin/api/pricing/calc-model', { input_price_per_million: 0, output_price_per_million: 0 }],
      ['DELETE', '/admin/api/pricing/calc-model', undefined],
      ['POST', '/admin/api/pricing/import', {}],
      ['POST', '/admin/api/pricing/calculate', calc],
    ];
    for (const [method, path, payload] of calls) {
      assertError(await admin.call(method, path, payload, EVIL), 403, 'origin_mismatch', null);
      assertError(await admin.call(method, path, payload, NO_SESSION), 401, 'session_required', null);
    }
    const stored = (await admin.get('/admin/api/pricing?search=calc-model')).body.data;
    assert.equal(stored[0].input_price_per_million, 2.5);
    assert.deepEqual((await admin.get('/admin/api/pricing?search=evil')).body.data, []);
  });
});

describe('cost calculator', () => {
  test('prices 1,000,000 input tokens (200,000 cached) and 500,000 output tokens part by part', async () => {
    const res = await admin.post('/admin/api/pricing/calculate', {
      model: 'calc-model', input_tokens: 1_000_000, cached_input_tokens: 200_000, output_tokens: 500_000,
    });
    assert.equal(res.status, 200, res.text);
    // 800,000 × $2.50/M + 200,000 × $1.25/M + 500,000 × $10/M = $2 + $0.25 + $5.
    assert.deepEqual(res.body, {
      model: 'calc-model', provider: null,
      price: {
        model: 'calc-model', provider: null, input_price_per_million: 2.5, output_price_per_million: 10,
        cached_input_price_per_million: 1.25, cache_write_price_per_million: null, source: 'manual', updated_at: await updatedAt('calc-model'),
      },
      input_tokens: 1_000_000, cached_input_tokens: 200_000, cache_write_tokens: 0, output_tokens: 500_000,
      input_cost_usd: 2, cached_input_cost_usd: 0.25, cache_write_cost_usd: 0, output_cost_usd: 5,
      cost_usd: 7.25, cost_nanos: 7_250_000_000,
    });
  });

  test('bills cache writes at the input rate when the model has no cache-write price, to the nano', async () => {
    const res = await admin.post('/admin/api/pricing/calculate', {
      model: 'calc-model', input_tokens: 1_234, cached_input_tokens: 7, cache_write_tokens: 100, output_tokens: 3,
    });
    assert.equal(res.status, 200, res.text);
    // 1,127 × 2,500 + 7 × 1,250 + 100 × 2,500 + 3 × 10,000 nanos.
    assert.deepEqual(
      [res.body.input_cost_usd, res.body.cached_input_cost_usd, res.body.cache_write_cost_usd, res.body.output_cost_usd, res.body.cost_nanos, res.body.cost_usd],
      [0.0028175, 0.00000875, 0.00025, 0.00003, 3_106_250, 0.00310625],
    );
  });

  test('with a provider, resolves a dated model name through the dataset as real traffic does', async () => {
    const res = await admin.post('/admin/api/pricing/calculate', {
      model: 'gpt-4o-mini-2024-07-18', provider: 'openai', input_tokens: 1_000, cached_input_tokens: 100, output_tokens: 2_000,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.model, 'gpt-4o-mini-2024-07-18');
    assert.equal(res.body.provider, 'openai');
    assert.deepEqual(res.body.price, {
      model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6,
      cached_input_price_per_million: 0.075, cache_write_price_per_million: null, source: 'manual', updated_at: await updatedAt('gpt-4o-mini'),
    });
    // 900 × 150 + 100 × 75 + 2,000 × 600 nanos.
    assert.equal(res.body.cost_nanos, 135_000 + 7_500 + 1_200_000);
    assert.deepEqual([res.body.input_cost_usd, res.body.cached_input_cost_usd, res.body.output_cost_usd], [0.000135, 0.0000075, 0.0012]);
  });

  test('answers 404 model_not_found for a model without a price, and for a dated name without a provider', async () => {
    assertError(await admin.post('/admin/api/pricing/calculate', { model: 'no-such-model', input_tokens: 1, output_tokens: 1 }), 404, 'model_not_found', 'model');
    assertError(await admin.post('/admin/api/pricing/calculate', { model: 'gpt-4o-mini-2024-07-18', input_tokens: 1, output_tokens: 1 }), 404, 'model_not_found', 'model');
    assertError(await admin.post('/admin/api/pricing/calculate', { model: 'gpt-4o-mini', provider: 'mistral', input_tokens: 1, output_tokens: 1 }), 404, 'model_not_found', 'model');
  });

  test('rejects missing, negative, fractional and inconsistent token counts with 400 naming the field', async () => {
    const base = { model: 'calc-model', input_tokens: 10, output_tokens: 10 };
    const cases: Array<[unknown, string]> = [
      [{ input_tokens: 10, output_tokens: 10 }, 'model'],
      [{ ...base, model: 5 }, 'model'],
      [{ model: 'calc-model', output_tokens: 10 }, 'input_tokens'],
      [{ model: 'calc-model', input_tokens: 10 }, 'output_tokens'],
      [{ ...base, output_tokens: -1 }, 'output_tokens'],
      [{ ...base, input_tokens: 1.5 }, 'input_tokens'],
      [{ ...base, output_tokens: 1e22 }, 'output_tokens'],
      [{ ...base, input_tokens: 10_000_001 }, 'input_tokens'],
      [{ ...base, cached_input_tokens: '3' }, 'cached_input_tokens'],
      [{ ...base, cache_write_tokens: -2 }, 'cache_write_tokens'],
      [{ ...base, cached_input_tokens: 6, cache_write_tokens: 5 }, 'cached_input_tokens'],
      [{ ...base, cached_input_tokens: 11 }, 'cached_input_tokens'],
      [{ ...base, provider: '' }, 'provider'],
      [{ ...base, tokens: 3 }, 'tokens'],
    ];
    for (const [body, param] of cases) {
      assertError(await admin.post('/admin/api/pricing/calculate', body), 400, 'invalid_request', param);
    }
  });
});

describe('prices and real traffic', () => {
  test('a model served without a price is listed as unpriced, and a price set here bills the very next request', async () => {
    const first = await tg.client.chat.completions.create({ model: 'openai/gpt-4o', messages }).withResponse();
    const unpricedRow = await tg.logRow(first.response.headers.get('x-request-id')!);
    assert.deepEqual([unpricedRow.unpriced, unpricedRow.cost_nanos], [1, 0]);

    const listed = await admin.get('/admin/api/pricing');
    assert.deepEqual(listed.body.unpriced, [{ provider: 'openai', model: 'gpt-4o', requests: 1, last_seen: unpricedRow.created_at }]);

    // The price book remembered the miss for (openai, gpt-4o); the write must drop it at once.
    const put = await admin.put('/admin/api/pricing/gpt-4o', { provider: 'openai', input_price_per_million: 2.5, output_price_per_million: 10, cached_input_price_per_million: 1.25 });
    assert.equal(put.status, 200);
    const second = await tg.client.chat.completions.create({ model: 'openai/gpt-4o', messages }).withResponse();
    const pricedRow = await tg.logRow(second.response.headers.get('x-request-id')!);
    // The simulator reports 19 prompt tokens (3 cached) and 24 completion tokens.
    assert.deepEqual([pricedRow.prompt_tokens, pricedRow.cached_tokens, pricedRow.completion_tokens], [19, 3, 24]);
    assert.deepEqual([pricedRow.unpriced, pricedRow.cost_nanos], [0, 16 * 2_500 + 3 * 1_250 + 24 * 10_000]);

    assert.deepEqual((await admin.get('/admin/api/pricing')).body.unpriced, []);
  });

  test('a deleted price makes the next request unpriced again', async () => {
    assert.equal((await admin.delete('/admin/api/pricing/gpt-4o')).status, 204);
    const { response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o', messages }).withResponse();
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.unpriced, row.cost_nanos], [1, 0]);
    const unpriced = (await admin.get('/admin/api/pricing')).body.unpriced;
    assert.deepEqual(unpriced.map((u: any) => [u.provider, u.model, u.requests]), [['openai', 'gpt-4o', 2]]);
  });
});

describe('importing the bundled dataset', () => {
  test('inserts the dataset rows, keeps manual rows, and a second import only updates', async () => {
    const manual = new Set((await listPrices(tg.gateway.store.db)).filter((p) => p.source === 'manual').map((p) => p.model));
    const { rows } = await datasetPrices(DEFAULT_DATASET_PROVIDERS, NOW_MS);
    const valid = rows.filter((row) => {
      try {
        validatePrice(row);
        return true;
      } catch {
        return false;
      }
    });
    const keptManual = valid.filter((row) => manual.has(row.model)).length;
    assert.ok(manual.has('gpt-4o-mini') && keptManual >= 1, 'the dataset prices gpt-4o-mini, which is manual here');

    const first = await admin.post('/admin/api/pricing/import', {});
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { inserted: valid.length - keptManual, updated: 0, kept_manual: keptManual, skipped: rows.length - valid.length });
    assert.ok(first.body.inserted > 100);

    const kept = (await admin.get('/admin/api/pricing?search=gpt-4o-mini')).body.data.find((p: any) => p.model === 'gpt-4o-mini');
    assert.deepEqual([kept.source, kept.input_price_per_million, kept.output_price_per_million], ['manual', 0.15, 0.6]);
    const imported = (await admin.get('/admin/api/pricing?search=gpt-4o')).body.data.find((p: any) => p.model === 'gpt-4o');
    assert.equal(imported.source, 'import');

    const second = await admin.post('/admin/api/pricing/import');
    assert.deepEqual(second.body, { inserted: 0, updated: valid.length - keptManual, kept_manual: keptManual, skipped: rows.length - valid.length });
  });

  test('an imported price is used by the next request at once', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o', messages }).withResponse();
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.unpriced, 0);
    assert.ok((row.cost_nanos ?? 0) > 0);
    assert.deepEqual((await admin.get('/admin/api/pricing')).body.unpriced, []);
  });

  test('rejects fields in the import body', async () => {
    assertError(await admin.post('/admin/api/pricing/import', { file: '/etc/passwd' }), 400, 'invalid_request', 'file');
  });
});

describe('listUnpricedModels', () => {
  let store: Store;
  after(() => store.close());
  let seq = 0;
  const logged = (provider: string | null, model: string | null, createdAt: string, unpriced = 1) => ({
    request_id: `req_${++seq}`, provider, model_requested: model, model_served: model, status: 200,
    latency_ms: 1, stream: 0, created_at: createdAt, unpriced, cost_nanos: 0,
  });

  const unused = (): never => {
    throw new Error('not used by listUnpricedModels');
  };

  function context(priced: ReadonlySet<string> | null, flushed: string[]): AdminContext {
    const services = createServiceRegistry();
    services.provide('requestLog', { flush: () => (flushed.push('flush'), 0), depth: () => 0 });
    if (priced) {
      const price = (model: string): ModelPrice => ({
        model, provider: null, input_price_per_million: 1, output_price_per_million: 1,
        cached_input_price_per_million: null, cache_write_price_per_million: null, source: 'manual',
      });
      services.provide('pricing', {
        priceFor: (provider, model) => (priced.has(`${provider}/${model}`) ? price(model) : null),
        ready: () => null,
        costOf: unused,
        maxCostNanos: () => 0,
        list: () => [],
        datasetProviders: {},
        invalidate: () => {},
      });
    }
    return {
      store, services, log: createLog('error', () => {}), clock: () => NOW_MS,
      keyring: { get: unused, reload: unused },
      selfOrigin: () => '', notifyChange: () => {},
    };
  }

  before(async () => {
    store = await openTestStore(tempDir());
    await writeLogRows(store, [
      logged('openai', 'a', '2026-11-01T00:00:00.000Z'),
      logged('openai', 'a', '2026-11-10T00:00:00.000Z'),
      logged('openai', 'a', '2026-11-12T00:00:00.000Z'),
      logged('groq', 'a', '2026-11-11T00:00:00.000Z'),
      logged('openai', 'b', '2026-11-15T00:00:00.000Z'),
      logged('openai', 'b', '2026-11-16T00:00:00.000Z'),
      logged('openai', 'c', '2026-11-20T00:00:00.000Z'),
      logged('openai', 'priced', '2026-11-10T00:00:00.000Z', 0),
      logged('openai', null, '2026-11-10T00:00:00.000Z'),
    ]);
  });

  test('groups by provider and served model, most requests first, and flushes the request log first', async () => {
    const flushed: string[] = [];
    assert.deepEqual(await listUnpricedModels(context(null, flushed), {}), [
      { provider: 'openai', model: 'a', requests: 3, last_seen: '2026-11-12T00:00:00.000Z' },
      { provider: 'openai', model: 'b', requests: 2, last_seen: '2026-11-16T00:00:00.000Z' },
      { provider: 'openai', model: 'c', requests: 1, last_seen: '2026-11-20T00:00:00.000Z' },
      { provider: 'groq', model: 'a', requests: 1, last_seen: '2026-11-11T00:00:00.000Z' },
    ]);
    assert.deepEqual(flushed, ['flush']);
  });

  test('counts only the range [from, to), breaks ties by the latest request, and stops at the limit', async () => {
    const ctx = context(null, []);
    assert.deepEqual(await listUnpricedModels(ctx, { fromIso: '2026-11-10T00:00:00.000Z', toIso: '2026-11-20T00:00:00.000Z' }), [
      // A tie in requests: the most recently seen first.
      { provider: 'openai', model: 'b', requests: 2, last_seen: '2026-11-16T00:00:00.000Z' },
      { provider: 'openai', model: 'a', requests: 2, last_seen: '2026-11-12T00:00:00.000Z' },
      { provider: 'groq', model: 'a', requests: 1, last_seen: '2026-11-11T00:00:00.000Z' },
    ]);
    assert.deepEqual((await listUnpricedModels(ctx, {}, 2)).map((u) => `${u.provider}/${u.model}`), ['openai/a', 'openai/b']);
  });

  test('leaves out models that have a price now, per provider, before applying the limit', async () => {
    const ctx = context(new Set(['openai/a', 'openai/b']), []);
    assert.deepEqual(await listUnpricedModels(ctx, {}, 1), [{ provider: 'openai', model: 'c', requests: 1, last_seen: '2026-11-20T00:00:00.000Z' }]);
    assert.deepEqual((await listUnpricedModels(ctx, {})).map((u) => `${u.provider}/${u.model}`), ['openai/c', 'groq/a']);
  });
});
