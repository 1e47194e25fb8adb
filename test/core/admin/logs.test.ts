/**
 * `/admin/api/logs`, `/admin/api/logs/:id`, `/admin/api/logs.csv`: real SDK requests through the
 * gateway and crafted rows, filters, keyset paging that stays stable while rows arrive, deleted users,
 * RFC 4180 CSV, and query plans that walk an index without sorting on a 200k-row table.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestGateway, manualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';
import { createGatewayUser, deleteGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import { compileLogPageQuery, LOG_ROW_FIELDS } from '../../../core/admin/logs-query.ts';
import { sqliteStoreOf, type Store } from '../../../core/store/store.ts';
import { TEST_STORE_ENGINE } from '../../helpers/test-store.ts';
import type { NewLlmRequest } from '../../../core/store/db-types.ts';

const NOW_MS = Date.parse('2026-11-20T10:00:00.000Z');
const NOW_ISO = '2026-11-20T10:00:00.000Z';
const NO_SESSION = { cookie: null };
/** What one simulator answer costs at the test prices: 16 × 0.15 + 3 × 0.075 + 24 × 0.6 micro-USD. */
const SIM_COST_NANOS = 17_025;
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

let rowSeq = 0;

/** Inserts one crafted llm_requests row (defaults: a 200 from openai) and returns its id. */
async function insertRow(store: Store, fields: Partial<NewLlmRequest>): Promise<number> {
  const row = await store.db.insertInto('llm_requests').values({
    request_id: `req_crafted_${process.pid}_${++rowSeq}`, gateway_user_id: null, api_key_id: null,
    provider: 'openai', model_requested: 'gpt-4o-mini', model_served: 'gpt-4o-mini', status: 200, error_code: null,
    prompt_tokens: 10, completion_tokens: 5, cached_tokens: null, cache_write_tokens: null, cost_nanos: 1000,
    latency_ms: 100, ttft_ms: null, stream: 0, created_at: NOW_ISO, ...fields,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Inserts many crafted rows through `store.db` (both engines), 1,000 per statement (PostgreSQL's parameter limit). */
async function insertMany(store: Store, rows: NewLlmRequest[]): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('llm_requests').values(rows.slice(i, i + 1000)).execute();
  });
}

async function userWithKey(store: Store, name: string): Promise<{ userId: number; keyId: number; prefix: string }> {
  const user = await createGatewayUser(store.db, { name });
  const key = await createApiKey(store.db, { gatewayUserId: user.id, name: `${name}-key` });
  const row = await store.db.selectFrom('api_keys').select('key_prefix').where('id', '=', key.id).executeTakeFirstOrThrow();
  return { userId: user.id, keyId: key.id, prefix: row.key_prefix };
}

/** Every row of a JSON listing, following `next_cursor`; `between` runs after each page. */
async function allPages(admin: AdminClient, filters: string, limit: number, between?: () => Promise<void>): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await admin.get(`/admin/api/logs?${filters}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= limit);
    rows.push(...res.body.data);
    cursor = res.body.next_cursor;
    if (cursor) await between?.();
  } while (cursor);
  return rows;
}

/** RFC 4180: CRLF-separated records, fields quoted when they hold `,` `"` or a line break, quotes doubled. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        assert.ok(quote !== -1, 'unterminated quoted field');
        field += text.slice(i, quote);
        i = quote + 1;
        if (text[i] !== '"') break;
        field += '"';
        i++;
      }
    }
    const ch = text[i];
    if (ch === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      assert.ok(ch !== '"' && ch !== '\n' && ch !== '\r', `bare ${JSON.stringify(ch)} in an unquoted field at ${i}`);
      field += ch;
      i++;
    }
  }
  assert.equal(field, '', 'the last record ends with CRLF');
  return records;
}

describe('usage logs over the admin API', () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let admin: AdminClient;
  let store: Store;

  before(async () => {
    sim = await startOpenAISimulator();
    const dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 }]);
    tg = await startTestGateway({ dataDir, clock: manualClock(NOW_MS), providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk' } } });
    admin = await loginAdmin(tg.gateway.origin);
    store = tg.gateway.store;
  });

  after(async () => {
    await tg?.close();
    await sim?.close();
  });

  test('lists a request made with the openai SDK at once, with its user, key, tokens and cost', async () => {
    const { request_id: requestId } = await tg.client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
    const res = await admin.get(`/admin/api/logs?key_id=${tg.keyId}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.next_cursor, null);
    assert.equal(res.body.data.length, 1);
    const row = res.body.data[0];
    const stored = await tg.logRow(requestId!);
    const key = await store.db.selectFrom('api_keys').select('key_prefix').where('id', '=', tg.keyId).executeTakeFirstOrThrow();
    const user = await store.db.selectFrom('gateway_users').select('name').where('id', '=', tg.userId).executeTakeFirstOrThrow();
    assert.equal(typeof row.latency_ms, 'number');
    assert.deepEqual(row, {
      id: stored.id, request_id: requestId, created_at: NOW_ISO, user_id: tg.userId, user_name: user.name,
      api_key_id: tg.keyId, api_key_prefix: key.key_prefix, api_key_name: 'test', endpoint: 'chat.completions',
      provider: 'openai', model_requested: 'gpt-4o-mini', model_served: 'gpt-4o-mini', status: 200, error_code: null, stream: false,
      prompt_tokens: 19, completion_tokens: 24, cached_tokens: 3, cache_write_tokens: 0,
      cost_usd: SIM_COST_NANOS / 1e9, cost_nanos: SIM_COST_NANOS, unpriced: false, usage_estimated: false,
      latency_ms: stored.latency_ms, ttft_ms: stored.ttft_ms, tags: null, team_id: null, team_name: null,
    });

    const one = await admin.get(`/admin/api/logs/${stored.id}`);
    assert.equal(one.status, 200, one.text);
    // The detail adds the upstream attempts (one here) to the listed row.
    const attempts = [{ provider: 'openai', model: 'gpt-4o-mini', status: 200, error_code: null, latency_ms: one.body.attempts?.[0]?.latency_ms }];
    // ...and what the row was billed from: the usage report as read and the price in effect.
    const { usage_reported: reported, billed_price: price, ...rest } = one.body;
    // No plugin of the plugin SDK failed or added a field.
    assert.deepEqual(rest, { ...row, attempts, error_plugin: null, plugin_fields: null });
    assert.equal(reported.prompt_tokens, 19);
    assert.equal(reported.completion_tokens, 24);
    assert.equal(price.model, 'gpt-4o-mini');
    assert.equal(typeof price.input_price_per_million, 'number');
  });

  test('an unknown or non-numeric log id is 404', async () => {
    assertError(await admin.get('/admin/api/logs/999999999'), 404, 'log_not_found', 'id');
    assertError(await admin.get('/admin/api/logs/abc'), 404, 'log_not_found', 'id');
  });

  test('filters by user, key, provider, model (requested or served), status and date range', async () => {
    const { userId, keyId } = await userWithKey(store, 'filters-user');
    const other = await userWithKey(store, 'filters-other');
    const a = await insertRow(store, { gateway_user_id: userId, api_key_id: keyId, model_requested: 'alias-x', model_served: 'served-y', created_at: '2026-11-18T12:00:00.000Z' });
    const b = await insertRow(store, { gateway_user_id: userId, api_key_id: keyId, provider: 'anthropic', model_requested: 'served-y', model_served: 'served-y', status: 429, error_code: 'rate_limit_exceeded', created_at: '2026-11-19T00:00:00.000Z' });
    const c = await insertRow(store, { gateway_user_id: userId, api_key_id: keyId, provider: 'mistral', model_requested: 'm-c', model_served: null, status: 503, created_at: '2026-11-19T23:59:59.999Z' });
    const d = await insertRow(store, { gateway_user_id: other.userId, api_key_id: other.keyId, model_requested: 'served-y', created_at: '2026-11-19T12:00:00.000Z' });

    const ids = async (filters: string) => {
      const res = await admin.get(`/admin/api/logs?${filters}`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((r: any) => r.id);
    };
    assert.deepEqual(await ids(`user_id=${userId}`), [c, b, a]);
    assert.deepEqual(await ids(`key_id=${other.keyId}`), [d]);
    assert.deepEqual(await ids(`user_id=${userId}&provider=anthropic`), [b]);
    assert.deepEqual(await ids('model=served-y'), [d, b, a], 'requested or served, each row once');
    assert.deepEqual(await ids(`user_id=${userId}&model=m-c`), [c]);
    assert.deepEqual(await ids(`user_id=${userId}&status=429`), [b]);
    assert.deepEqual(await ids(`user_id=${userId}&status=4xx`), [b]);
    assert.deepEqual(await ids(`user_id=${userId}&status=5xx`), [c]);
    assert.deepEqual(await ids(`user_id=${userId}&status=error`), [c, b]);
    assert.deepEqual(await ids(`user_id=${userId}&status=2xx`), [a]);
    assert.deepEqual(await ids(`user_id=${userId}&from=2026-11-19&to=2026-11-19`), [c, b], 'a date is its whole UTC day');
    assert.deepEqual(await ids(`user_id=${userId}&from=2026-11-19T00:00:00.001Z`), [c]);
    assert.deepEqual(await ids(`user_id=${userId}&to=2026-11-19T00:00:00.000Z`), [a], '"to" is exclusive');
    assert.deepEqual(await ids(`model=served-y&from=2026-11-19&to=2026-11-19T12:00:00.000Z`), [b]);
  });

  test('pages newest first through equal timestamps, each row exactly once', async () => {
    const { userId } = await userWithKey(store, 'paging-user');
    const inserted: number[] = [];
    for (let i = 0; i < 11; i++) {
      inserted.push(await insertRow(store, { gateway_user_id: userId, created_at: i < 7 ? '2026-11-17T08:00:00.000Z' : `2026-11-17T09:00:${String(i).padStart(2, '0')}.000Z` }));
    }
    const expected = [...inserted.slice(7).reverse(), ...inserted.slice(0, 7).reverse()];
    const rows = await allPages(admin, `user_id=${userId}`, 3);
    assert.deepEqual(rows.map((r) => r.id), expected);
    const byModel = await allPages(admin, `user_id=${userId}&model=gpt-4o-mini`, 4);
    assert.deepEqual(byModel.map((r) => r.id), expected);
  });

  test('a deleted user\'s requests stay listed with the owner and key shown as null', async () => {
    const { userId, keyId } = await userWithKey(store, 'doomed-user');
    const id = await insertRow(store, { gateway_user_id: userId, api_key_id: keyId, cost_nanos: 2_500_000_000 });
    assert.equal(await deleteGatewayUser(store.db, userId), true);
    const res = await admin.get(`/admin/api/logs/${id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.user_id, null);
    assert.equal(res.body.user_name, null);
    assert.equal(res.body.api_key_id, null);
    assert.equal(res.body.api_key_prefix, null);
    assert.equal(res.body.api_key_name, null);
    assert.equal(res.body.cost_nanos, 2_500_000_000);
    assert.equal(res.body.cost_usd, 2.5);
  });

  test('bad filters are 400 invalid_request naming the parameter, for JSON and CSV alike', async () => {
    const cases: Array<[string, string]> = [
      ['user_id=abc', 'user_id'], ['user_id=0', 'user_id'], ['key_id=1.5', 'key_id'], ['status=6xx', 'status'],
      ['status=ok', 'status'], ['from=yesterday', 'from'], ['to=11/20/2026', 'to'],
      ['from=2026-11-20&to=2026-11-19', 'to'], ['to=9999-12-31', 'to'], ['to=9999-12-31T23:59:59.999Z', 'to'],
      ['from=1999-12-31', 'from'], ['limit=0', 'limit'], ['limit=501', 'limit'], ['cursor=not-a-cursor', 'cursor'],
    ];
    for (const [query, param] of cases) assertError(await admin.get(`/admin/api/logs?${query}`), 400, 'invalid_request', param);
    for (const [query, param] of cases.filter(([, p]) => p !== 'limit' && p !== 'cursor')) {
      const res = await admin.get(`/admin/api/logs.csv?${query}`);
      assertError(res, 400, 'invalid_request', param);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    }
  });

  test('every route is 401 without a session', async () => {
    for (const path of ['/admin/api/logs', '/admin/api/logs/1', '/admin/api/logs.csv']) {
      assertError(await admin.get(path, NO_SESSION), 401, 'session_required', null);
    }
  });

  test('exports CSV with a header row and RFC 4180 quoting of commas, quotes and line breaks', async () => {
    const { userId } = await userWithKey(store, 'csv-user');
    const nasty = 'model, "quoted"\nnext line';
    const nastyCode = 'code,"x"\r\nend';
    await insertRow(store, { gateway_user_id: userId, created_at: '2026-11-16T01:00:00.000Z' });
    const id = await insertRow(store, { gateway_user_id: userId, model_requested: nasty, error_code: nastyCode, status: 502, cost_nanos: null, stream: 1, created_at: '2026-11-16T02:00:00.000Z' });
    const res = await admin.get(`/admin/api/logs.csv?user_id=${userId}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="tollgate-usage-2026-11-20.csv"');
    assert.match(res.headers.get('x-request-id') ?? '', /\S/);
    assert.ok(res.text.includes('"model, ""quoted""\nnext line"'), res.text);
    const records = parseCsv(res.text);
    assert.deepEqual(records[0], LOG_ROW_FIELDS);
    assert.equal(records.length, 3);
    const json = (await admin.get(`/admin/api/logs/${id}`)).body;
    const expected = LOG_ROW_FIELDS.map((f) => (json[f] === null ? '' : String(json[f])));
    assert.deepEqual(records[1], expected);
    const row = Object.fromEntries(LOG_ROW_FIELDS.map((f, i) => [f, records[1]![i]]));
    assert.equal(row.model_requested, nasty);
    assert.equal(row.error_code, nastyCode);
    assert.equal(row.stream, 'true');
    assert.equal(row.cost_usd, '');
  });

  test('the CSV has exactly the rows of the JSON listing for the same filters, across export batches', async () => {
    const { userId } = await userWithKey(store, 'csv-bulk');
    await insertMany(store, Array.from({ length: 2_600 }, (_, i) => ({
      request_id: `req_csv_bulk_${process.pid}_${i}`, gateway_user_id: userId, provider: 'openai', model_requested: 'bulk-model',
      model_served: 'bulk-model', status: i % 10 === 0 ? 500 : 200, latency_ms: 50, stream: 0,
      created_at: new Date(NOW_MS - 3_600_000 + Math.floor(i / 4)).toISOString(),
    })));
    for (const filters of [`user_id=${userId}`, `user_id=${userId}&status=2xx`, 'model=bulk-model&status=500']) {
      const rows = await allPages(admin, filters, 500);
      const csv = await admin.get(`/admin/api/logs.csv?${filters}`);
      assert.equal(csv.status, 200);
      const records = parseCsv(csv.text);
      assert.deepEqual(records[0], LOG_ROW_FIELDS);
      assert.equal(records.length - 1, rows.length, filters);
      assert.deepEqual(records.slice(1).map((r) => Number(r[0])), rows.map((r) => r.id), filters);
    }
  });

  test('text cells a spreadsheet would run as a formula get a leading quote in the CSV only', async () => {
    const { userId } = await userWithKey(store, 'csv-formula');
    const id = await insertRow(store, { gateway_user_id: userId, model_requested: '=HYPERLINK("http://evil.example")' });
    assert.equal((await admin.get(`/admin/api/logs/${id}`)).body.model_requested, '=HYPERLINK("http://evil.example")');
    const records = parseCsv((await admin.get(`/admin/api/logs.csv?user_id=${userId}`)).text);
    assert.equal(records[1]![LOG_ROW_FIELDS.indexOf('model_requested')], '\'=HYPERLINK("http://evil.example")');
  });
});

describe('usage logs at scale (200k rows)', () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let admin: AdminClient;
  let store: Store;
  const users: number[] = [];
  const keys: number[] = [];
  const BASE_MS = Date.parse('2026-10-01T00:00:00.000Z');
  const ROWS = 200_000;

  before(async () => {
    sim = await startOpenAISimulator();
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk' } } });
    admin = await loginAdmin(tg.gateway.origin);
    store = tg.gateway.store;
    for (const name of ['scale-a', 'scale-b']) {
      const u = await userWithKey(store, name);
      const k2 = await createApiKey(store.db, { gatewayUserId: u.userId, name: 'second' });
      users.push(u.userId);
      keys.push(u.keyId, k2.id);
    }
    const providers = ['openai', 'anthropic', 'gemini'];
    await insertMany(store, Array.from({ length: ROWS }, (_, i) => ({
      // Three rows share each millisecond, so ties on created_at are everywhere.
      request_id: `req_scale_${i}`, gateway_user_id: users[(i % 4) >> 1]!, api_key_id: keys[i % 4]!, provider: providers[i % 3]!,
      model_requested: `model-${i % 5}`, model_served: `model-${i % 5}-2026`, status: i % 17 === 0 ? 429 : 200,
      prompt_tokens: 10, completion_tokens: 10, cost_nanos: 100, latency_ms: 80, stream: 0,
      created_at: new Date(BASE_MS + Math.floor(i / 3)).toISOString(),
    })));
  });

  after(async () => {
    await tg?.close();
    await sim?.close();
  });

  const sqliteOnly = { skip: TEST_STORE_ENGINE === 'postgres' ? 'EXPLAIN QUERY PLAN is SQLite\'s (its planner and index names)' : false };

  test('the unfiltered, user and key pages walk an index and never sort (EXPLAIN QUERY PLAN)', sqliteOnly, () => {
    const cursor = { createdAt: new Date(BASE_MS + 30_000).toISOString(), id: 90_000 };
    const cases: Array<[Parameters<typeof compileLogPageQuery>[1], string]> = [
      [{}, 'llm_requests_by_time'],
      [{ userId: users[0]! }, 'llm_requests_by_user_time'],
      [{ keyId: keys[1]! }, 'llm_requests_by_key_time'],
      [{ provider: 'gemini' }, 'llm_requests_by_provider_time'],
      [{ userId: users[1]!, status: { min: 400, max: 1000 } }, 'llm_requests_by_user_time'],
    ];
    for (const [filters, index] of cases) {
      for (const c of [undefined, cursor]) {
        const compiled = compileLogPageQuery(store, filters, c, 51);
        const plan = (sqliteStoreOf(store, 'EXPLAIN QUERY PLAN').sqlite.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...compiled.parameters) as Array<{ detail: string }>)
          .map((r) => r.detail);
        const label = `${JSON.stringify(filters)} ${c ? 'with' : 'without'} cursor:\n${plan.join('\n')}`;
        assert.match(plan[0]!, new RegExp(`^(SCAN|SEARCH) r USING INDEX ${index}\\b`), label);
        assert.ok(!plan.some((d) => d.includes('USE TEMP B-TREE')), label);
      }
    }
  });

  test('the model filter walks the requested and served model indexes, sorting only the page-sized merge', sqliteOnly, () => {
    const compiled = compileLogPageQuery(store, { model: 'model-3' }, undefined, 51);
    const plan = (sqliteStoreOf(store, 'EXPLAIN QUERY PLAN').sqlite.prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...compiled.parameters) as Array<{ detail: string }>).map((r) => r.detail);
    assert.ok(plan.some((d) => d.includes('INDEX llm_requests_by_model_requested_time (model_requested=?)')), plan.join('\n'));
    assert.ok(plan.some((d) => d.includes('INDEX llm_requests_by_model_served_time (model_served=?)')), plan.join('\n'));
  });

  test('paging a filtered set skips and repeats no row while new rows arrive between pages', async () => {
    const filters = `key_id=${keys[1]}&provider=openai&status=2xx`;
    const expected = (await store.db.selectFrom('llm_requests').select('id').where('api_key_id', '=', keys[1]!).where('provider', '=', 'openai')
      .where('status', '<', 300).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map((r) => r.id);
    assert.ok(expected.length > 10_000);
    let arrivals = 0;
    const rows = await allPages(admin, filters, 500, async () => {
      for (let i = 0; i < 3; i++) {
        arrivals++;
        await store.db.insertInto('llm_requests').values({
          request_id: `req_arrival_${arrivals}`, gateway_user_id: users[0]!, api_key_id: keys[1]!, provider: 'openai', status: 200,
          latency_ms: 5, stream: 0, created_at: new Date(BASE_MS + ROWS + arrivals).toISOString(),
        }).execute();
      }
    });
    const ids = rows.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length, 'no row repeated');
    assert.deepEqual(ids, expected, 'every row, in order, none of the late arrivals');
    assert.ok(arrivals > 0);
    const first = await admin.get(`/admin/api/logs?${filters}&limit=3`);
    assert.equal(first.body.data[0].request_id, `req_arrival_${arrivals}`, 'a fresh first page shows the arrivals');
  });

  test('a client that leaves mid-export does not stall the server', async () => {
    const url = new URL('/admin/api/logs.csv', tg.gateway.origin);
    const firstChunk = await new Promise<string>((resolve, reject) => {
      const req = request(url, { headers: { cookie: admin.cookie } }, (res) => {
        res.once('data', (chunk: Buffer) => {
          resolve(chunk.toString('utf8'));
          req.destroy();
        });
      });
      req.on('error', (err) => ((err as { code?: string }).code === 'ECONNRESET' ? undefined : reject(err)));
      req.end();
    });
    assert.ok(firstChunk.startsWith(`${LOG_ROW_FIELDS.join(',')}\r\n`));
    const res = await admin.get(`/admin/api/logs?user_id=${users[0]}&limit=1`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 1);
  });
});
