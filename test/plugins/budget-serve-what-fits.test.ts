/**
 * Serve what fits (budget `overflow: "cap"`, the default): a request whose worst case does not fit
 * the remaining budget is forwarded with its output limit lowered to what the budget pays for, in the
 * client's dialect and the provider's field, with `x-tollgate-max-tokens-capped`; below the floor it
 * is refused with 402. Through the whole gateway: the openai SDK to an OpenAI simulator (translated)
 * and raw Messages requests to an Anthropic simulator (native pass-through, Claude Code's 128000).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { affordableTokens } from '../../plugins/budget/index.ts';

const PRICES = [
  // $1 in / $10 out per million: one output token is 10,000 nano-USD.
  { model: 'gpt-4o-mini', provider: 'openai', input: 1, output: 10 },
  { model: 'claude-sonnet-4-5', provider: 'anthropic', input: 1, output: 10 },
];
let openai: OpenAISimulator;
let anthropic: AnthropicSimulator;

before(async () => {
  openai = await startOpenAISimulator();
  anthropic = await startAnthropicSimulator();
});
after(async () => {
  await openai.close();
  await anthropic.close();
});

async function gateway(budgetUsd: number, budgetConfig: Record<string, unknown> = {}): Promise<TestGateway> {
  return startTestGateway({
    dataDir: await dataDirWithPrices(PRICES),
    providers: {
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-a' },
    },
    config: { budget: budgetConfig },
    user: { budgetUsd },
  });
}

const chat = (tg: TestGateway, body: Record<string, unknown>) => fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tg.apiKey}` },
  body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Write a long story.' }], ...body }),
});

const messages = (tg: TestGateway, body: string) => fetch(`${tg.gateway.origin}/api/v1/messages`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': tg.apiKey, 'anthropic-version': '2023-06-01' }, body,
});

describe('serve what fits', () => {
  test('finds the most tokens a remainder pays for, and null below the floor', () => {
    const cost = (tokens: number) => 1_000 + tokens * 10_000;
    assert.equal(affordableTokens(cost, 20_000_000, 256, 128_000), 1999);
    assert.equal(affordableTokens(cost, 1_000 + 256 * 10_000, 256, 128_000), 256);
    assert.equal(affordableTokens(cost, 1_000 + 256 * 10_000 - 1, 256, 128_000), null);
    assert.equal(affordableTokens(cost, 10 ** 12, 256, 500), 500, 'never above what was asked');
  });

  test('a chat completion whose worst case does not fit is capped to what $0.02 pays, in the upstream body and a header', async () => {
    const tg = await gateway(0.02);
    try {
      const res = await chat(tg, { max_tokens: 128_000 });
      assert.equal(res.status, 200);
      await res.json();
      const capped = Number(res.headers.get('x-tollgate-max-tokens-capped'));
      // $0.02 = 20,000,000 nanos, minus the prompt (a few tokens at 1,000 nanos each), at 10,000 per output token.
      assert.ok(capped > 1990 && capped < 2000, String(capped));
      assert.equal(openai.requests.at(-1)!.body!.max_tokens, capped);
    } finally {
      await tg.close();
    }
  });

  test('n: 3 divides what fits among three outputs', async () => {
    const tg = await gateway(0.02);
    try {
      const res = await chat(tg, { max_completion_tokens: 128_000, n: 3 });
      assert.equal(res.status, 200);
      await res.json();
      const capped = Number(res.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(capped > 660 && capped < 667, String(capped));
      assert.equal(openai.requests.at(-1)!.body!.max_completion_tokens, capped, 'the field the client used');
    } finally {
      await tg.close();
    }
  });

  test('a request that fits is not capped', async () => {
    const tg = await gateway(0.02);
    try {
      const res = await chat(tg, { max_tokens: 100 });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-tollgate-max-tokens-capped'), null);
      assert.equal(openai.requests.at(-1)!.body!.max_tokens, 100);
    } finally {
      await tg.close();
    }
  });

  test('Claude Code\'s max_tokens 128000 passes through natively with only max_tokens lowered', async () => {
    const tg = await gateway(0.02);
    try {
      const body = JSON.stringify({
        model: 'anthropic/claude-sonnet-4-5', max_tokens: 128_000, system: [{ type: 'text', text: 'Agent.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Fix the bug.' }],
      });
      const res = await messages(tg, body);
      assert.equal(res.status, 200, await res.clone().text());
      await res.json();
      const capped = Number(res.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(capped > 1900 && capped < 2000, String(capped));
      const expected = body.replace('"anthropic/claude-sonnet-4-5"', '"claude-sonnet-4-5"').replace('"max_tokens":128000', `"max_tokens":${capped}`);
      assert.equal(anthropic.lastMessages().rawBody, expected);
    } finally {
      await tg.close();
    }
  });

  test('below the floor of output tokens the request is refused with 402, in the dialect\'s shape', async () => {
    // $0.002 pays ~199 output tokens: under the 256 floor.
    const tg = await gateway(0.002);
    try {
      const res = await messages(tg, JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 128_000, messages: [{ role: 'user', content: 'Hi' }] }));
      assert.equal(res.status, 402);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.error.type, 'billing_error');
      assert.match(body.error.message, /resets at/);
      const small = await chat(tg, { max_tokens: 100 });
      assert.equal(small.status, 200, 'what fits is still served');
      await small.json();
    } finally {
      await tg.close();
    }
  });

  test('overflow "refuse" keeps the old rule: a worst case that does not fit is 402', async () => {
    const tg = await gateway(0.02, { overflow: 'refuse' });
    try {
      const res = await chat(tg, { max_tokens: 128_000 });
      assert.equal(res.status, 402);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'budget_exceeded');
    } finally {
      await tg.close();
    }
  });
});
