/**
 * Upstream usage reports are validated in one place for every provider and dialect (issue 14 item 1):
 * a count that is not an integer from 0 to 10,000,000 (here `1e22` output tokens) is treated as
 * missing, the exchange is billed from local counts (`usage_estimated`), a warning names the
 * provider, model and field, and the request-log row is written with a finite integer cost (before,
 * the batched writer handed SQLite a non-integer and the process died).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { startHostileGateway, type HostileGateway } from '../../helpers/hostile-upstream.ts';
import { invalidUsageField, MAX_REPORTED_TOKENS, tokenCountsOf } from '../../../core/canonical/chat-types.ts';
import { costOf, partNanos } from '../../../core/money/cost.ts';
import type { ModelPrice } from '../../../core/money/price-table.ts';

let hostile: HostileGateway;
let tg: TestGateway;

before(async () => {
  const dataDir = await dataDirWithPrices([
    { model: 'huge-usage', provider: 'openai', input: 1, output: 2 },
    { model: 'anthropic/huge-usage', provider: 'anthropic', input: 1, output: 2 },
  ]);
  hostile = await startHostileGateway({ openaiKey: 'sk-openai-usage-test', anthropicKey: 'sk-ant-usage-test', dataDir });
  tg = hostile.tg;
});
after(() => hostile.close());

const call = (path: string, body: Record<string, unknown>) => tg.post(path, body);

const messages = [{ role: 'user', content: 'Say hello.' }];
const cases: Array<[string, string, Record<string, unknown>]> = [
  ['chat, translated, non-stream', '/chat/completions', { model: 'openai/huge-usage', messages }],
  ['chat, translated, stream', '/chat/completions', { model: 'openai/huge-usage', messages, stream: true, stream_options: { include_usage: true } }],
  ['chat to Anthropic, translated, stream', '/chat/completions', { model: 'anthropic/huge-usage', messages, stream: true }],
  ['Messages, native pass-through, non-stream', '/messages', { model: 'anthropic/huge-usage', max_tokens: 50, messages }],
  ['Messages, native pass-through, stream', '/messages', { model: 'anthropic/huge-usage', max_tokens: 50, messages, stream: true }],
  ['Responses, native pass-through, non-stream', '/responses', { model: 'openai/huge-usage', input: 'Say hello.' }],
  ['Responses, native pass-through, stream', '/responses', { model: 'openai/huge-usage', input: 'Say hello.', stream: true }],
];

describe('an upstream reporting 1e22 output tokens', () => {
  for (const [name, path, body] of cases) {
    test(`is billed from local counts with a warning: ${name}`, async () => {
      const res = await call(path, body);
      assert.equal(res.status, 200, res.text);
      const row = await tg.logRow(res.requestId);
      assert.equal(row.status, 200);
      assert.equal(row.usage_estimated, 1);
      assert.ok(Number.isSafeInteger(row.completion_tokens) && row.completion_tokens! > 0 && row.completion_tokens! < 100, String(row.completion_tokens));
      assert.ok(Number.isSafeInteger(row.cost_nanos) && row.cost_nanos! > 0, String(row.cost_nanos));
      const warning = tg.serverLog.map((l) => JSON.parse(l)).find((l) => l.requestId === res.requestId && /usage report/.test(l.msg));
      assert.ok(warning, 'a warning names the exchange');
      assert.equal(warning.field, 'completion_tokens');
      assert.match(String(warning.provider), /^(openai|anthropic)$/);
      assert.match(String(warning.model), /huge-usage/);
    });
  }
});

describe('invalidUsageField and tokenCountsOf', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a huge count', { prompt_tokens: 1, completion_tokens: 1e22 }, 'completion_tokens'],
    ['one past the cap', { prompt_tokens: MAX_REPORTED_TOKENS + 1, completion_tokens: 1 }, 'prompt_tokens'],
    ['a negative count', { prompt_tokens: -5, completion_tokens: 1 }, 'prompt_tokens'],
    ['a fraction', { prompt_tokens: 5, completion_tokens: 1.5 }, 'completion_tokens'],
    ['NaN', { prompt_tokens: Number.NaN, completion_tokens: 1 }, 'prompt_tokens'],
    ['a string', { prompt_tokens: '12', completion_tokens: 1 }, 'prompt_tokens'],
    ['a huge cache read', { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 1e300 } }, 'prompt_tokens_details.cached_tokens'],
    ['an infinite cache write', { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cache_write_tokens: Infinity } }, 'prompt_tokens_details.cache_write_tokens'],
  ];
  for (const [what, usage, field] of bad) {
    test(`refuses ${what} naming ${field}`, () => {
      assert.equal(invalidUsageField(usage as never)?.field, field);
      assert.equal(tokenCountsOf(usage as never), null);
    });
  }
  test('accepts the cap itself, zeros and absent fields', () => {
    assert.deepEqual(tokenCountsOf({ prompt_tokens: MAX_REPORTED_TOKENS, completion_tokens: 0, total_tokens: MAX_REPORTED_TOKENS, prompt_tokens_details: null }),
      { promptTokens: MAX_REPORTED_TOKENS, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 });
  });
});

describe('cost arithmetic stays in safe integers', () => {
  const price = (usd: number): ModelPrice => ({
    model: 'm', provider: null, input_price_per_million: usd, output_price_per_million: usd,
    cached_input_price_per_million: usd, cache_write_price_per_million: usd, source: 'manual',
  });
  test('the largest valid usage at the largest valid price is exact', () => {
    const cost = costOf(price(100_000), { promptTokens: MAX_REPORTED_TOKENS, completionTokens: MAX_REPORTED_TOKENS, cachedTokens: 0, cacheWriteTokens: 0 });
    assert.equal(cost.totalNanos, 2e15);
    assert.ok(Number.isSafeInteger(cost.totalNanos));
  });
  test('a price stored before the bound (2e15 USD/M) and a huge count give a safe integer, never a float past 2^53', () => {
    const cost = costOf(price(2e15), { promptTokens: 1e22, completionTokens: 1e22, cachedTokens: 0, cacheWriteTokens: 0 });
    for (const nanos of [cost.totalNanos, cost.inputNanos, cost.outputNanos]) assert.ok(Number.isSafeInteger(nanos), String(nanos));
    assert.ok(Number.isSafeInteger(partNanos(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)));
  });
  test('NaN, Infinity and negative prices bill nothing instead of NaN', () => {
    for (const usd of [Number.NaN, Infinity, -1]) {
      assert.equal(costOf(price(usd), { promptTokens: 10, completionTokens: 10, cachedTokens: 0, cacheWriteTokens: 0 }).totalNanos, 0);
    }
  });
});
