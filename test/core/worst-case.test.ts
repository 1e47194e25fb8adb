/** `worstCaseTokens` (core/worst-case.ts): what budget and rate-limit both reserve. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { worstCaseTokens } from '../../core/worst-case.ts';
import { loadTokenEstimator } from '../../core/token-estimate.ts';
import type { Exchange } from '../../core/exchange.ts';
import type { ChatCompletionRequest } from '../../core/chat-types.ts';

const tokens = await loadTokenEstimator();
const exchange = (request: ChatCompletionRequest | null) => ({ request, promptTokensEstimate: null, generated: [] }) as unknown as Exchange;
const messages = [{ role: 'user' as const, content: 'How many tokens is this?' }];

describe('worst case of a model call', () => {
  test('is the counted prompt plus the output cap', () => {
    const ex = exchange({ model: 'm', messages, max_tokens: 100 });
    const prompt = tokens.promptTokens(exchange({ model: 'm', messages }));
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096), { promptTokens: prompt, outputTokens: 100, outputTokensPerChoice: 100, choices: 1 });
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
    const ex = { request: { model: 'm', messages: [] }, embedding: { model: 'm', input: texts, dimensions: null, encodingFormat: 'float' }, promptTokensEstimate: null, generated: [] } as unknown as Exchange;
    const inputs = tokens.count(texts[0]!) + tokens.count(texts[1]!);
    assert.deepEqual(worstCaseTokens(ex, tokens, 4096), { promptTokens: inputs, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 });
    const ids = { request: { model: 'm', messages: [] }, embedding: { model: 'm', input: [[1, 2, 3], [4]], dimensions: null, encodingFormat: 'float' }, promptTokensEstimate: null, generated: [] } as unknown as Exchange;
    assert.equal(worstCaseTokens(ids, tokens, 4096).promptTokens, 4, 'token-id inputs count one token per id');
  });

  test('is zero for an exchange that is not a model call', () => {
    assert.deepEqual(worstCaseTokens(exchange(null), tokens, 4096), { promptTokens: 0, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 });
  });
});
