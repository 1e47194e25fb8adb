/**
 * Budgets: reservations that hold under concurrency, the 402 that says when the budget resets,
 * calendar-aligned rollover at the exact boundary (settable clock, UTC and Asia/Tokyo), spend that
 * survives a restart, and `GET /api/account`.
 *
 * Prices: `gpt-4o-mini` at $10 / $20 per million tokens, so the simulator's usage (19 prompt + 24
 * completion) costs 19 × 10,000 + 24 × 20,000 = 670,000 nanos, and a request with `max_tokens: 40`
 * reserves its counted prompt × 10,000 + 40 × 20,000 ≥ 800,000 nanos.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, manualClock, type TestGateway, type ManualClock } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { eventually } from '../helpers/eventually.ts';
import { createGatewayUser, type UserFields } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import type { BudgetPeriod } from '../../core/store/db-types.ts';

const COST_NANOS = 670_000;
const messages = [{ role: 'user' as const, content: 'Say hello.' }];
const PRICES = [{ model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 }];

let sim: OpenAISimulator;
before(async () => {
  sim = await startOpenAISimulator();
});
after(async () => {
  await sim?.close();
});

async function gateway(options: { clock?: ManualClock; timeZone?: string; dataDir?: string } = {}): Promise<TestGateway> {
  return startTestGateway({
    dataDir: options.dataDir ?? (await dataDirWithPrices(PRICES)),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false }, budget: { timeZone: options.timeZone ?? 'UTC' } },
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** A new user with `fields` and an SDK client holding their key. */
async function userClient(tg: TestGateway, fields: Omit<UserFields, 'name'>) {
  const user = await createGatewayUser(tg.gateway.store.db, { ...fields, name: `u-${Math.random().toString(36).slice(2)}` });
  const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id });
  return { user, client: new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 }), key: key.key };
}

/**
 * The user's stored spend once the log holds the rows of their `requests` requests (served or
 * refused): each settlement's spend is written in the same batch as its request's row, so it is then
 * stored, however late a busy machine ran the batched write.
 */
async function spentNanos(tg: TestGateway, userId: number, requests: number): Promise<number> {
  await eventually(async () => {
    const { rows } = await tg.gateway.store.db.selectFrom('llm_requests').select((eb) => eb.fn.countAll<number>().as('rows'))
      .where('gateway_user_id', '=', userId).executeTakeFirstOrThrow();
    assert.equal(Number(rows), requests, 'the requests\' rows are logged');
  });
  const row = await tg.gateway.store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.budget_spent_nanos;
}

/** Status and error body of one chat request (never throws). */
async function ask(client: OpenAI) {
  try {
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, max_tokens: 40 });
    return { status: 200, message: '', headers: null as Headers | null };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status ?? 0, message: (err.error as { message?: string } | undefined)?.message ?? '', headers: err.headers ?? null, error: err.error };
  }
}

describe('budget reservations', () => {
  test('50 concurrent requests against a budget that fits about 10: each is served or refused with 402, and spend never passes the limit', async () => {
    const tg = await gateway();
    try {
      const limitUsd = (10 * COST_NANOS) / 1e9; // $0.0067
      const { user, client } = await userClient(tg, { budgetUsd: limitUsd, budgetPeriod: 'monthly' });
      const results = await Promise.all(Array.from({ length: 50 }, () => ask(client)));
      const served = results.filter((r) => r.status === 200).length;
      const refused = results.filter((r) => r.status === 402);
      assert.equal(served + refused.length, 50, `unexpected statuses: ${results.map((r) => r.status).join(',')}`);
      assert.ok(served >= 1 && served <= 10, `served ${served}`);
      const spent = await spentNanos(tg, user.id, 50);
      assert.equal(spent, served * COST_NANOS);
      assert.ok(spent <= 10 * COST_NANOS);
      for (const r of refused) {
        assert.equal((r.error as { type?: string }).type, 'budget_exceeded');
        assert.equal(r.headers?.get('x-should-retry'), 'false');
        assert.match(r.message, /resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/);
        assert.doesNotMatch(r.message, /\$|USD|670|0\.0067/, 'the message names no figures');
      }
    } finally {
      await tg.close();
    }
  });

  test('a user without a budget is never refused and their spend is still recorded', async () => {
    const tg = await gateway();
    try {
      const { user, client } = await userClient(tg, {});
      for (let i = 0; i < 3; i++) assert.equal((await ask(client)).status, 200);
      assert.equal(await spentNanos(tg, user.id, 3), 3 * COST_NANOS);
    } finally {
      await tg.close();
    }
  });

  test('a prompt quoting special-token text (<|endoftext|>) is counted as text and served, streamed or not', async () => {
    // gpt-tokenizer refuses such text by default; the reservation's count once made these a 500.
    const tg = await gateway();
    try {
      const { user, client } = await userClient(tg, { budgetUsd: 1, tpm: 1_000_000 });
      const quoting = [{ role: 'user' as const, content: 'What does <|endoftext|> mean, and <|endofprompt|>?' }];
      const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: quoting, max_tokens: 40 });
      assert.ok(completion.choices[0]?.message.content);
      const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: quoting, max_tokens: 40, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      assert.ok(text.length > 0);
      assert.equal(await spentNanos(tg, user.id, 2), 2 * COST_NANOS);
    } finally {
      await tg.close();
    }
  });

  test('spend survives a restart, and a spent budget stays spent', async () => {
    const dataDir = await dataDirWithPrices(PRICES);
    let tg = await gateway({ dataDir });
    const { user, key } = await userClient(tg, { budgetUsd: COST_NANOS / 1e9, budgetPeriod: 'never' });
    const client = () => new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    // The budget is exactly one answer: a 1-token reservation fits, the answer then uses it all up.
    await client().chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
    await tg.close();
    tg = await gateway({ dataDir });
    try {
      assert.equal(await spentNanos(tg, user.id, 1), COST_NANOS);
      const refused = await ask(client());
      assert.equal(refused.status, 402);
      assert.match(refused.message, /used up\. This budget does not reset/);
    } finally {
      await tg.close();
    }
  });
});

/** [time zone, period, now, the instant the budget resets] */
const ROLLOVERS: Array<[string, BudgetPeriod, string, string]> = [
  ['UTC', 'daily', '2026-11-21T10:00:00Z', '2026-11-22T00:00:00.000Z'],
  ['UTC', 'weekly', '2026-11-21T10:00:00Z', '2026-11-23T00:00:00.000Z'], // Saturday → Monday
  ['UTC', 'monthly', '2026-12-15T10:00:00Z', '2027-01-01T00:00:00.000Z'], // a 31-day month
  ['UTC', 'monthly', '2027-02-10T10:00:00Z', '2027-03-01T00:00:00.000Z'], // February
  ['Asia/Tokyo', 'daily', '2026-11-21T10:00:00Z', '2026-11-21T15:00:00.000Z'], // local midnight is 15:00 UTC
  ['Asia/Tokyo', 'weekly', '2026-11-21T10:00:00Z', '2026-11-22T15:00:00.000Z'], // Monday 00:00 JST
  ['Asia/Tokyo', 'monthly', '2027-01-31T16:00:00Z', '2027-02-28T15:00:00.000Z'], // Feb 1 01:00 JST → Mar 1 JST
  ['America/New_York', 'monthly', '2026-10-15T12:00:00Z', '2026-11-01T04:00:00.000Z'], // before the DST change on Nov 1
];

describe('period rollover at the exact boundary', () => {
  for (const timeZone of [...new Set(ROLLOVERS.map((r) => r[0]))]) {
    test(`in ${timeZone}: refused until the last millisecond of the period, served from the boundary on`, async () => {
      const clock = manualClock(0);
      const tg = await gateway({ clock, timeZone });
      try {
        for (const [, period, nowIso, resetIso] of ROLLOVERS.filter((r) => r[0] === timeZone)) {
          clock.set(Date.parse(nowIso));
          // Fits one request's reservation (≥ 800,000) but not a second after 670,000 is spent.
          const { user, client } = await userClient(tg, { budgetUsd: 0.001, budgetPeriod: period });
          assert.equal((await ask(client)).status, 200, `${period} ${nowIso}: first request`);
          const refused = await ask(client);
          assert.equal(refused.status, 402, `${period} ${nowIso}: second request`);
          assert.ok(refused.message.includes(`resets at ${resetIso}`), `${period}: ${refused.message}`);
          clock.set(Date.parse(resetIso) - 1);
          assert.equal((await ask(client)).status, 402, `${period}: 1 ms before the boundary`);
          clock.set(Date.parse(resetIso));
          assert.equal((await ask(client)).status, 200, `${period}: at the boundary`);
          assert.equal(await spentNanos(tg, user.id, 4), COST_NANOS, `${period}: the new period holds only the new request`);
        }
      } finally {
        await tg.close();
      }
    });
  }
});

describe('GET /api/account', () => {
  test('shows the caller\'s budget, spend, reset time and usage this period', async () => {
    const clock = manualClock(Date.parse('2026-11-21T10:00:00Z'));
    const tg = await gateway({ clock });
    try {
      const { user, client, key } = await userClient(tg, { budgetUsd: 5, budgetPeriod: 'monthly', rpm: 100 });
      assert.equal((await ask(client)).status, 200);
      const res = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        object: string; user: unknown; budget: unknown;
        rate_limits: { requests: { limit: number; remaining: number } };
        usage: { requests: number; prompt_tokens: number; completion_tokens: number; cost_usd: number };
      };
      assert.equal(body.object, 'account');
      assert.deepEqual(body.user, { id: user.id, name: user.name, email: null });
      assert.deepEqual(body.budget, {
        limit_usd: 5, spent_usd: 0.00067, reserved_usd: 0, remaining_usd: 4.99933, period: 'monthly',
        period_start: '2026-11-01T00:00:00.000Z', resets_at: '2026-12-01T00:00:00.000Z', time_zone: 'UTC',
      });
      assert.equal(body.rate_limits.requests.limit, 100);
      assert.equal(body.rate_limits.requests.remaining, 99);
      assert.equal(body.usage.requests, 1);
      assert.equal(body.usage.prompt_tokens, 19);
      assert.equal(body.usage.completion_tokens, 24);
      assert.equal(body.usage.cost_usd, 0.00067);
      const anonymous = await fetch(`${tg.gateway.origin}/api/account`);
      assert.equal(anonymous.status, 401);
    } finally {
      await tg.close();
    }
  });
});
