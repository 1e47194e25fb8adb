/**
 * The `gemini` dialect through the official `@google/genai` SDK (base URL `<gateway>/api`): natively
 * to the Gemini simulator (the body relayed, usage from `usageMetadata`), translated to the OpenAI and
 * Anthropic simulators, function calling, countTokens, auth by `x-goog-api-key` and `?key=`, and
 * errors in Google's shape.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI, type FunctionDeclaration } from '@google/genai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import {
  SIM_COUNT_TOKENS, SIM_REPLY as GEMINI_REPLY, SIM_SIGNATURE, SIM_TOOL_ANSWER, SIM_USAGE as GEMINI_USAGE, startGeminiSimulator, type GeminiSimulator,
} from '../helpers/gemini-simulator.ts';
import { SIM_REPLY as OPENAI_REPLY, SIM_USAGE as OPENAI_USAGE, simStreamText, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { SIM_REPLY as ANTHROPIC_REPLY, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';

let geminiSim: GeminiSimulator;
let openaiSim: OpenAISimulator;
let anthropicSim: AnthropicSimulator;
let tg: TestGateway;
let ai: GoogleGenAI;

const clientOf = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${tg.gateway.origin}/api` } });

before(async () => {
  [geminiSim, openaiSim, anthropicSim] = await Promise.all([startGeminiSimulator(), startOpenAISimulator(), startAnthropicSimulator()]);
  tg = await startTestGateway({
    providers: {
      gemini: { type: 'gemini', baseUrl: geminiSim.baseUrl, apiKey: 'gm-upstream-key' },
      openai: { type: 'openai', baseUrl: openaiSim.baseUrl, apiKey: 'sk-upstream' },
      anthropic: { type: 'anthropic', baseUrl: anthropicSim.baseUrl, apiKey: 'sk-ant-upstream' },
    },
  });
  ai = clientOf(tg.apiKey);
});
after(async () => {
  await tg.close();
  await Promise.all([geminiSim.close(), openaiSim.close(), anthropicSim.close()]);
});

/** The request id the gateway put on the SDK's last answer. */
function requestIdOf(response: { sdkHttpResponse?: { headers?: Record<string, string> } }): string {
  const id = response.sdkHttpResponse?.headers?.['x-request-id'];
  assert.ok(id, 'the answer carries x-request-id');
  return id;
}

describe('natively to Gemini', () => {
  test('generateContent relays the body unchanged and bills usageMetadata, thoughts and cached tokens included', async () => {
    const before = geminiSim.chatRequests().length;
    const response = await ai.models.generateContent({
      model: 'gemini/gemini-2.5-flash', contents: 'Say hello',
      config: { systemInstruction: 'Be brief.', temperature: 0.2, thinkingConfig: { thinkingBudget: 512 } },
    });
    assert.equal(response.text, GEMINI_REPLY);
    assert.equal(response.usageMetadata?.thoughtsTokenCount, GEMINI_USAGE.thoughtsTokenCount);
    const sent = geminiSim.chatRequests().slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent[0]!.headers['x-goog-api-key'], 'gm-upstream-key', 'the credential is the gateway\'s, never the client\'s key');
    assert.deepEqual(sent[0]!.body!.generationConfig, { temperature: 0.2, thinkingConfig: { thinkingBudget: 512 } });
    assert.equal(sent[0]!.body!.model, undefined, 'the model stays in the path');
    const row = await tg.logRow(requestIdOf(response));
    assert.deepEqual(
      [row.endpoint, row.provider, row.status, row.prompt_tokens, row.completion_tokens, row.cached_tokens],
      ['gemini.generateContent', 'gemini', 200, GEMINI_USAGE.promptTokenCount, GEMINI_USAGE.candidatesTokenCount + GEMINI_USAGE.thoughtsTokenCount, GEMINI_USAGE.cachedContentTokenCount],
    );
  });

  test('generateContentStream relays the SSE events, and the row is a streamed call', async () => {
    let text = '';
    let last: { usageMetadata?: unknown } | null = null;
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini/gemini-2.5-flash', contents: 'Say hello' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    assert.equal(text, GEMINI_REPLY);
    assert.equal((last!.usageMetadata as { totalTokenCount: number }).totalTokenCount, GEMINI_USAGE.totalTokenCount);
    const [row] = await tg.logRowsOf('gemini/gemini-2.5-flash', 2).then((rows) => rows.filter((r) => r.endpoint === 'gemini.streamGenerateContent'));
    assert.deepEqual([row!.stream, row!.prompt_tokens, row!.cached_tokens], [1, GEMINI_USAGE.promptTokenCount, GEMINI_USAGE.cachedContentTokenCount]);
  });

  test('a function call keeps its thought signature across the round trip', async () => {
    const tools = [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }];
    const question = { role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] };
    const first = await ai.models.generateContent({ model: 'gemini/sim-tool', contents: [question], config: { tools } });
    const parts = first.candidates![0]!.content!.parts!;
    assert.equal(parts[0]!.thoughtSignature, SIM_SIGNATURE);
    assert.equal(first.functionCalls?.length, 2);
    const answers = first.functionCalls.map((call) => ({ functionResponse: { id: call.id, name: call.name!, response: { output: '18C' } } }));
    const second = await ai.models.generateContent({
      model: 'gemini/sim-tool', config: { tools },
      contents: [question, first.candidates![0]!.content!, { role: 'user', parts: answers }],
    });
    assert.equal(second.text, SIM_TOOL_ANSWER);
    const replayed = geminiSim.chatRequests().at(-1)!.body!.contents as Array<{ parts: Array<Record<string, unknown>> }>;
    assert.equal(replayed[1]!.parts[0]!.thoughtSignature, SIM_SIGNATURE, 'the signature reached Gemini as the client sent it');
  });

  test('countTokens is answered by Gemini\'s own count, billed nothing, and logged', async () => {
    const counted = await ai.models.countTokens({ model: 'gemini/gemini-2.5-flash', contents: 'How many tokens?' });
    assert.equal(counted.totalTokens, SIM_COUNT_TOKENS);
    assert.equal(geminiSim.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:countTokens');
  });

  test('a bare gemini-* id routes to the gemini provider', async () => {
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Say hello' });
    assert.equal(response.text, GEMINI_REPLY);
    assert.equal((await tg.logRow(requestIdOf(response))).provider, 'gemini');
  });
});

const weather: FunctionDeclaration = { name: 'get_weather', description: 'Weather in a city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } };

describe('translated to OpenAI and Anthropic', () => {
  for (const [name, model, reply, streamed] of [['OpenAI', 'openai/gpt-4o-mini', OPENAI_REPLY, simStreamText()], ['Anthropic', 'anthropic/claude-sonnet-4-6', ANTHROPIC_REPLY, ANTHROPIC_REPLY]] as const) {
    test(`generateContent to ${name} answers a GenerateContentResponse with usage`, async () => {
      const response = await ai.models.generateContent({ model, contents: 'Say hello', config: { systemInstruction: 'Be brief.', maxOutputTokens: 64 } });
      assert.equal(response.text, reply);
      assert.equal(response.candidates![0]!.finishReason, 'STOP');
      assert.ok(response.usageMetadata!.promptTokenCount! > 0);
      const row = await tg.logRow(requestIdOf(response));
      assert.deepEqual([row.endpoint, row.provider, row.prompt_tokens], ['gemini.generateContent', name.toLowerCase(), response.usageMetadata!.promptTokenCount]);
    });

    test(`generateContentStream to ${name} streams the text, then the finish reason and usage`, async () => {
      let text = '';
      const chunks = [];
      for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Say hello' })) {
        text += chunk.text ?? '';
        chunks.push(chunk);
      }
      assert.equal(text, streamed);
      assert.ok(chunks.length > 2, 'the answer came in pieces');
      assert.equal(chunks.at(-1)!.candidates![0]!.finishReason, 'STOP');
      assert.ok(chunks.at(-1)!.usageMetadata!.totalTokenCount! > 0);
      assert.equal(chunks.slice(0, -1).some((c) => c.usageMetadata), false, 'usage is on the last event only');
    });
  }

  test('the OpenAI upstream receives the translated request and its usage is billed as sent', async () => {
    const response = await ai.models.generateContent({
      model: 'openai/gpt-4o-mini', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      config: { systemInstruction: 'Be brief.', temperature: 0.5, stopSequences: ['END'], tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: 'ANY' as never, allowedFunctionNames: ['get_weather'] } } },
    });
    const sent = openaiSim.requests.at(-1)!.body!;
    assert.deepEqual(sent.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
    assert.deepEqual([sent.temperature, sent.stop, sent.tool_choice], [0.5, ['END'], { type: 'function', function: { name: 'get_weather' } }]);
    assert.deepEqual((sent.tools as Array<{ function: { name: string } }>).map((t) => t.function.name), ['get_weather']);
    const row = await tg.logRow(requestIdOf(response));
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [OPENAI_USAGE.prompt_tokens, OPENAI_USAGE.completion_tokens, OPENAI_USAGE.prompt_tokens_details!.cached_tokens]);
    assert.equal(response.usageMetadata!.cachedContentTokenCount, OPENAI_USAGE.prompt_tokens_details!.cached_tokens);
  });

  test('Gemini CLI\'s router request reaches OpenAI without topK and with its upper-case schema types lower-cased, and Anthropic keeps topK', async () => {
    // As Gemini CLI 0.61's model router sends it: OpenAPI type names in responseJsonSchema, topK always.
    const responseJsonSchema = { type: 'OBJECT', properties: { score: { type: 'INTEGER' } }, required: ['score'] };
    const config = { topK: 64, responseMimeType: 'application/json', responseJsonSchema };
    await ai.models.generateContent({ model: 'openai/gpt-4o-mini', contents: 'Rate this', config });
    const sent = openaiSim.requests.at(-1)!.body!;
    assert.equal(sent.top_k, undefined, 'OpenAI refuses top_k');
    assert.deepEqual(sent.response_format, { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] } } });
    await ai.models.generateContent({ model: 'anthropic/claude-sonnet-4-6', contents: 'Rate this', config: { topK: 64 } });
    assert.equal(anthropicSim.requests.at(-1)!.body!.top_k, 64);
  });

  test('a function call from Anthropic comes back as functionCall parts with ids, and the response turn reaches it as tool_result', async () => {
    const question = { role: 'user', parts: [{ text: 'Weather in Paris and London?' }] };
    const first = await ai.models.generateContent({ model: 'anthropic/sim-tool', contents: [question], config: { tools: [{ functionDeclarations: [weather] }] } });
    const calls = first.functionCalls!;
    assert.deepEqual(calls.map((c) => [c.name, c.args]), [['get_weather', { city: 'Paris' }], ['get_weather', { city: 'London' }]]);
    assert.ok(calls.every((c) => typeof c.id === 'string' && c.id !== ''));
    await ai.models.generateContent({
      model: 'anthropic/sim-tool', config: { tools: [{ functionDeclarations: [weather] }] },
      contents: [question, first.candidates![0]!.content!, { role: 'user', parts: calls.map((c) => ({ functionResponse: { id: c.id, name: c.name!, response: { output: 'mild' } } })) }],
    });
    const sent = anthropicSim.requests.at(-1)!.body!.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    assert.deepEqual(sent.at(-1)!.content.map((b) => [b.type, b.tool_use_id]), calls.map((c) => ['tool_result', c.id]));
  });

  test('countTokens for a translated model is counted locally', async () => {
    const counted = await ai.models.countTokens({ model: 'openai/gpt-4o-mini', contents: 'How many tokens are in this sentence?' });
    assert.ok(counted.totalTokens! > 0);
  });

  test('what cannot be translated is a 400 INVALID_ARGUMENT naming the field', async () => {
    await assert.rejects(ai.models.generateContent({ model: 'openai/gpt-4o-mini', contents: 'Hi', config: { tools: [{ googleSearch: {} }] } }), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 400);
      const body = JSON.parse(err.message) as { error: { code: number; status: string; message: string } };
      assert.deepEqual([body.error.code, body.error.status], [400, 'INVALID_ARGUMENT']);
      assert.match(body.error.message, /tools\[0\]\.googleSearch/);
      return true;
    });
  });
});

describe('auth and errors in Google\'s shape', () => {
  async function rawPost(path: string, headers: Record<string, string>): Promise<{ status: number; body: { error: { code: number; status: string; message: string } }; requestId: string }> {
    const res = await fetch(`${tg.gateway.origin}${path}`, { method: 'POST', headers: Object.assign({ 'content-type': 'application/json' }, headers), body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }) });
    return { status: res.status, body: await res.json() as never, requestId: res.headers.get('x-request-id')! };
  }

  test('the key is accepted in x-goog-api-key and in ?key=, and the call is logged', async () => {
    const byHeader = await fetch(`${tg.gateway.origin}/api/v1beta/models/gemini/gemini-2.5-flash:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': tg.apiKey }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(byHeader.status, 200, await byHeader.clone().text());
    assert.equal((await tg.logRow(byHeader.headers.get('x-request-id')!)).endpoint, 'gemini.generateContent');
    const byQuery = await fetch(`${tg.gateway.origin}/api/v1beta/models/openai/gpt-4o-mini:generateContent?key=${encodeURIComponent(tg.apiKey)}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(byQuery.status, 200);
    const row = await tg.logRow(byQuery.headers.get('x-request-id')!);
    assert.deepEqual([row.endpoint, row.provider], ['gemini.generateContent', 'openai']);
  });

  test('a bad key is a 401 UNAUTHENTICATED in Google\'s shape', async () => {
    await assert.rejects(clientOf('tg-not-a-key').models.generateContent({ model: 'gemini/gemini-2.5-flash', contents: 'Hi' }), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 401);
      assert.equal((JSON.parse(err.message) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
      return true;
    });
    const { status, body } = await rawPost('/api/v1beta/models/gemini-2.5-flash:generateContent', {});
    assert.deepEqual([status, body.error.code, body.error.status], [401, 401, 'UNAUTHENTICATED']);
  });

  test('an unknown model is a 404 NOT_FOUND', async () => {
    const { status, body } = await rawPost('/api/v1beta/models/no-such-model-x:generateContent', { 'x-goog-api-key': tg.apiKey });
    assert.equal(status, 404, JSON.stringify(body));
    assert.deepEqual([body.error.code, body.error.status], [404, 'NOT_FOUND']);
  });

  test('a budget refusal is RESOURCE_EXHAUSTED, and the refusal is logged', async () => {
    const broke = await createGatewayUser(tg.gateway.store.db, { name: `gemini-broke-${process.pid}`, budgetUsd: 0 });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: broke.id, name: 'sdk' });
    const { status, body, requestId } = await rawPost('/api/v1beta/models/openai/gpt-4o-mini:generateContent', { 'x-goog-api-key': key.key });
    assert.equal(status, 402);
    assert.deepEqual([body.error.code, body.error.status], [402, 'RESOURCE_EXHAUSTED']);
    assert.equal((await tg.logRow(requestId)).status, 402);
  });
});
