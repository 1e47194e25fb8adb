/**
 * The rest of the `gemini` dialect through the official `@google/genai` SDK and a real gateway:
 * embeddings (`models.embedContent`, which calls `:batchEmbedContents`, and a raw `:embedContent`)
 * natively to the Gemini simulator and translated to the OpenAI simulator, with the exact cost of the
 * log row; `models.list` / `models.get` in Google's shape from the gateway's catalog (paging, the key's
 * allow-list, 404); a client set to API version v1 (`/api/v1/models/{model}:generateContent`) beside
 * OpenAI's `GET /api/v1/models`; and the 401 without a key naming `x-goog-api-key`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI } from '@google/genai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { simEmbedding, simEmbeddingTokens } from '../helpers/sim-embeddings.ts';
import { SIM_REPLY as GEMINI_REPLY, startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { loadTokenEstimator } from '../../core/tokens/token-estimate.ts';

/** Input prices, USD per million tokens (each a whole number of nano-USD per token). */
const PRICES = { 'gemini-embedding-001': 0.15, 'text-embedding-3-small': 0.02 } as const;
const nanosPerToken = (usdPerMillion: number) => Math.round(usdPerMillion * 1000);

let geminiSim: GeminiSimulator;
let openaiSim: OpenAISimulator;
let tg: TestGateway;
let ai: GoogleGenAI;
const tokens = await loadTokenEstimator();

const clientOf = (apiKey: string, apiVersion?: string) => new GoogleGenAI({ apiKey, ...(apiVersion ? { apiVersion } : {}), httpOptions: { baseUrl: `${tg.gateway.origin}/api` } });

before(async () => {
  [geminiSim, openaiSim] = await Promise.all([startGeminiSimulator(), startOpenAISimulator()]);
  const dataDir = await dataDirWithPrices(Object.entries(PRICES).map(([model, input]) => ({ model, input, output: 1000 })));
  tg = await startTestGateway({
    dataDir,
    providers: {
      gemini: { type: 'gemini', baseUrl: geminiSim.baseUrl, apiKey: 'gm-upstream-key' },
      openai: { type: 'openai', baseUrl: openaiSim.baseUrl, apiKey: 'sk-upstream' },
    },
    config: { pricing: { seedOnFirstStart: false } },
  });
  ai = clientOf(tg.apiKey);
});
after(async () => {
  await tg?.close();
  await Promise.all([geminiSim?.close(), openaiSim?.close()]);
});

type GoogleError = { error: { code: number; status: string; message: string } };

/** The request id the gateway put on the SDK's answer. */
function requestIdOf(response: { sdkHttpResponse?: { headers?: Record<string, string> } }): string {
  const id = response.sdkHttpResponse?.headers?.['x-request-id'];
  assert.ok(id, 'the answer carries x-request-id');
  return id;
}

/** The log row of `requestId`, checked as an embeddings row billed on `promptTokens` alone. */
async function assertBilled(requestId: string, expected: { endpoint: string; provider: string; promptTokens: number; usdPerMillion: number; estimated: boolean }) {
  const row = await tg.logRow(requestId);
  assert.deepEqual(
    [row.endpoint, row.status, row.provider, row.prompt_tokens, row.completion_tokens, row.cost_nanos, row.usage_estimated, row.stream],
    [expected.endpoint, 200, expected.provider, expected.promptTokens, 0, expected.promptTokens * nanosPerToken(expected.usdPerMillion), expected.estimated ? 1 : 0, 0],
  );
}

/** An SDK call's failure as Google's error body, with its HTTP status. */
function googleError(err: unknown): GoogleError & { status: number } {
  assert.ok(err instanceof ApiError, String(err));
  return Object.assign(JSON.parse(err.message) as GoogleError, { status: err.status });
}

async function raw(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${tg.gateway.origin}${path}`, {
    method, headers: Object.assign(body === undefined ? {} : { 'content-type': 'application/json' }, headers), ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() as Record<string, unknown>, requestId: res.headers.get('x-request-id')! };
}

describe('embeddings natively to Gemini', () => {
  test('models.embedContent sends :batchEmbedContents with the routed model in each request, relays the vectors, and bills the locally counted inputs', async () => {
    const contents = ['Gemini one', 'Gemini two is longer'];
    const response = await ai.models.embedContent({ model: 'gemini/gemini-embedding-001', contents, config: { outputDimensionality: 4, taskType: 'RETRIEVAL_DOCUMENT' } });
    assert.deepEqual(response.embeddings!.map((e) => e.values), contents.map((text) => simEmbedding(text, 4)));
    const sent = geminiSim.chatRequests().at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(sent.headers['x-goog-api-key'], 'gm-upstream-key');
    assert.deepEqual(sent.body, {
      requests: contents.map((text) => ({ content: { parts: [{ text }], role: 'user' }, taskType: 'RETRIEVAL_DOCUMENT', outputDimensionality: 4, model: 'models/gemini-embedding-001' })),
    });
    const promptTokens = contents.reduce((sum, text) => sum + tokens.count(text), 0);
    await assertBilled(requestIdOf(response), { endpoint: 'gemini.batchEmbedContents', provider: 'gemini', promptTokens, usdPerMillion: PRICES['gemini-embedding-001'], estimated: true });
  });

  test(':embedContent answers {embedding: {values}} and is billed as gemini.embedContent', async () => {
    const text = 'One text to embed';
    const { status, body, requestId } = await raw('POST', '/api/v1beta/models/gemini/gemini-embedding-001:embedContent', { 'x-goog-api-key': tg.apiKey }, {
      model: 'models/gemini/gemini-embedding-001', content: { parts: [{ text }] }, outputDimensionality: 6,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body, { embedding: { values: simEmbedding(text, 6) } });
    const sent = geminiSim.chatRequests().at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-embedding-001:embedContent');
    assert.deepEqual(sent.body, { model: 'models/gemini-embedding-001', content: { parts: [{ text }] }, outputDimensionality: 6 });
    await assertBilled(requestId, { endpoint: 'gemini.embedContent', provider: 'gemini', promptTokens: tokens.count(text), usdPerMillion: PRICES['gemini-embedding-001'], estimated: true });
  });
});

describe('embeddings translated to OpenAI', () => {
  test('models.embedContent becomes one /v1/embeddings call with dimensions, and OpenAI\'s reported usage is billed', async () => {
    const contents = ['first input', 'a second, longer input'];
    const response = await ai.models.embedContent({ model: 'openai/text-embedding-3-small', contents, config: { outputDimensionality: 4 } });
    assert.deepEqual(response.embeddings!.map((e) => e.values), contents.map((text) => simEmbedding(text, 4)));
    const sent = openaiSim.requests.at(-1)!;
    assert.equal(sent.path, '/v1/embeddings');
    assert.deepEqual(sent.body, { model: 'text-embedding-3-small', input: contents, dimensions: 4, encoding_format: 'float' });
    const promptTokens = contents.reduce((sum, text) => sum + simEmbeddingTokens(text), 0);
    await assertBilled(requestIdOf(response), { endpoint: 'gemini.batchEmbedContents', provider: 'openai', promptTokens, usdPerMillion: PRICES['text-embedding-3-small'], estimated: false });
  });

  test(':embedContent to OpenAI joins the text parts and answers one vector', async () => {
    const { status, body, requestId } = await raw('POST', '/api/v1beta/models/openai/text-embedding-3-small:embedContent', { 'x-goog-api-key': tg.apiKey }, {
      content: { parts: [{ text: 'line one' }, { text: 'line two' }] },
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body, { embedding: { values: simEmbedding('line one\nline two') } });
    assert.deepEqual(openaiSim.requests.at(-1)!.body!.input, ['line one\nline two']);
    assert.equal((await tg.logRow(requestId)).endpoint, 'gemini.embedContent');
  });

  test('a taskType cannot be translated: 400 INVALID_ARGUMENT naming it, and nothing reaches OpenAI', async () => {
    const before = openaiSim.requests.length;
    await assert.rejects(ai.models.embedContent({ model: 'openai/text-embedding-3-small', contents: ['x'], config: { taskType: 'RETRIEVAL_QUERY' } }), (err: unknown) => {
      const { status, error } = googleError(err);
      assert.deepEqual([status, error.code, error.status], [400, 400, 'INVALID_ARGUMENT']);
      assert.match(error.message, /"requests\[0\]\.taskType"/);
      return true;
    });
    const { status, body } = await raw('POST', '/api/v1beta/models/openai/text-embedding-3-small:embedContent', { 'x-goog-api-key': tg.apiKey }, {
      content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
    });
    assert.equal(status, 400);
    assert.match((body as GoogleError).error.message, /"content\.parts\[0\]"/);
    assert.equal(openaiSim.requests.length, before);
  });

  test('an embedContent body without content is a 400 naming it', async () => {
    const { status, body } = await raw('POST', '/api/v1beta/models/openai/text-embedding-3-small:embedContent', { 'x-goog-api-key': tg.apiKey }, { taskType: 'RETRIEVAL_QUERY' });
    assert.equal(status, 400);
    assert.deepEqual([(body as GoogleError).error.status], ['INVALID_ARGUMENT']);
    assert.match((body as GoogleError).error.message, /content/);
  });
});

describe('models.list and models.get in Google\'s shape', () => {
  test('models.list pages through the same catalog as GET /api/v1/models', async () => {
    const names: string[] = [];
    const pager = await ai.models.list({ config: { pageSize: 2 } });
    for await (const model of pager) names.push(model.name!);
    const openAI = await raw('GET', '/api/v1/models', { authorization: `Bearer ${tg.apiKey}` });
    assert.equal(openAI.body.object, 'list', 'GET /api/v1/models stays OpenAI\'s');
    assert.deepEqual(names, (openAI.body.data as Array<{ id: string }>).map((m) => `models/${m.id}`));
    assert.ok(names.includes('models/gemini/gemini-2.5-flash') && names.includes('models/openai/gpt-4o-mini'), names.join());
    const first = await raw('GET', '/api/v1beta/models?pageSize=2', { 'x-goog-api-key': tg.apiKey });
    assert.equal((first.body.models as unknown[]).length, 2);
    assert.equal(typeof first.body.nextPageToken, 'string');
  });

  test('models.get answers one Model; an embedding model lists the embeddings methods', async () => {
    const flash = await ai.models.get({ model: 'gemini/gemini-2.5-flash' });
    assert.deepEqual(
      [flash.name, flash.displayName, flash.supportedActions],
      ['models/gemini/gemini-2.5-flash', 'Gemini 2.5 Flash', ['generateContent', 'streamGenerateContent', 'countTokens']],
    );
    const embedder = await raw('GET', '/api/v1beta/models/gemini/text-embedding-004', { 'x-goog-api-key': tg.apiKey });
    assert.deepEqual(embedder.body.supportedGenerationMethods, ['embedContent', 'batchEmbedContents']);
    const bare = await raw('GET', '/api/v1beta/models/models/gpt-4o-mini', { 'x-goog-api-key': tg.apiKey });
    assert.equal(bare.body.name, 'models/openai/gpt-4o-mini');
  });

  test('an unknown model is a 404 NOT_FOUND, and a bad pageToken a 400 naming it', async () => {
    await assert.rejects(ai.models.get({ model: 'no-such-model-x' }), (err: unknown) => {
      const { status, error } = googleError(err);
      assert.deepEqual([status, error.code, error.status], [404, 404, 'NOT_FOUND']);
      assert.match(error.message, /GET \/api\/v1beta\/models/);
      return true;
    });
    const { status, body } = await raw('GET', '/api/v1beta/models?pageToken=bogus', { 'x-goog-api-key': tg.apiKey });
    assert.equal(status, 400);
    assert.deepEqual([(body as GoogleError).error.status], ['INVALID_ARGUMENT']);
    assert.match((body as GoogleError).error.message, /pageToken/);
  });

  test('a key limited to gemini/* lists only those models, and gets 404 for the others (in OpenAI\'s list too)', async () => {
    const user = await createGatewayUser(tg.gateway.store.db, { name: `gemini-only-${process.pid}` });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id, name: 'sdk', models: ['gemini/*'] });
    const { status, body } = await raw('GET', '/api/v1beta/models?pageSize=100', { 'x-goog-api-key': key.key });
    assert.equal(status, 200);
    const names = (body.models as Array<{ name: string }>).map((m) => m.name);
    assert.ok(names.length > 0 && names.every((n) => n.startsWith('models/gemini/')), names.join());
    const hidden = await raw('GET', '/api/v1beta/models/openai/gpt-4o-mini', { 'x-goog-api-key': key.key });
    assert.equal(hidden.status, 404);
    // OpenAI's GET /api/v1/models and /{model} apply the same allow-list.
    const openaiList = await raw('GET', '/api/v1/models', { authorization: `Bearer ${key.key}` });
    assert.equal(openaiList.status, 200);
    const ids = (openaiList.body.data as Array<{ id: string }>).map((m) => m.id);
    assert.deepEqual(ids, names.map((n) => n.slice('models/'.length)));
    assert.equal(openaiList.body.first_id, ids[0]);
    assert.equal((await raw('GET', '/api/v1/models/openai/gpt-4o-mini', { authorization: `Bearer ${key.key}` })).status, 404);
    assert.equal((await raw('GET', `/api/v1/models/${ids[0]!}`, { authorization: `Bearer ${key.key}` })).status, 200);
  });
});

describe('API version v1 and authentication', () => {
  test('a client set to apiVersion v1 generates content through /api/v1/models/{model}:generateContent', async () => {
    const before = geminiSim.chatRequests().length;
    // The URLs the SDK asks for, seen by wrapping the global fetch it calls (the gateway is untouched).
    const urls: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return realFetch(input, init);
    };
    let response;
    try {
      response = await clientOf(tg.apiKey, 'v1').models.generateContent({ model: 'gemini/gemini-2.5-flash', contents: 'Say hello' });
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.deepEqual(urls, [`${tg.gateway.origin}/api/v1/models/gemini/gemini-2.5-flash:generateContent`]);
    assert.equal(response.text, GEMINI_REPLY);
    assert.equal(geminiSim.chatRequests().length, before + 1);
    assert.equal((await tg.logRow(requestIdOf(response))).endpoint, 'gemini.generateContent');
    const counted = await clientOf(tg.apiKey, 'v1').models.countTokens({ model: 'openai/gpt-4o-mini', contents: 'How many tokens?' });
    assert.ok(counted.totalTokens! > 0);
  });

  test('OpenAI\'s GET /api/v1/models/{id} is unchanged beside the v1 Gemini methods', async () => {
    const { status, body } = await raw('GET', '/api/v1/models/openai/gpt-4o-mini', { authorization: `Bearer ${tg.apiKey}` });
    assert.deepEqual([status, body.id, body.object], [200, 'openai/gpt-4o-mini', 'model']);
  });

  test('a Gemini path without a key is a 401 UNAUTHENTICATED that says the key goes in x-goog-api-key', async () => {
    for (const [method, path] of [['POST', '/api/v1beta/models/gemini-2.5-flash:embedContent'], ['GET', '/api/v1beta/models'], ['POST', '/api/v1/models/gemini-2.5-flash:generateContent']] as const) {
      const { status, body } = await raw(method, path, {}, method === 'POST' ? { contents: [] } : undefined);
      const { error } = body as GoogleError;
      assert.deepEqual([status, error.code, error.status], [401, 401, 'UNAUTHENTICATED'], path);
      assert.match(error.message, /x-goog-api-key: <key>.*\?key=<key>/, path);
    }
    const openAI = await raw('POST', '/api/v1/chat/completions', {}, { model: 'openai/gpt-4o-mini', messages: [] });
    assert.match((openAI.body.error as { message: string }).message, /Authorization: Bearer <key>/, 'OpenAI\'s paths keep their advice');
  });
});
