/**
 * One base URL per dialect, whatever the client appends to it (issue 41 item 5): `POST /api/messages`
 * and `/api/messages/count_tokens` answer like `/api/v1/messages` (`@ai-sdk/anthropic` and opencode
 * append only `/messages` to `ANTHROPIC_BASE_URL=<gateway>/api`), and a path no endpoint has answers
 * a 404 in the error shape of the dialect the path looks like, naming the base URL its clients want.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { SIM_COUNT_TOKENS, SIM_REPLY, SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';

const MODEL = 'claude-sonnet-4-6';
let anthropic: AnthropicSimulator;
let gemini: GeminiSimulator;
let tg: TestGateway;

before(async () => {
  anthropic = await startAnthropicSimulator();
  gemini = await startGeminiSimulator();
  const dataDir = await dataDirWithPrices([{ model: MODEL, provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 }]);
  tg = await startTestGateway({
    dataDir,
    providers: {
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gm-upstream-key' },
    },
  });
});
after(async () => {
  await tg?.close();
  await anthropic?.close();
  await gemini?.close();
});

/** POSTs `body` to `<gateway><path>` with `headers` (the user's key in `x-api-key` unless given). */
async function post(path: string, body: unknown, headers: Record<string, string> = { 'x-api-key': tg.apiKey }) {
  const res = await fetch(`${tg.gateway.origin}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Record<string, unknown>, requestId: res.headers.get('x-request-id')! };
}

describe('POST /api/messages (no version segment)', () => {
  test('answers a message like /api/v1/messages, logged as messages.create and billed', async () => {
    const { status, json, requestId } = await post('/api/messages', { model: `anthropic/${MODEL}`, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.type, 'message');
    assert.deepEqual(json.content, [{ type: 'text', text: SIM_REPLY }]);
    assert.equal(anthropic.requests.at(-1)!.path, '/v1/messages');
    const row = await tg.logRow(requestId);
    assert.deepEqual([row.endpoint, row.provider, row.status, row.gateway_user_id], ['messages.create', 'anthropic', 200, tg.userId]);
    assert.equal(row.prompt_tokens, SIM_USAGE.input_tokens + SIM_USAGE.cache_read_input_tokens + SIM_USAGE.cache_creation_input_tokens);
    assert.ok(Number(row.cost_nanos) > 0, 'the call is billed');
  });

  test('counts tokens like /api/v1/messages/count_tokens, logged as messages.count_tokens', async () => {
    const { status, json, requestId } = await post('/api/messages/count_tokens', { model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(json, { input_tokens: SIM_COUNT_TOKENS });
    assert.equal((await tg.logRow(requestId)).endpoint, 'messages.count_tokens');
  });

  test('a bad key is a 401 in Anthropic\'s shape', async () => {
    const { status, json } = await post('/api/messages', { model: MODEL, max_tokens: 8, messages: [] }, { 'x-api-key': 'tg-not-a-key' });
    assert.equal(status, 401);
    assert.equal(json.type, 'error');
    assert.equal((json.error as { type: string }).type, 'authentication_error');
  });
});

describe('a 404 under /api names the base-URL mistake in the dialect of the path', () => {
  type AnthropicError = { type: string; error: { type: string; message: string } };
  type OpenAIError = { error: { type: string; code: string; message: string } };
  type GeminiError = { error: { code: number; status: string; message: string } };

  for (const path of ['/api/v1/v1/messages', '/api/v1/messages/v1/messages', '/api/v1/v1/messages/count_tokens']) {
    test(`${path}: Anthropic's shape, ANTHROPIC_BASE_URL=<gateway>/api, logged`, async () => {
      const { status, json, requestId } = await post(path, {});
      assert.equal(status, 404);
      const body = json as unknown as AnthropicError;
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'not_found_error');
      assert.match(body.error.message, new RegExp(`POST ${path.replaceAll('/', '\\/')}\\.`));
      assert.match(body.error.message, /set ANTHROPIC_BASE_URL \(or the SDK's baseURL\) to <gateway>\/api, without \/v1/);
      const row = await tg.logRow(requestId);
      assert.deepEqual([row.endpoint, row.status, row.error_code, row.gateway_user_id], ['endpoint.unknown', 404, 'endpoint_not_found', tg.userId]);
    });
  }

  for (const path of ['/api/v1/v1/chat/completions', '/api/chat/completions', '/api/v1/v1/responses', '/api/embeddings']) {
    test(`${path}: OpenAI's shape, OPENAI_BASE_URL=<gateway>/api/v1`, async () => {
      const { status, json } = await post(path, {}, { authorization: `Bearer ${tg.apiKey}` });
      assert.equal(status, 404);
      const body = json as unknown as OpenAIError;
      assert.deepEqual([body.error.type, body.error.code], ['not_found_error', 'endpoint_not_found']);
      assert.match(body.error.message, /set OPENAI_BASE_URL \(or the SDK's baseURL\) to <gateway>\/api\/v1,/);
      assert.ok(body.error.message.includes('POST /api/v1/chat/completions'), body.error.message);
    });
  }

  for (const path of ['/api/v1beta/v1beta/models/gemini-2.5-flash:generateContent', '/api/v1/v1beta/models/gemini-2.5-flash:streamGenerateContent', '/api/v1beta/v1beta/models']) {
    test(`${path}: Gemini's shape, GOOGLE_GEMINI_BASE_URL=<gateway>/api, with the key in x-goog-api-key logged`, async () => {
      const { status, json, requestId } = await post(path, {}, { 'x-goog-api-key': tg.apiKey });
      assert.equal(status, 404);
      const body = json as unknown as GeminiError;
      assert.deepEqual([body.error.code, body.error.status], [404, 'NOT_FOUND']);
      assert.match(body.error.message, /set GOOGLE_GEMINI_BASE_URL \(or the SDK's baseUrl\) to <gateway>\/api,/);
      const row = await tg.logRow(requestId);
      assert.deepEqual([row.endpoint, row.error_code, row.gateway_user_id], ['endpoint.unknown', 'endpoint_not_found', tg.userId]);
    });
  }

  test('a POST naming a method no endpoint has (`:fooBar`) is a 404 in Gemini\'s shape, not a 405 of the model\'s GET', async () => {
    const { status, json, requestId } = await post('/api/v1beta/models/gemini-2.5-flash:fooBar', {}, { 'x-goog-api-key': tg.apiKey });
    assert.equal(status, 404);
    const body = json as unknown as GeminiError;
    assert.deepEqual([body.error.code, body.error.status], [404, 'NOT_FOUND']);
    assert.match(body.error.message, /POST \/api\/v1beta\/models\/\{model\}:generateContent/);
    const row = await tg.logRow(requestId);
    assert.deepEqual([row.endpoint, row.error_code, row.gateway_user_id], ['endpoint.unknown', 'endpoint_not_found', tg.userId]);
    // A model id with a tag (`llama3:8b`) is no method: a POST there still hears that the path is read with GET.
    const tagged = await post('/api/v1beta/models/llama3:8b', {}, { 'x-goog-api-key': tg.apiKey });
    assert.equal(tagged.status, 405);
  });

  test('without a key the guessed dialect\'s shape holds for the 404 as well', async () => {
    const { status, json } = await post('/api/v1/v1/messages', {}, {});
    assert.equal(status, 404);
    assert.equal((json as unknown as AnthropicError).error.type, 'not_found_error');
  });

  test('a path that looks like no dialect keeps OpenAI\'s shape and names both base URLs', async () => {
    const { status, json } = await post('/api/v1/nothing-here', {}, { authorization: `Bearer ${tg.apiKey}` });
    assert.equal(status, 404);
    const body = json as unknown as OpenAIError;
    assert.equal(body.error.code, 'endpoint_not_found');
    assert.match(body.error.message, /<gateway>\/api\/v1 for OpenAI-style clients, <gateway>\/api for Anthropic-style and Gemini clients/);
  });
});

describe('the key in x-goog-api-key', () => {
  test('a streamed Gemini call (Gemini CLI\'s turn) gets its log row under the key\'s user', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1beta/models/gemini/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': tg.apiKey },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.deepEqual([row.endpoint, row.provider, row.status, row.gateway_user_id], ['gemini.streamGenerateContent', 'gemini', 200, tg.userId]);
    assert.ok(Number(row.completion_tokens) > 0);
  });
});
