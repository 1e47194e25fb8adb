/**
 * `GET /admin/api/stats`: dashboard figures from real SDK traffic and from crafted rows with exact
 * numbers: nearest-rank percentiles, per-day series folded into Asia/Tokyo days across the UTC
 * boundary, top users with a deleted one, budget alerts, unpriced models, and the period's defaults.
 */
import { writeLogRows } from '../../helpers/log-rows.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, manualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';
import { createGatewayUser, deleteGatewayUser } from '../../../core/accounts/gateway-users.ts';
import type { Store } from '../../../core/store/store.ts';
import type { NewLlmRequest } from '../../../core/store/db-types.ts';
import { queryUsage, startOfLocalHour } from '../../../core/admin/stats-query.ts';

/** 19:00 on 2026-11-20 in Tokyo (UTC+9). */
const NOW_MS = Date.parse('2026-11-20T10:00:00.000Z');
const NOW_ISO = '2026-11-20T10:00:00.000Z';
/** What one simulator answer costs at the test prices: 16 × 0.15 + 3 × 0.075 + 24 × 0.6 micro-USD. */
const SIM_COST_NANOS = 17_025;
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;
let store: Store;
let alice: number;
let watched: number;
let rowSeq = 0;

async function insertRow(fields: Partial<NewLlmRequest>): Promise<void> {
  await writeLogRows(store, [{ request_id: `req_stats_${++rowSeq}`, stream: 1, created_at: NOW_ISO, ...fields }]);
}

before(async () => {
  sim = await startOpenAISimulator();
  const dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 }]);
  tg = await startTestGateway({
    dataDir,
    clock: manualClock(NOW_MS),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk' } },
    config: { budget: { timeZone: 'Asia/Tokyo' } },
  });
  admin = await loginAdmin(tg.gateway.origin);
  store = tg.gateway.store;

  // Real traffic at NOW: one priced answer, one unpriced model, one upstream error.
  await tg.client.chat.completions.create({ model: 'gpt-4o-mini', messages });
  await tg.client.chat.completions.create({ model: 'gpt-4o', messages });
  await assert.rejects(tg.client.chat.completions.create({ model: 'sim-500', messages }), OpenAI.APIError);

  alice = (await createGatewayUser(store.db, { name: 'stats-alice' })).id;
  const bob = (await createGatewayUser(store.db, { name: 'stats-bob' })).id;
  // Tokyo days 2026-11-10 and 2026-11-11 are [2026-11-09T15:00Z, 2026-11-11T15:00Z).
  await insertRow({ gateway_user_id: alice, created_at: '2026-11-09T14:59:59.999Z', latency_ms: 1 }); // Tokyo 11-09 23:59
  await insertRow({ gateway_user_id: alice, created_at: '2026-11-09T15:00:00.000Z', latency_ms: 100, ttft_ms: 10 }); // 11-10 00:00
  await insertRow({ gateway_user_id: alice, created_at: '2026-11-10T14:59:59.999Z', latency_ms: 200, ttft_ms: 20 }); // 11-10 23:59
  await insertRow({
    gateway_user_id: bob, created_at: '2026-11-10T15:00:00.000Z', latency_ms: 300, status: 500, model_requested: 'm2',
    model_served: 'm2', prompt_tokens: null, completion_tokens: null, cost_nanos: null,
  }); // 11-11 00:00
  for (let i = 0; i < 6; i++) {
    await insertRow({
      gateway_user_id: bob, created_at: `2026-11-11T00:00:0${i}.000Z`, latency_ms: 400 + 100 * i, ttft_ms: i < 3 ? 40 + 10 * i : null,
      model_requested: 'm2', model_served: 'm2', prompt_tokens: 20, completion_tokens: 10, cost_nanos: 3000,
    });
  }
  await insertRow({ gateway_user_id: alice, created_at: '2026-11-11T15:00:00.000Z', latency_ms: 99_999 }); // Tokyo 11-12 00:00
  assert.equal(await deleteGatewayUser(store.db, bob), true);

  // Budgets: 90 % spent in the current Tokyo month (starts 2026-11-01T00:00+09:00), and 50 %.
  watched = (await createGatewayUser(store.db, { name: 'stats-spender', budgetUsd: 1, budgetPeriod: 'monthly' })).id;
  const thrifty = (await createGatewayUser(store.db, { name: 'stats-thrifty', budgetUsd: 1, budgetPeriod: 'monthly' })).id;
  for (const [id, spent] of [[watched, 900_000_000], [thrifty, 500_000_000]] as const) {
    await store.db.updateTable('gateway_users').set({ budget_spent_nanos: spent, budget_period_start: '2026-10-31T15:00:00.000Z' }).where('id', '=', id).execute();
  }
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

describe('GET /admin/api/stats', () => {
  test('gives exact totals, nearest-rank percentiles and Tokyo days for a period given as dates', async () => {
    const res = await admin.get('/admin/api/stats?from=2026-11-10&to=2026-11-11');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      from: '2026-11-09T15:00:00.000Z',
      to: '2026-11-11T15:00:00.000Z',
      time_zone: 'Asia/Tokyo',
      totals: {
        requests: 9, errors: 1, error_rate: 1 / 9, prompt_tokens: 140, completion_tokens: 70, total_tokens: 210,
        cost_usd: 20_000 / 1e9, cost_nanos: 20_000,
      },
      // latency 100..900: rank ⌈0.5·9⌉ = 5 → 500, ⌈0.95·9⌉ = 9 → 900; ttft 10,20,40,50,60: ranks 3 and 5.
      latency_ms: { p50: 500, p95: 900 },
      ttft_ms: { p50: 40, p95: 60 },
      per_day: [
        { date: '2026-11-10', requests: 2, errors: 0, total_tokens: 30, cost_usd: 2000 / 1e9, cost_nanos: 2000 },
        { date: '2026-11-11', requests: 7, errors: 1, total_tokens: 180, cost_usd: 18_000 / 1e9, cost_nanos: 18_000 },
      ],
      top_users: [
        { user_id: null, user_name: null, requests: 7, total_tokens: 180, cost_usd: 18_000 / 1e9, cost_nanos: 18_000 },
        { user_id: alice, user_name: 'stats-alice', requests: 2, total_tokens: 30, cost_usd: 2000 / 1e9, cost_nanos: 2000 },
      ],
      top_models: [
        { provider: 'openai', model: 'm2', requests: 7, total_tokens: 180, cost_usd: 18_000 / 1e9, cost_nanos: 18_000 },
        { provider: 'openai', model: 'm1', requests: 2, total_tokens: 30, cost_usd: 2000 / 1e9, cost_nanos: 2000 },
      ],
      budget_alerts: [{ user_id: watched, user_name: 'stats-spender', limit_usd: 1, spent_usd: 0.9, ratio: 0.9 }],
      unpriced_models: [],
    });
  });

  test('defaults to the last 30 Tokyo days, today included, with real traffic and unpriced models', async () => {
    const res = await admin.get('/admin/api/stats');
    assert.equal(res.status, 200, res.text);
    const body = res.body;
    assert.equal(body.from, '2026-10-21T15:00:00.000Z');
    assert.equal(body.to, '2026-11-20T15:00:00.000Z');
    assert.equal(body.per_day.length, 30);
    assert.equal(body.per_day[0].date, '2026-10-22');
    assert.deepEqual(body.per_day.at(-1), {
      date: '2026-11-20', requests: 3, errors: 1, total_tokens: 86, cost_usd: SIM_COST_NANOS / 1e9, cost_nanos: SIM_COST_NANOS,
    });
    assert.deepEqual(body.per_day.filter((d: any) => d.requests > 0).map((d: any) => d.date), ['2026-11-09', '2026-11-10', '2026-11-11', '2026-11-12', '2026-11-20']);
    assert.equal(body.per_day.reduce((n: number, d: any) => n + d.requests, 0), body.totals.requests);
    assert.equal(body.totals.requests, 3 + 11);
    assert.equal(body.totals.errors, 2);
    assert.equal(body.totals.error_rate, 2 / 14);
    assert.equal(body.totals.cost_nanos, SIM_COST_NANOS + 22_000);
    assert.deepEqual(body.unpriced_models, [{ provider: 'openai', model: 'gpt-4o', requests: 1, last_seen: NOW_ISO }]);
    assert.deepEqual(body.top_users.map((u: any) => u.user_id), [null, tg.userId, alice]);
  });

  test('counts as errors what the gateway or a provider failed, not refusals of the client\'s own request', async () => {
    const upstream = JSON.stringify([{ provider: 'openai', model: 'm1', status: 429, error_code: 'rate_limit_exceeded', latency_ms: 5 }]);
    const rows = (at: string): Array<Partial<NewLlmRequest>> => [
      { status: 200 },
      // Refusals of the request: a budget, an unknown model, the gateway's own rate limit, a bad key, a client that hung up.
      { status: 402, error_code: 'budget_exceeded' }, { status: 404, error_code: 'model_not_found' },
      { status: 429, error_code: 'rate_limit_exceeded' }, { status: 401, error_code: 'invalid_api_key' }, { status: 499, error_code: 'client_disconnected' },
      { status: 400, error_code: 'invalid_request', attempts: upstream },
      // Failures: an upstream's 429 and 401, the gateway's 500, an upstream's 5xx as 502.
      { status: 429, error_code: 'rate_limit_exceeded', attempts: upstream }, { status: 401, error_code: 'upstream_authentication_error', attempts: upstream },
      { status: 500, error_code: 'internal_error' }, { status: 502, error_code: 'upstream_error', attempts: upstream },
    ].map((fields) => ({ ...fields, created_at: at, gateway_user_id: alice, latency_ms: 10 }));
    // One set in a whole quarter hour (from the rollups), one in the partial quarter at the start (from the log).
    for (const row of [...rows('2026-10-01T03:05:00.000Z'), ...rows('2026-10-01T03:20:00.000Z')]) await insertRow(row);
    const res = await admin.get('/admin/api/stats?from=2026-10-01T03:01:00Z&to=2026-10-01T04:00:00Z');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.totals.requests, 22);
    assert.equal(res.body.totals.errors, 8);
    assert.equal(res.body.totals.error_rate, 8 / 22);
    assert.deepEqual(res.body.per_day.map((d: any) => [d.date, d.requests, d.errors]), [['2026-10-01', 22, 8]]);
  });

  test('per=hour adds one entry per local clock hour (a zone half an hour off UTC starts its hours at :30)', async () => {
    // The rows of the test above: 2026-10-01 at 03:05Z and 03:20Z, 11 each (4 errors each).
    const res = await admin.get('/admin/api/stats?from=2026-10-01T02:30:00Z&to=2026-10-01T04:30:00Z&per=hour');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.per_hour.map((h: any) => [h.start, h.requests, h.errors]), [
      ['2026-10-01T02:00:00.000Z', 0, 0], ['2026-10-01T03:00:00.000Z', 22, 8], ['2026-10-01T04:00:00.000Z', 0, 0],
    ]);
    assert.equal(res.body.per_hour[1].cost_nanos, 22_000);
    assert.equal(res.body.per_hour[1].total_tokens, 22 * 15);
    assert.equal((await admin.get('/admin/api/stats?from=2026-10-01T02:30:00Z&to=2026-10-01T04:30:00Z')).body.per_hour, undefined);
    assert.equal(startOfLocalHour(Date.parse('2026-10-01T03:05:00.000Z'), 'Asia/Kolkata'), Date.parse('2026-10-01T02:30:00.000Z'));
    assert.equal(startOfLocalHour(Date.parse('2026-10-01T03:05:00.000Z'), 'Asia/Tokyo'), Date.parse('2026-10-01T03:00:00.000Z'));
    const week = await admin.get('/admin/api/stats?from=2026-10-01&to=2026-10-07&per=hour');
    assert.equal(week.body.per_hour.length, 7 * 24);
    assertError(await admin.get('/admin/api/stats?from=2026-10-01&to=2026-10-08&per=hour'), 400, 'invalid_request', 'per');
    assertError(await admin.get('/admin/api/stats?per=minute'), 400, 'invalid_request', 'per');
  });

  test('an empty period has zeros, an error rate of 0 and null percentiles', async () => {
    const res = await admin.get('/admin/api/stats?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.totals, {
      requests: 0, errors: 0, error_rate: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: 0, cost_nanos: 0,
    });
    assert.deepEqual(res.body.latency_ms, { p50: null, p95: null });
    assert.deepEqual(res.body.ttft_ms, { p50: null, p95: null });
    // 2025-01-01T00:00Z..2025-01-02T00:00Z is 09:00 on Jan 1 to 09:00 on Jan 2 in Tokyo.
    assert.deepEqual(res.body.per_day.map((d: any) => [d.date, d.requests]), [['2025-01-01', 0], ['2025-01-02', 0]]);
    assert.deepEqual(res.body.top_users, []);
    assert.deepEqual(res.body.top_models, []);
  });

  test('a bad period is 400 naming the parameter', async () => {
    assertError(await admin.get('/admin/api/stats?from=last-week'), 400, 'invalid_request', 'from');
    assertError(await admin.get('/admin/api/stats?to=tomorrow'), 400, 'invalid_request', 'to');
    assertError(await admin.get('/admin/api/stats?from=2026-11-05&to=2026-11-01'), 400, 'invalid_request', 'to');
    assertError(await admin.get('/admin/api/stats?from=2020-01-01&to=2026-01-01'), 400, 'invalid_request', 'from');
  });

  test('dates before 2000 or more than a year ahead are 400 naming the parameter (year 9999 neither hangs nor fails)', async () => {
    assertError(await admin.get('/admin/api/stats?to=9999-12-31T23:59:59.999Z'), 400, 'invalid_request', 'to');
    assertError(await admin.get('/admin/api/stats?to=9999-12-31'), 400, 'invalid_request', 'to');
    assertError(await admin.get('/admin/api/stats?from=9999-12-01'), 400, 'invalid_request', 'from');
    assertError(await admin.get('/admin/api/stats?from=1999-12-31&to=2000-01-05'), 400, 'invalid_request', 'from');
    assertError(await admin.get('/admin/api/stats?from=0001-01-01T00:00:00Z'), 400, 'invalid_request', 'from');
    const res = await admin.get('/admin/api/stats?to=9999-12-31');
    assert.match(res.body.error.message, /between 2000-01-01 and 2027-11-2\d \(one year from now\)/);
  });

  test('a period of up to 400 days is served day by day; 401 days is 400', async () => {
    const res = await admin.get('/admin/api/stats?from=2025-10-01&to=2026-11-04');
    assert.equal(res.status, 200);
    assert.equal(res.body.per_day.length, 400);
    assertError(await admin.get('/admin/api/stats?from=2025-10-01&to=2026-11-05'), 400, 'invalid_request', 'from');
  });

  test('the per-day walk is bounded even for a range at the end of year 9999 in UTC (it used to loop forever)', async () => {
    const fromMs = Date.parse('9999-12-01T00:00:00.000Z');
    const toMs = Date.parse('9999-12-31T23:59:59.999Z');
    const days = (await queryUsage(store.db, { fromMs, toMs, fromIso: new Date(fromMs).toISOString(), toIso: new Date(toMs).toISOString() }, 'UTC', 5)).perDay;
    assert.ok(days.length <= 1_000, `${days.length} buckets`);
    assert.equal(days[0]!.date, '9999-12-01');
  });

  test('is 401 without a session', async () => {
    assertError(await admin.get('/admin/api/stats', { cookie: null }), 401, 'session_required', null);
  });
});
