/**
 * Model groups with `strategy: "balance"` and budgets across attempts, through the whole gateway:
 * traffic split by weight (±5 % over 2,000 requests), the least busy deployment preferred, and a
 * budget reserved once per client request whatever the number of attempts, its output cap carried
 * to every attempt.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';

let simA: OpenAISimulator;
let simB: OpenAISimulator;

before(async () => {
  simA = await startOpenAISimulator({ slowMs: 1_500 });
  simB = await startOpenAISimulator({ slowMs: 1_500 });
});
after(async () => {
  await Promise.all([simA.close(), simB.close()]);
});

const providers = () => ({
  a: { type: 'openai', baseUrl: simA.baseUrl, apiKey: 'sk-a' },
  b: { type: 'openai', baseUrl: simB.baseUrl, apiKey: 'sk-b' },
});

const chat = (tg: TestGateway, model: string, extra: Record<string, unknown> = {}) => fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${tg.apiKey}` },
  body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra }),
});

describe('balance', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      providers: providers(),
      config: { logger: false, metrics: false },
      router: {
        models: {
          weighted: { strategy: 'balance', deployments: [{ provider: 'a', model: 'gpt-4o-mini', weight: 3 }, { provider: 'b', model: 'gpt-4o-mini', weight: 1 }] },
          lopsided: { strategy: 'balance', deployments: [{ provider: 'a', model: 'sim-slow', weight: 1000 }, { provider: 'b', model: 'sim-slow', weight: 1 }] },
        },
      },
    });
  });
  after(() => tg.close());

  test('splits 2,000 requests by weight (3:1) within ±5 %', async () => {
    const [a0, b0] = [simA.requests.length, simB.requests.length];
    for (let i = 0; i < 2_000; i++) {
      const res = await chat(tg, 'weighted');
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const a = simA.requests.length - a0;
    const b = simB.requests.length - b0;
    assert.equal(a + b, 2_000);
    const share = a / 2_000;
    assert.ok(Math.abs(share - 0.75) <= 0.75 * 0.05, `deployment a served ${a} of 2000 (${(share * 100).toFixed(1)} %)`);
  });

  test('prefers the deployment with no request in flight, whatever the weights', async () => {
    // The simulators hold each sim-slow request 1.5 s. A round counts only when the first request was
    // still unanswered once the second reached a simulator; one that a busy machine took longer over
    // is run again (at most 10 rounds in all).
    let counted = 0;
    for (let round = 0; counted < 3; round++) {
      assert.ok(round < 10, `only ${counted} of 10 rounds sent the second request within the first one's 1.5 s`);
      const [a0, b0] = [simA.requests.length, simB.requests.length];
      let firstAnswered = false;
      const first = chat(tg, 'lopsided').finally(() => (firstAnswered = true));
      // The first request is in flight on one deployment once its simulator has it.
      while (simA.requests.length + simB.requests.length === a0 + b0) await new Promise((r) => setTimeout(r, 10));
      const busy = simA.requests.length > a0 ? 'a' : 'b';
      const second = chat(tg, 'lopsided');
      while (simA.requests.length + simB.requests.length < a0 + b0 + 2) await new Promise((r) => setTimeout(r, 10));
      const inFlight = !firstAnswered;
      const idle = busy === 'a' ? simB : simA;
      const toIdle = idle.requests.length - (busy === 'a' ? b0 : a0);
      await Promise.all([(await first).arrayBuffer(), (await second).arrayBuffer()]);
      if (!inFlight) continue;
      assert.equal(toIdle, 1, `round ${round}: the second request went to the idle deployment`);
      counted++;
    }
  });
});

describe('budgets across attempts', () => {
  test('one reservation per client request: the output cap reaches every attempt and the spend is one answer\'s cost', async () => {
    const tg = await startTestGateway({
      dataDir: await dataDirWithPrices([
        // $1 in / $10 out per million: one output token is 10,000 nano-USD.
        { model: 'sim-500', input: 1, output: 10 },
        { model: 'gpt-4o-mini', input: 1, output: 10 },
      ]),
      providers: providers(),
      user: { budgetUsd: 0.02 },
      router: { models: { 'with-fallback': { deployments: [{ provider: 'a', model: 'sim-500' }, { provider: 'b', model: 'gpt-4o-mini' }] } } },
    });
    try {
      const res = await chat(tg, 'with-fallback', { max_tokens: 128_000 });
      assert.equal(res.status, 200, await res.clone().text());
      await res.json();
      const capped = Number(res.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(capped > 1_900 && capped < 2_000, String(capped));
      assert.equal(simA.requests.at(-1)!.body!.max_tokens, capped, 'the failed attempt carried the cap');
      assert.equal(simB.requests.at(-1)!.body!.max_tokens, capped, 'the fallback attempt carried the same cap');
      const row = await tg.logRow(res.headers.get('x-request-id')!);
      assert.equal(row.provider, 'b');
      assert.ok(row.cost_nanos! > 0);
      const user = await tg.gateway.store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', tg.userId).executeTakeFirstOrThrow();
      assert.equal(user.budget_spent_nanos, row.cost_nanos, 'settled once, to the served answer\'s cost');
      // A second request still fits: nothing of the first stayed reserved.
      const again = await chat(tg, 'with-fallback', { max_tokens: 100 });
      assert.equal(again.status, 200);
      await again.arrayBuffer();
    } finally {
      await tg.close();
    }
  });

  test('the reservation covers the dearest deployment: an unpriced first deployment does not leave the budget open', async () => {
    const tg = await startTestGateway({
      // Only the fallback is priced ($1 in / $10 out per million, for provider b only).
      dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'b', input: 1, output: 10 }]),
      providers: providers(),
      user: { budgetUsd: 0.02 },
      router: { models: { 'free-first': { deployments: [{ provider: 'a', model: 'sim-500' }, { provider: 'b', model: 'gpt-4o-mini' }] } } },
    });
    try {
      const res = await chat(tg, 'free-first', { max_tokens: 128_000 });
      assert.equal(res.status, 200, await res.clone().text());
      await res.json();
      // Capped to what $0.02 pays at b's price, although the first deployment has no price.
      const capped = Number(res.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(capped > 1_900 && capped < 2_000, String(capped));
    } finally {
      await tg.close();
    }
  });
});
