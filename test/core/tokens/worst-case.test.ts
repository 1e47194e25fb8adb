/** `worstCaseTokens` (core/tokens/worst-case.ts): what budget and rate-limit both reserve. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { worstCaseTokens } from '../../../core/tokens/worst-case.ts';
import { BOUND_PROMPT_MAX_BYTES, loadTokenEstimator } from '../../../core/tokens/token-estimate.ts';
import type { Exchange } from '../../../core/exchange.ts';
import type { ChatCompletionRequest } from '../../../core/canonical/chat-types.ts';

const tokens = await loadTokenEstimator();
const exchange = (request: ChatCompletionRequest | null) => ({ request, promptTokensEstimate: null, generated: [] }) as unknown as Exchange;
const messages = [{ role: 'user' as const, content: 'How many tokens is this?' }];

describe('worst case of a model call', () => {
  test('is the counted prompt plus the output cap', () => {
    const ex = exchange({ model: 'm', messages, max_tokens: 100 });
    const prompt = tokens.promptTokens(exchange({ model: 'm', messages }));
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096, true), { promptTokens: prompt, promptBound: false, outputTokens: 100, outputTokensPerChoice: 100, choices: 1 });
  });

  test('a short prompt is its byte bound unless exact is asked: 3 + 3 per message + the role (1) + the text\'s bytes', () => {
    const ex = exchange({ model: 'm', messages, max_tokens: 100 });
    const bound = 3 + 3 + 1 + Buffer.byteLength(messages[0]!.content);
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096), { promptTokens: bound, promptBound: true, outputTokens: 100, outputTokensPerChoice: 100, choices: 1 });
    assert.ok(bound > tokens.promptTokens(ex), 'above the count');
  });

  test('a prompt past the bound\'s maximum is counted', () => {
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(BOUND_PROMPT_MAX_BYTES / 45) + 1);
    const ex = exchange({ model: 'm', messages: [{ role: 'user', content: long }], max_tokens: 100 });
    assert.equal(tokens.promptTokensBound(ex), null);
    const worst = worstCaseTokens(ex, tokens, 4096);
    assert.equal(worst.promptBound, false);
    assert.equal(worst.promptTokens, tokens.promptTokens(ex));
  });

  test('prefers max_completion_tokens, falls back to the configured estimate', () => {
    assert.equal(worstCaseTokens(exchange({ model: 'm', messages, max_tokens: 100, max_completion_tokens: 50 }), tokens, 4096).outputTokens, 50);
    assert.equal(worstCaseTokens(exchange({ model: 'm', messages }), tokens, 4096).outputTokens, 4096);
  });

  test('multiplies the output cap by n choices', () => {
    assert.equal(worstCaseTokens(exchange({ model: 'm', messages, max_tokens: 100, n: 3 }), tokens, 4096).outputTokens, 300);
    assert.equal(worstCaseTokens(exchange({ model: 'm', messages, n: 2.7 }), tokens, 10).outputTokens, 20);
    assert.equal(worstCaseTokens(exchange({ model: 'm', messages, max_tokens: 7, n: 0 }), tokens, 10).outputTokens, 7);
  });

  test('of an embeddings call is its inputs\' tokens and no output, whatever the default output estimate', () => {
    const texts = ['first text to embed', 'second'];
    const ex = { request: { model: 'm', input: texts, dimensions: null, encodingFormat: 'float' }, promptTokensEstimate: null, generated: [] } as unknown as Exchange;
    const inputs = tokens.count(texts[0]!) + tokens.count(texts[1]!);
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096, true), { promptTokens: inputs, promptBound: false, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 });
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096), { promptTokens: 25, promptBound: true, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 }, 'bounded by their 19 + 6 bytes');
    const ids = { request: { model: 'm', input: [[1, 2, 3], [4]], dimensions: null, encodingFormat: 'float' }, promptTokensEstimate: null, generated: [] } as unknown as Exchange;
    assert.equal(worstCaseTokens(ids, tokens, 4096).promptTokens, 4, 'token-id inputs count one token per id');
  });

  test('is zero for an exchange that is not a model call', () => {
    assert.deepEqual(worstCaseTokens(exchange(null), tokens, 4096), { promptTokens: 0, promptBound: false, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 });
  });
});
