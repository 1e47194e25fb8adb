/**
 * The budget reserves the prompt as the target provider counts it (issue 15 item 2): the router puts
 * the provider's `promptTokenRules` on `ex.target`, and the estimate counts an image by that
 * provider's documented rule. Through the whole gateway, the openai SDK's wire format to OpenAI,
 * Anthropic and Gemini simulators (translated), one 2000×1500 PNG in the prompt. The capped output
 * (`x-tollgate-max-tokens-capped`) shows the reserved prompt: with $10 per million tokens both ways
 * and $0.10 left, `capped = 10,000 − prompt tokens`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { dataUrl, png } from '../helpers/image-headers.ts';

const PRICES = [
  { model: 'gpt-4o', provider: 'openai', input: 10, output: 10 },
  { model: 'claude-sonnet-4-5', provider: 'anthropic', input: 10, output: 10 },
  { model: 'gemini-2.5-flash', provider: 'gemini', input: 10, output: 10 },
];
let openai: OpenAISimulator;
let anthropic: AnthropicSimulator;
let gemini: GeminiSimulator;
let tg: TestGateway;

before(async () => {
  [openai, anthropic, gemini] = await Promise.all([startOpenAISimulator(), startAnthropicSimulator(), startGeminiSimulator()]);
});
after(async () => {
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
});

/** The prompt tokens the budget reserved for one request with the image, read from the cap. */
async function reservedPrompt(model: string): Promise<number> {
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices(PRICES),
    providers: {
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-a' },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'g-key' },
    },
    user: { budgetUsd: 0.1 },
  });
  try {
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tg.apiKey}` },
      body: JSON.stringify({
        model, max_tokens: 128_000,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this photo?' }, { type: 'image_url', image_url: { url: dataUrl(png(2000, 1500), 'image/png') } }] }],
      }),
    });
    const body = await res.text();
    assert.equal(res.status, 200, body);
    // $0.10 = 100,000,000 nanos; each token in or out costs 10,000.
    return 10_000 - Number(res.headers.get('x-tollgate-max-tokens-capped'));
  } finally {
    await tg.close();
  }
}

describe('the budget reserves the prompt by the target provider\'s rules', () => {
  test('one 2000×1500 image costs 765 for GPT-4o, 1564 for Claude Sonnet 4.5, 1548 for Gemini', async () => {
    const openaiPrompt = await reservedPrompt('openai/gpt-4o');
    const anthropicPrompt = await reservedPrompt('anthropic/claude-sonnet-4-5');
    const geminiPrompt = await reservedPrompt('gemini/gemini-2.5-flash');
    // The text around the image is the same few tokens for all three: only the image rule differs.
    const text = openaiPrompt - 765;
    assert.ok(text > 5 && text < 20, `text tokens: ${text}`);
    assert.equal(anthropicPrompt - text, 1564, 'Claude: 2000×1500 → 1269×952, 46×34 patches of 28 px');
    assert.equal(geminiPrompt - text, 1548, 'Gemini: 768-px crop units, 3×2 × 258');
  });
});
