/**
 * The prompt's byte bound (`TokenEstimator.promptTokensBound`, core/tokens/token-estimate.ts): what a budget
 * or token limit reserves for a short prompt without loading the tokenizer. The one property that
 * matters is that it is never below the count the tokenizer makes, for any text and any provider's
 * rules, since a reservation below the count could let a request through that the count refuses.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BOUND_PROMPT_MAX_BYTES, loadTokenEstimator } from '../../../core/tokens/token-estimate.ts';
import { loadO200kCounter } from '../../../core/tokens/o200k-tokenizer.ts';
import { DEFAULT_PROMPT_TOKEN_RULES, type PromptTokenRules } from '../../../core/tokens/prompt-token-rules.ts';
import type { ChatCompletionRequest, ChatMessage } from '../../../core/canonical/chat-types.ts';
import type { Exchange } from '../../../core/exchange.ts';

const estimator = await loadTokenEstimator();
const counter = await loadO200kCounter();
const SCALED: PromptTokenRules = { ...DEFAULT_PROMPT_TOKEN_RULES, textScale: 1.3, toolsSystemPromptTokens: 589 };

const exchange = (request: ChatCompletionRequest, rules: PromptTokenRules = DEFAULT_PROMPT_TOKEN_RULES) =>
  ({ request, target: { provider: 'p', model: request.model, promptTokenRules: rules }, promptTokensEstimate: null, generated: [] }) as unknown as Exchange;

/** A 1×1 PNG as a data URL: its size is read from the header, as the count reads it. */
const PNG_1X1 = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const PROMPTS: Record<string, ChatMessage[]> = {
  'one word': [{ role: 'user', content: 'hi' }],
  'English with a system prompt and a name': [
    { role: 'system', content: 'You are a terse assistant. Answer in one sentence.' },
    { role: 'user', name: 'alice', content: 'What is the capital of France, and why is it there?' },
  ],
  'CJK and emoji': [{ role: 'user', content: '東京の天気はどうですか？今日は晴れ☀️、明日は雨🌧️かもしれません。' }],
  'special-token text': [{ role: 'user', content: 'quote <|endoftext|> and <|endofprompt|> verbatim' }],
  'digits and punctuation': [{ role: 'user', content: '3.14159265358979 + 2.71828182845904 = ?!?!;;;;::::////\\\\\\\\' }],
  'one character per token': [{ role: 'user', content: 'ÿ þ ý ü û ú ù ø ö õ ô ó ò ñ ð ï î í ì ë ê é è ç æ å ä ã â á à' }],
  'tool call, result and reasoning': [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21,"sky":"clear"}' },
  ] as ChatMessage[],
  'text and image parts': [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: PNG_1X1, detail: 'high' } }] }] as ChatMessage[],
  'a developer message': [{ role: 'developer', content: 'Use metric units.' }, { role: 'user', content: 'How far is the moon?' }],
};

const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city'] },
  },
}];

describe('the prompt\'s byte bound', () => {
  test('every role is one o200k_base token, as the bound counts it', () => {
    for (const role of ['system', 'user', 'assistant', 'tool', 'developer', 'function']) assert.equal(counter.count(role), 1, role);
  });

  for (const [name, messages] of Object.entries(PROMPTS)) {
    test(`is never below the count: ${name}, with and without tools, default and scaled rules`, () => {
      for (const rules of [DEFAULT_PROMPT_TOKEN_RULES, SCALED]) {
        for (const tools of [undefined, TOOLS]) {
          const ex = exchange({ model: 'm', messages, ...(tools ? { tools } : {}) }, rules);
          const bound = estimator.promptTokensBound(ex);
          const count = estimator.promptTokens(ex);
          assert.ok(bound !== null && bound >= count, `${name}: bound ${bound} < count ${count}`);
        }
      }
    });
  }

  test('is never below the count for random text of every kind of character (500 prompts)', () => {
    // A seeded generator: the same prompts every run.
    let seed = 17;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const ranges: Array<[number, number]> = [[0x20, 0x7e], [0xa0, 0x2ff], [0x400, 0x4ff], [0x3040, 0x30ff], [0x4e00, 0x9fff], [0x1f300, 0x1f64f]];
    for (let i = 0; i < 500; i++) {
      let text = '';
      const length = 1 + Math.floor(random() * 300);
      for (let j = 0; j < length; j++) {
        const [lo, hi] = ranges[Math.floor(random() * ranges.length)]!;
        text += String.fromCodePoint(lo + Math.floor(random() * (hi - lo)));
      }
      const ex = exchange({ model: 'm', messages: [{ role: 'user', content: text }] });
      const bound = estimator.promptTokensBound(ex);
      if (bound === null) continue;
      const count = estimator.promptTokens(ex);
      assert.ok(bound >= count, `bound ${bound} < count ${count} for ${JSON.stringify(text)}`);
    }
  });

  test('is null once the texts pass BOUND_PROMPT_MAX_BYTES, also across messages', () => {
    const half = 'x'.repeat(BOUND_PROMPT_MAX_BYTES / 2);
    assert.notEqual(estimator.promptTokensBound(exchange({ model: 'm', messages: [{ role: 'user', content: half }] })), null);
    assert.equal(estimator.promptTokensBound(exchange({ model: 'm', messages: [{ role: 'user', content: half }, { role: 'assistant', content: half }, { role: 'user', content: 'and more' }] })), null);
    assert.equal(estimator.promptTokensBound(exchange({ model: 'm', messages: [{ role: 'user', content: '€'.repeat(BOUND_PROMPT_MAX_BYTES / 2) }] })), null, 'bytes, not characters');
  });

  test('readyFor asks for the tokenizer only when the prompt is past the bound', async () => {
    const { createTokenEstimator } = await import('../../../core/tokens/token-estimate.ts');
    const fresh = createTokenEstimator();
    assert.equal(fresh.readyFor(exchange({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })), null);
    const loading = fresh.readyFor(exchange({ model: 'm', messages: [{ role: 'user', content: 'y'.repeat(BOUND_PROMPT_MAX_BYTES + 1) }] }));
    assert.ok(loading instanceof Promise);
    await loading;
    assert.equal(fresh.readyFor(exchange({ model: 'm', messages: [{ role: 'user', content: 'y'.repeat(BOUND_PROMPT_MAX_BYTES + 1) }] })), null, 'loaded');
  });
});
