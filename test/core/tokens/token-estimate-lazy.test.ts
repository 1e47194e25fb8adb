/**
 * The tokenizer (~27 MB resident, ~70 MB while loading) loads on the first count a request needs, not
 * at start (issue 17, footprint): a gateway whose users have no budget or token limit and whose
 * upstreams report usage never loads it, nor does one whose limited users send short prompts (their
 * byte bound is reserved); the first long prompt of a limited user loads it, once, and so does a short
 * one whose bound the budget cannot fit but whose count it can.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { createGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import { BOUND_PROMPT_MAX_BYTES, createTokenEstimator, roughTokens } from '../../../core/tokens/token-estimate.ts';

let sim: OpenAISimulator;
let tg: TestGateway;
const loadedLines = (gateway = tg) => gateway.serverLog.filter((line) => line.includes('tokenizer loaded'));

/** A gateway in front of the simulator, gpt-4o-mini priced at $10 / $20 per million tokens. */
async function startPricedGateway(): Promise<TestGateway> {
  return startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 }]),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false } },
  });
}

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startPricedGateway();
});
after(async () => {
  await tg?.close();
  await sim?.close();
});

test('unlimited users with upstream-reported usage never load the tokenizer', async () => {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages });
  const stream = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, stream: true });
  for await (const _ of stream) { /* drain */ }
  assert.deepEqual(loadedLines(), []);
});

async function limitedClient(name: string, limits: { budgetUsd?: number; tpm?: number }, gateway = tg) {
  const user = await createGatewayUser(gateway.gateway.store.db, { name, ...limits });
  const { key } = await createApiKey(gateway.gateway.store.db, { gatewayUserId: user.id });
  return new OpenAI({ apiKey: key, baseURL: `${gateway.gateway.origin}/api/v1`, maxRetries: 0 });
}

test('a user with a budget and a token limit sending short prompts is served without loading it', async () => {
  const client = await limitedClient('limited-short', { budgetUsd: 5, tpm: 100_000 });
  const answers = await Promise.all([1, 2, 3].map(() =>
    client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40 })));
  assert.equal(answers.length, 3);
  assert.deepEqual(loadedLines(), []);
});

test('a short prompt whose bound the budget cannot fit but whose count it can: loaded, then served uncapped', async () => {
  // Prices per million: input $10, output $20. "hi" with max_tokens 40: counted, 8 × 10 + 40 × 20 = 880
  // µUSD; bounded, 9 × 10 + 800 = 890. A budget of 885 µUSD fits the count only (and too little remains
  // past the bound's prompt for the 256 output tokens "serve what fits" needs).
  const client = await limitedClient('limited-tight', { budgetUsd: 0.000885 });
  const { data, response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40 }).withResponse();
  assert.ok(data.choices[0]!.message.content);
  assert.equal(response.headers.get('x-tollgate-max-tokens-capped'), null);
  assert.equal(loadedLines().length, 1);
});

test('the first long prompts of limited users load it once, whatever the concurrency', async () => {
  const second = await startPricedGateway();
  try {
    const client = await limitedClient('limited-long', { budgetUsd: 5, tpm: 100_000 }, second);
    const long = 'Tell me about the sea. '.repeat(Math.ceil(BOUND_PROMPT_MAX_BYTES / 23) + 1);
    const answers = await Promise.all([1, 2, 3].map(() =>
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: long }], max_tokens: 40 })));
    assert.equal(answers.length, 3);
    assert.equal(loadedLines(second).length, 1);
  } finally {
    await second.close();
  }
});

test('a count before the load is a rough over-estimate and starts the load', async () => {
  const lines: string[] = [];
  const estimator = createTokenEstimator({ info: () => {}, warn: (msg: string) => lines.push(msg), error: () => {}, debug: () => {} });
  const english = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
  const rough = estimator.count(english);
  // UTF-8 bytes / 3 (the work-bounded meter may add a token or two at its chunk edges).
  assert.ok(Math.abs(rough - roughTokens(english)) <= 5, `${rough} vs ${roughTokens(english)}`);
  assert.ok(lines.some((line) => line.includes('before the tokenizer loaded')));
  await estimator.ready();
  assert.equal(estimator.ready(), null, 'loaded: nothing to wait for');
  const exact = estimator.count(english);
  assert.ok(exact < rough, `exact ${exact} below the rough ${rough}`);
});
