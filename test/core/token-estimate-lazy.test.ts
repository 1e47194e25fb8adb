/**
 * The tokenizer (~70 MB of tables) loads on the first count a request needs, not at start (issue 17,
 * footprint): a gateway whose users have no budget or token limit and whose upstreams report usage
 * never loads it; the first budgeted request loads it and is reserved exactly as before.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { createGatewayUser } from '../../core/gateway-users.ts';
import { createApiKey } from '../../core/api-keys.ts';
import { createTokenEstimator, roughTokens } from '../../core/token-estimate.ts';

let sim: OpenAISimulator;
let tg: TestGateway;
const loadedLines = () => tg.serverLog.filter((line) => line.includes('tokenizer loaded'));

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 }]),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false } },
  });
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

test('the first request of a user with a budget loads it once and is served', async () => {
  const user = await createGatewayUser(tg.gateway.store.db, { name: 'limited', budgetUsd: 5, tpm: 100_000 });
  const { key } = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id });
  const client = new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
  const answers = await Promise.all([1, 2, 3].map(() =>
    client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40 })));
  assert.equal(answers.length, 3);
  assert.equal(loadedLines().length, 1, 'loaded once, whatever the concurrency');
});

test('a count before the load is a rough over-estimate and starts the load', async () => {
  const lines: string[] = [];
  const estimator = createTokenEstimator({ info: () => {}, warn: (msg: string) => lines.push(msg), error: () => {}, debug: () => {} } as never);
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
