/**
 * `POST /api/v1/embeddings` end to end: the official `openai` SDK (`client.embeddings.create`, its
 * default base64 and explicit float) through the whole gateway to each provider's simulator: OpenAI
 * and an OpenAI-compatible server natively, Gemini (`batchEmbedContents`), Mistral and Ollama
 * (`/api/embed`) translated, Anthropic refused. Checks the vectors, what the upstream received, the
 * log row and its exact cost, the budget and token-limit reservations (input only), and the 400s/404s.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAISimulator, type OpenAISimulator, type RecordedRequest } from '../helpers/openai-simulator.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { startMistralSimulator, MISTRAL_SIM_KEY, type MistralSimulator } from '../helpers/mistral-simulator.ts';
import { startOllamaSimulator, type OllamaSimulator } from '../helpers/ollama-simulator.ts';
import { simEmbedding, simEmbeddingTokens } from '../helpers/sim-embeddings.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { createGatewayUser, type UserFields } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { loadTokenEstimator } from '../../core/tokens/token-estimate.ts';

/** Input prices, USD per million tokens; output prices are set high to show they are never reserved. */
const PRICES = {
  'text-embedding-3-small': 0.02,
  'bge-m3': 0.01,
  'gemini-embedding-001': 0.15,
  'text-embedding-004': 0.025,
  'mistral-embed': 0.1,
  'nomic-embed-text': 0.05,
  'pricey-embed': 1000,
} as const;
/** Nano-USD per token at `usdPerMillion` (each test price is a whole number of nanos per token). */
const nanosPerToken = (usdPerMillion: number) => Math.round(usdPerMillion * 1000);

let openai: OpenAISimulator;
let gemini: GeminiSimulator;
let mistral: MistralSimulator;
let ollama: OllamaSimulator;
let tg: TestGateway;
const tokens = await loadTokenEstimator();

before(async () => {
  [openai, gemini, mistral, ollama] = await Promise.all([
    startOpenAISimulator(), startGeminiSimulator(), startMistralSimulator(), startOllamaSimulator({ models: ['nomic-embed-text:latest'] }),
  ]);
  const dataDir = await dataDirWithPrices(Object.entries(PRICES).map(([model, input]) => ({ model, input, output: 1000 })));
  tg = await startTestGateway({
    dataDir,
    providers: {
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai' },
      compat: { type: 'openai-compatible', baseUrl: openai.baseUrl, apiKey: 'sk-compat' },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gemini-key' },
      mistral: { type: 'mistral', baseUrl: mistral.baseUrl, apiKey: MISTRAL_SIM_KEY },
      ollama: { type: 'ollama', baseUrl: ollama.baseUrl },
      // Never called: the gateway refuses embeddings for it before any upstream call.
      anthropic: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9', apiKey: 'sk-ant' },
    },
    config: { pricing: { seedOnFirstStart: false } },
  });
});

after(async () => {
  await tg?.close();
  await Promise.all([openai?.close(), gemini?.close(), mistral?.close(), ollama?.close()]);
});

/** `client.embeddings.create` with the answer's request id. */
async function embed(client: OpenAI, body: OpenAI.EmbeddingCreateParams) {
  const { data, response } = await client.embeddings.create(body).withResponse();
  return { result: data, requestId: response.headers.get('x-request-id')!, headers: response.headers };
}

/** The log row of `requestId`, checked as an embeddings row billed on `promptTokens` alone. */
async function assertBilled(requestId: string, expected: { provider: string; model: string; promptTokens: number; usdPerMillion: number; estimated: boolean }) {
  const row = await tg.logRow(requestId);
  assert.equal(row.endpoint, 'embeddings.create');
  assert.equal(row.status, 200);
  assert.equal(row.provider, expected.provider);
  assert.equal(row.model_requested, expected.model);
  assert.equal(row.prompt_tokens, expected.promptTokens);
  assert.equal(row.completion_tokens, 0);
  assert.equal(row.cost_nanos, expected.promptTokens * nanosPerToken(expected.usdPerMillion));
  assert.equal(row.usage_estimated, expected.estimated ? 1 : 0);
  assert.equal(row.stream, 0);
}

const lastRequest = (requests: RecordedRequest[], path: string) => requests.filter((r) => r.path === path).at(-1)!;

describe('embeddings through the openai SDK, native to OpenAI and OpenAI-compatible servers', () => {
  test('the SDK default (base64) gets the simulator\'s vectors; the upstream got the body unchanged but the model; billed on input tokens', async () => {
    const input = 'The food was delicious and the waiter was kind.';
    const { result, requestId } = await embed(tg.client, { model: 'openai/text-embedding-3-small', input });
    assert.deepEqual(result.data.map((d) => d.embedding), [simEmbedding(input)]);
    assert.equal(result.model, 'text-embedding-3-small-sim', 'the upstream\'s own answer, relayed');
    const upstream = lastRequest(openai.requests, '/v1/embeddings');
    assert.equal(upstream.rawBody, JSON.stringify({ model: 'text-embedding-3-small', input, encoding_format: 'base64' }));
    assert.equal(result.usage.prompt_tokens, simEmbeddingTokens(input));
    await assertBilled(requestId, { provider: 'openai', model: 'openai/text-embedding-3-small', promptTokens: simEmbeddingTokens(input), usdPerMillion: PRICES['text-embedding-3-small'], estimated: false });
  });

  test('explicit float, an array of texts and dimensions go through as sent', async () => {
    const input = ['first text', 'a second, longer text'];
    const { result, requestId } = await embed(tg.client, { model: 'openai/text-embedding-3-small', input, dimensions: 4, encoding_format: 'float', user: 'u-42' });
    assert.deepEqual(result.data.map((d) => [d.index, d.embedding]), input.map((text, i) => [i, simEmbedding(text, 4)]));
    const upstream = lastRequest(openai.requests, '/v1/embeddings');
    assert.deepEqual(upstream.body, { model: 'text-embedding-3-small', input, dimensions: 4, encoding_format: 'float', user: 'u-42' });
    const promptTokens = input.reduce((sum, text) => sum + simEmbeddingTokens(text), 0);
    await assertBilled(requestId, { provider: 'openai', model: 'openai/text-embedding-3-small', promptTokens, usdPerMillion: PRICES['text-embedding-3-small'], estimated: false });
  });

  test('/metrics counts embeddings under their own operation', async () => {
    const text = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
    assert.match(text, /operation="embeddings\.create",provider="openai",model="text-embedding-3-small",status="200"} [1-9]/);
  });

  test('token-id inputs reach OpenAI as they are', async () => {
    const input = [[1, 2, 3], [40, 50]];
    const { result } = await embed(tg.client, { model: 'openai/text-embedding-3-small', input, encoding_format: 'float' });
    assert.deepEqual(result.data.map((d) => d.embedding), input.map((ids) => simEmbedding(ids)));
    assert.deepEqual(lastRequest(openai.requests, '/v1/embeddings').body?.input, input);
  });

  test('an OpenAI-compatible server is passed through too', async () => {
    const input = ['compatible'];
    const { result, requestId } = await embed(tg.client, { model: 'compat/bge-m3', input });
    assert.deepEqual(result.data.map((d) => d.embedding), [simEmbedding('compatible')]);
    const upstream = lastRequest(openai.requests, '/v1/embeddings');
    assert.equal(upstream.rawBody, JSON.stringify({ model: 'bge-m3', input, encoding_format: 'base64' }));
    await assertBilled(requestId, { provider: 'compat', model: 'compat/bge-m3', promptTokens: simEmbeddingTokens('compatible'), usdPerMillion: PRICES['bge-m3'], estimated: false });
  });

  test('an upstream 404 for the model is the contract\'s 404 model_not_found, as for chat', async () => {
    await assert.rejects(tg.client.embeddings.create({ model: 'openai/sim-404', input: 'x' }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      return true;
    });
  });
});

describe('embeddings translated for Gemini, Mistral and Ollama', () => {
  test('Gemini: batchEmbedContents with one request per input and outputDimensionality; usage counted locally', async () => {
    const input = ['Gemini one', 'Gemini two is longer'];
    const { result, requestId } = await embed(tg.client, { model: 'gemini/gemini-embedding-001', input, dimensions: 4 });
    assert.deepEqual(result.data.map((d) => d.embedding), input.map((text) => simEmbedding(text, 4)));
    const upstream = lastRequest(gemini.requests, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.deepEqual(upstream.body, {
      requests: input.map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] }, outputDimensionality: 4 })),
    });
    const promptTokens = input.reduce((sum, text) => sum + tokens.count(text), 0);
    assert.equal(result.usage.prompt_tokens, promptTokens);
    assert.equal(result.object, 'list');
    assert.equal(result.model, 'gemini-embedding-001');
    await assertBilled(requestId, { provider: 'gemini', model: 'gemini/gemini-embedding-001', promptTokens, usdPerMillion: PRICES['gemini-embedding-001'], estimated: true });
  });

  test('Gemini: an unprefixed embedding model routes there from its discovered list (embedContent models are listed)', async () => {
    const listed = await tg.client.models.list();
    assert.ok(listed.data.some((m) => m.id === 'gemini/text-embedding-004'), 'the embedding model is in the catalog');
    const { result, requestId } = await embed(tg.client, { model: 'text-embedding-004', input: 'no prefix' });
    assert.deepEqual(result.data.map((d) => d.embedding), [simEmbedding('no prefix')]);
    assert.deepEqual(lastRequest(gemini.requests, '/v1beta/models/text-embedding-004:batchEmbedContents').body, {
      requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'no prefix' }] } }],
    });
    await assertBilled(requestId, { provider: 'gemini', model: 'text-embedding-004', promptTokens: tokens.count('no prefix'), usdPerMillion: PRICES['text-embedding-004'], estimated: true });
  });

  test('Mistral: output_dimension, no encoding_format upstream; the gateway encodes the SDK\'s base64', async () => {
    const input = 'Bonjour';
    const { result, requestId } = await embed(tg.client, { model: 'mistral/mistral-embed', input, dimensions: 6 });
    assert.deepEqual(result.data.map((d) => d.embedding), [simEmbedding(input, 6)]);
    assert.deepEqual(lastRequest(mistral.requests, '/v1/embeddings').body, { model: 'mistral-embed', input: [input], output_dimension: 6 });
    await assertBilled(requestId, { provider: 'mistral', model: 'mistral/mistral-embed', promptTokens: simEmbeddingTokens(input), usdPerMillion: PRICES['mistral-embed'], estimated: false });
  });

  test('Mistral answers float when asked for float', async () => {
    const { result } = await embed(tg.client, { model: 'mistral/mistral-embed', input: ['a', 'b'], encoding_format: 'float' });
    assert.deepEqual(result.data.map((d) => d.embedding), [simEmbedding('a'), simEmbedding('b')]);
  });

  test('Ollama: /api/embed with truncate, billed on prompt_eval_count', async () => {
    const input = ['llamas embed', 'too'];
    const { result, requestId } = await embed(tg.client, { model: 'ollama/nomic-embed-text', input, encoding_format: 'float', dimensions: 3 });
    assert.deepEqual(result.data.map((d) => d.embedding), input.map((text) => simEmbedding(text, 3)));
    assert.deepEqual(lastRequest(ollama.requests, '/api/embed').body, { model: 'nomic-embed-text', input, dimensions: 3, truncate: true });
    const promptTokens = input.reduce((sum, text) => sum + simEmbeddingTokens(text), 0);
    assert.equal(result.usage.prompt_tokens, promptTokens);
    await assertBilled(requestId, { provider: 'ollama', model: 'ollama/nomic-embed-text', promptTokens, usdPerMillion: PRICES['nomic-embed-text'], estimated: false });
  });

  test('token ids to a provider that embeds text only are a 400 naming input', async () => {
    const before = gemini.requests.length;
    await assert.rejects(tg.client.embeddings.create({ model: 'gemini/gemini-embedding-001', input: [1, 2, 3] }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 400);
      assert.equal((err.error as { param?: string }).param, 'input');
      assert.match(err.message, /Google Gemini embeds text only/);
      return true;
    });
    assert.equal(gemini.requests.length, before, 'nothing reached the upstream');
  });
});

describe('embeddings refused', () => {
  test('Anthropic has no embeddings API: a 400 that names the providers that have one', async () => {
    await assert.rejects(tg.client.embeddings.create({ model: 'anthropic/claude-sonnet-4-5', input: 'x' }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 400);
      assert.equal(err.code, 'invalid_request');
      assert.equal((err.error as { param?: string }).param, 'model');
      assert.match((err.error as { message: string }).message, /^Anthropic has no embeddings API; use a model of a provider that has one, e\.g\. "openai\/<embedding model>", "compat\/<embedding model>", "gemini\/<embedding model>", "mistral\/<embedding model>", "ollama\/<embedding model>"\.$/);
      return true;
    });
  });

  test('an unknown bare model is 404 model_not_found, as for chat', async () => {
    await assert.rejects(tg.client.embeddings.create({ model: 'no-such-embedder', input: 'x' }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      return true;
    });
  });

  test('malformed bodies are 400s in OpenAI\'s shape naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'openai/text-embedding-3-small', input: '' }, 'input'],
      [{ model: 'openai/text-embedding-3-small', input: [] }, 'input'],
      [{ model: 'openai/text-embedding-3-small', input: ['ok', 7] }, 'input[1]'],
      [{ model: 'openai/text-embedding-3-small', input: 'x', dimensions: 0 }, 'dimensions'],
      [{ model: 'openai/text-embedding-3-small', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'openai/text-embedding-3-small', input: 'x', stream: true }, 'stream'],
      [{ input: 'x' }, 'model'],
    ];
    for (const [body, param] of cases) {
      const res = await fetch(`${tg.gateway.origin}/api/v1/embeddings`, {
        method: 'POST', headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      assert.equal(res.status, 400, JSON.stringify(body));
      const error = ((await res.json()) as { error: { type: string; code: string; param: string } }).error;
      assert.deepEqual([error.type, error.code, error.param], ['invalid_request_error', 'invalid_request', param], JSON.stringify(body));
    }
  });
});

describe('embeddings against budgets and token limits', () => {
  async function userClient(fields: Omit<UserFields, 'name'>) {
    const user = await createGatewayUser(tg.gateway.store.db, { ...fields, name: `embed-${Math.random().toString(36).slice(2)}` });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id });
    return new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
  }

  test('a budget that cannot pay the input tokens is a 402, and nothing reaches the upstream', async () => {
    // $0.001 pays 1 token at $1000/M; the input is more.
    const client = await userClient({ budgetUsd: 0.001 });
    const before = ollama.requests.length;
    await assert.rejects(client.embeddings.create({ model: 'ollama/pricey-embed', input: 'several words of input here' }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 402);
      assert.equal(err.code, 'budget_exceeded');
      return true;
    });
    assert.equal(ollama.requests.length, before);
  });

  test('a budget that pays the input but not a chat-sized output is served: no output is reserved', async () => {
    // $0.001 = 1,000,000 nanos; ~5 input tokens at $1/M is ~5,000; 4,096 output tokens at $1000/M would be 4e9.
    const client = await userClient({ budgetUsd: 0.001 });
    const { result, headers } = await embed(client, { model: 'openai/text-embedding-3-small', input: 'fits the budget' });
    assert.equal(result.data.length, 1);
    assert.equal(headers.get('x-tollgate-max-tokens-capped'), null);
  });

  test('a tokens-per-minute limit reserves the input tokens only', async () => {
    const client = await userClient({ tpm: 50 });
    const input = 'counted against the token limit';
    const { headers, requestId } = await embed(client, { model: 'openai/text-embedding-3-small', input });
    assert.equal(headers.get('x-ratelimit-limit-tokens'), '50');
    // A short input reserves its byte bound (no output): 31, where a default output cap would not fit 50.
    assert.equal(Number(headers.get('x-ratelimit-remaining-tokens')), 50 - Buffer.byteLength(input));
    assert.ok(tokens.count(input) < Buffer.byteLength(input));
    assert.equal((await tg.logRow(requestId)).status, 200);
  });
});
