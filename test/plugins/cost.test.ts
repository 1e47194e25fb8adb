/**
 * Every token billed: exact cost from the usage upstreams report (OpenAI- and Anthropic-shaped,
 * cached tokens included), streams with and without include_usage, usage counted locally when the
 * upstream reports none or the client leaves mid-stream, and unpriced models logged as unpriced.
 * Costs are integer nano-USD: $0.15 per million tokens is 150 nanos per token.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, simStreamText, SIM_REPLY, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startAnthropicSimulator, SIM_REPLY as ANTHROPIC_REPLY, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';

const messages = [{ role: 'user' as const, content: 'Say hello.' }];
// gpt-4o-mini at $0.15 / $0.60 per M, cache reads $0.075: SIM_USAGE is 19 prompt (3 cached) + 24 completion.
const OPENAI_COST_NANOS = 16 * 150 + 3 * 75 + 24 * 600; // 17,025
// claude-sonnet-4-5 at $3 / $15 per M, cache reads $0.30, cache writes $3.75: 12 input + 5 read + 3 written, 9 output.
const ANTHROPIC_COST_NANOS = 12 * 3_000 + 5 * 300 + 3 * 3_750 + 9 * 15_000; // 183,750

let openaiSim: OpenAISimulator;
let anthropicSim: AnthropicSimulator;
let tg: TestGateway;

/** The user's stored spend, once the ledger's batched write (due 20 ms after a settlement) ran. */
async function spentNanos(): Promise<number> {
  await new Promise((r) => setTimeout(r, 50));
  const row = await tg.gateway.store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', tg.userId).executeTakeFirstOrThrow();
  return row.budget_spent_nanos;
}

before(async () => {
  openaiSim = await startOpenAISimulator({ dripMs: 10 });
  anthropicSim = await startAnthropicSimulator();
  const dataDir = await dataDirWithPrices([
    { model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 },
    { model: 'sim-no-usage', provider: 'openai', input: 0.15, output: 0.6 },
    { model: 'sim-drip', provider: 'openai', input: 1, output: 2 },
    { model: 'claude-sonnet-4-5-20250929', provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
  ]);
  tg = await startTestGateway({
    dataDir,
    providers: {
      openai: { type: 'openai', baseUrl: openaiSim.baseUrl, apiKey: 'sk-test' },
      anthropic: { type: 'anthropic', baseUrl: anthropicSim.baseUrl, apiKey: 'sk-ant-test' },
    },
    config: { pricing: { seedOnFirstStart: false } },
  });
});

after(async () => {
  await tg?.close();
  await openaiSim?.close();
  await anthropicSim?.close();
});

describe('cost of a request', () => {
  test('a non-streamed OpenAI answer costs its cached tokens at the cached rate and the rest at the input rate', async () => {
    const before = await spentNanos();
    const { response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).withResponse();
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, OPENAI_COST_NANOS);
    assert.deepEqual([row.prompt_tokens, row.cached_tokens, row.completion_tokens, row.usage_estimated, row.unpriced], [19, 3, 24, 0, 0]);
    assert.equal((await spentNanos()) - before, OPENAI_COST_NANOS);
  });

  test('a stream without include_usage is billed from the usage the gateway asked for', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, stream: true }).withResponse();
    let usageSeen = false;
    for await (const chunk of stream) if (chunk.usage) usageSeen = true;
    assert.equal(usageSeen, false, 'the client did not ask for usage and must not get it');
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, OPENAI_COST_NANOS);
    assert.equal(row.usage_estimated, 0);
  });

  test('a stream with include_usage is billed the same and the client gets the exact usage', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } }).withResponse();
    let usage: unknown = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.equal((usage as { prompt_tokens: number }).prompt_tokens, 19);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, OPENAI_COST_NANOS);
  });

  test('an Anthropic answer bills cache reads and cache writes at their own rates, never twice', async () => {
    const { data, response } = await tg.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5-20250929', messages, max_tokens: 100 }).withResponse();
    assert.equal(data.choices[0]!.message.content, ANTHROPIC_REPLY);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.prompt_tokens, row.cached_tokens, row.cache_write_tokens, row.completion_tokens], [20, 5, 3, 9]);
    assert.equal(row.cost_nanos, ANTHROPIC_COST_NANOS);
  });

  test('a streamed Anthropic answer with include_usage gives the client the canonical usage and costs the same', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5-20250929', messages, max_tokens: 100, stream: true, stream_options: { include_usage: true } }).withResponse();
    let usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } | null = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.deepEqual([usage?.prompt_tokens, usage?.prompt_tokens_details?.cached_tokens, usage?.completion_tokens], [20, 5, 9]);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, ANTHROPIC_COST_NANOS);
  });

  test('a streamed Anthropic answer costs the same as the non-streamed one', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5-20250929', messages, max_tokens: 100, stream: true }).withResponse();
    for await (const _chunk of stream) { /* drain */ }
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, ANTHROPIC_COST_NANOS);
    assert.equal(row.usage_estimated, 0);
  });
});

describe('usage counted locally', () => {
  test('a stream whose upstream reports no usage is billed from local counts, marked estimated, and the client still gets a usage chunk', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'openai/sim-no-usage', messages, stream: true, stream_options: { include_usage: true } }).withResponse();
    let text = '';
    let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, simStreamText());
    const completionTokens = countTokens(text);
    assert.equal(usage?.completion_tokens, completionTokens);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.usage_estimated, 1);
    assert.equal(row.completion_tokens, completionTokens);
    assert.equal(row.prompt_tokens, usage?.prompt_tokens);
    assert.ok(row.prompt_tokens > countTokens(messages[0]!.content), 'the prompt count includes the message overhead');
    assert.equal(row.cost_nanos, row.prompt_tokens * 150 + completionTokens * 600);
  });

  test('a non-streamed answer without usage is billed from local counts and marked estimated', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'openai/sim-no-usage', messages }).withResponse();
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.usage_estimated, 1);
    assert.equal(row.completion_tokens, countTokens(SIM_REPLY));
    assert.ok(row.cost_nanos! > 0);
  });

  test('a client that disconnects mid-stream is billed for what was generated, marked estimated', async () => {
    const before = await spentNanos();
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'openai/sim-drip', messages, stream: true }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    let text = '';
    let received = 0;
    const upstreamCut = openaiSim.nextAbort();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (++received === 6) break; // leaving the SDK's iterator aborts the HTTP request
    }
    await upstreamCut;
    const row = await tg.logRow(requestId);
    assert.equal(row.status, 499);
    assert.equal(row.error_code, 'client_disconnected');
    assert.equal(row.usage_estimated, 1);
    assert.ok(row.completion_tokens! >= countTokens(text), `billed ${row.completion_tokens} tokens for "${text}"`);
    assert.equal(row.cost_nanos, row.prompt_tokens! * 1_000 + row.completion_tokens! * 2_000);
    assert.equal((await spentNanos()) - before, row.cost_nanos);
  });
});

describe('models without a price', () => {
  test('an unpriced model is served, costs nothing, and its log row says unpriced', async () => {
    const { data, response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o', messages }).withResponse();
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.unpriced, 1);
    assert.equal(row.cost_nanos, 0);
    assert.equal(row.prompt_tokens, 19);
  });

  test('a denied request bills nothing', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/sim-500', messages }),
    });
    assert.equal(res.status, 502);
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.equal(row.cost_nanos, null);
    assert.equal(row.unpriced, 0);
  });
});

describe('prices in the model list', () => {
  test('GET /api/models shows each model\'s per-1k prices, null for a model without a price', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/models`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    const { data } = (await res.json()) as { data: Array<{ id: string; input_price_per_1k: number | null; output_price_per_1k: number | null; cached_input_price_per_1k: number | null }> };
    const mini = data.find((m) => m.id === 'openai/gpt-4o-mini')!;
    assert.deepEqual([mini.input_price_per_1k, mini.output_price_per_1k, mini.cached_input_price_per_1k], [0.00015, 0.0006, 0.000075]);
    const unpriced = data.find((m) => m.id === 'openai/gpt-4o')!;
    assert.deepEqual([unpriced.input_price_per_1k, unpriced.output_price_per_1k], [null, null]);
  });
});
