/**
 * The Vercel AI SDK (`ai` 7 + `@ai-sdk/openai` 4, whose default `openai(model)` speaks the Responses
 * API) against the gateway: `generateText`, `streamText` and a tool loop, natively passed through to an
 * OpenAI Responses simulator and translated to an Anthropic simulator, each billed and logged. Then
 * `@ai-sdk/anthropic` (base URL `<gateway>/api`, to which it appends `/messages`) and `@ai-sdk/google`
 * (base URL `<gateway>/api/v1beta`, to which it appends `/models/{model}:generateContent`), each
 * natively to its own simulator.
 *
 * AI SDK 7 needs Node 22+, so the client (test/helpers/ai-sdk-client.mjs) runs in a child process on
 * the Node 24 binary that bin/install-test-tools.js installs with the SDK. Without them the tests skip,
 * unless `CI` is set: then they fail.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import {
  RESPONSES_PIECES, RESPONSES_REPLY, RESPONSES_TOOL_ANSWER, RESPONSES_USAGE, startResponsesSimulator, type ResponsesSimulator,
} from '../helpers/openai-responses-simulator.ts';
import { SIM_REPLY, SIM_TOOL_ANSWER, SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { missingMessage, skipWithout, testTool } from '../helpers/test-tools.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startOllamaSimulator, type OllamaSimulator } from '../helpers/ollama-simulator.ts';
import { SIM_REPLY as GEMINI_REPLY, startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { simEmbedding, simEmbeddingTokens, SIM_EMBEDDING_DIMENSIONS } from '../helpers/sim-embeddings.ts';

const node24 = testTool('node24');
const aiSdk = testTool('aiSdk');
const skip = skipWithout([[node24, 'Node 24'], [aiSdk, 'The Vercel AI SDK']]);
const CLIENT = fileURLToPath(new URL('../helpers/ai-sdk-client.mjs', import.meta.url));

interface Usage { inputTokens: number; outputTokens: number; totalTokens: number }
interface ClientResult {
  text?: string;
  deltas?: string[];
  usage?: Usage;
  finishReason?: string;
  responseId?: string;
  steps?: number;
  toolCalls?: Array<{ toolName: string; input: unknown }>;
  toolResults?: unknown[];
  dimensions?: number;
  head?: number[];
  error?: { name: string; message: string; statusCode: number | null };
}

let responses: ResponsesSimulator;
let anthropic: AnthropicSimulator;
let tg: TestGateway;
let openaiChat: OpenAISimulator;
let ollama: OllamaSimulator;
let gemini: GeminiSimulator;

/** The AI SDK providers the client can use, and the base URL each is given (what it appends differs). */
const BASE_PATHS = { openai: '/api/v1', anthropic: '/api', google: '/api/v1beta' } as const;
type SdkProvider = keyof typeof BASE_PATHS;

/** Runs one AI SDK call in the Node 24 client with `provider` (default `@ai-sdk/openai`); resolves with what it printed. */
function aiSdkCall(op: 'generate' | 'stream' | 'tools' | 'embed', model: string, prompt: string, provider: SdkProvider = 'openai'): Promise<ClientResult> {
  assert.ok(node24 && aiSdk, missingMessage('Node 24 or the Vercel AI SDK'));
  const args = { sdkDir: aiSdk.bin, baseURL: `${tg.gateway.origin}${BASE_PATHS[provider]}`, apiKey: tg.apiKey, provider, model, op, prompt };
  return new Promise((resolve, reject) => {
    execFile(node24.bin, [CLIENT, JSON.stringify(args)], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`AI SDK client failed: ${err.message}\n${stderr}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as ClientResult);
      } catch {
        reject(new Error(`AI SDK client printed no JSON: ${stdout}\n${stderr}`));
      }
    });
  });
}

before(async () => {
  responses = await startResponsesSimulator();
  anthropic = await startAnthropicSimulator();
  openaiChat = await startOpenAISimulator();
  ollama = await startOllamaSimulator({ models: ['nomic-embed-text'] });
  gemini = await startGeminiSimulator();
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([
      { model: 'gpt-5-mini', provider: 'openai', input: 0.25, output: 2, cachedInput: 0.025 },
      { model: 'claude-sonnet-4-5', provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
      { model: 'claude-sonnet-4-6', provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
      { model: 'gemini-2.5-flash', provider: 'gemini', input: 0.3, output: 2.5, cachedInput: 0.03 },
    ]),
    providers: {
      openai: { type: 'openai', baseUrl: responses.baseUrl, apiKey: 'sk-openai-upstream' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
      // An OpenAI upstream for embeddings (the Responses simulator has none), and Ollama, translated.
      embedder: { type: 'openai', baseUrl: openaiChat.baseUrl, apiKey: 'sk-openai-upstream' },
      ollama: { type: 'ollama', baseUrl: ollama.baseUrl },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gm-upstream-key' },
    },
  });
});

after(async () => {
  await tg?.close();
  await responses?.close();
  await anthropic?.close();
  await openaiChat?.close();
  await ollama?.close();
  await gemini?.close();
});

describe('the Vercel AI SDK (Responses API and embeddings)', { skip }, () => {
  test('generateText, natively passed through to OpenAI, billed from response.completed', async () => {
    const result = await aiSdkCall('generate', 'openai/gpt-5-mini', 'Say hello');
    assert.equal(result.error, undefined, JSON.stringify(result.error));
    assert.equal(result.text, RESPONSES_REPLY);
    assert.equal(result.usage?.inputTokens, RESPONSES_USAGE.input_tokens);
    assert.equal(result.usage?.outputTokens, RESPONSES_USAGE.output_tokens);
    const sent = responses.requests.at(-1)!;
    assert.equal(sent.path, '/v1/responses');
    assert.equal(sent.body!.model, 'gpt-5-mini');
    const [row] = await tg.logRowsOf('openai/gpt-5-mini', 1);
    assert.equal(row!.endpoint, 'responses.create');
    // (21 − 5) × $0.25 + 5 × $0.025 + 13 × $2 per million, in nano-USD.
    assert.equal(row!.cost_nanos, 16 * 250 + 5 * 25 + 13 * 2000);
  });

  test('streamText, natively: the deltas are the upstream\'s, usage arrives', async () => {
    const result = await aiSdkCall('stream', 'openai/gpt-5-mini', 'Say hello');
    assert.equal(result.error, undefined, JSON.stringify(result.error));
    assert.deepEqual(result.deltas, RESPONSES_PIECES);
    assert.equal(result.usage?.outputTokens, RESPONSES_USAGE.output_tokens);
    assert.equal(result.finishReason, 'stop');
    assert.equal(responses.requests.at(-1)!.body!.stream, true);
  });

  test('generateText and streamText translated to Anthropic, billed at Anthropic\'s usage', async () => {
    const generated = await aiSdkCall('generate', 'anthropic/claude-sonnet-4-5', 'Say hello');
    assert.equal(generated.error, undefined, JSON.stringify(generated.error));
    assert.equal(generated.text, SIM_REPLY);
    const total = SIM_USAGE.input_tokens + SIM_USAGE.cache_creation_input_tokens + SIM_USAGE.cache_read_input_tokens;
    assert.equal(generated.usage?.inputTokens, total);
    assert.equal(generated.usage?.outputTokens, SIM_USAGE.output_tokens);
    const streamed = await aiSdkCall('stream', 'anthropic/claude-sonnet-4-5', 'Say hello');
    assert.equal(streamed.error, undefined, JSON.stringify(streamed.error));
    assert.equal(streamed.text, SIM_REPLY);
    assert.ok(streamed.deltas!.length > 1, 'streamed in several deltas');
    const rows = await tg.logRowsOf('anthropic/claude-sonnet-4-5', 2);
    // 12 × $3 + 5 × $0.30 + 3 × $3.75 + 9 × $15 per million, in nano-USD.
    for (const row of rows) assert.equal(row.cost_nanos, 12 * 3000 + 5 * 300 + 3 * 3750 + 9 * 15000);
  });

  test('a tool loop (generateText with stopWhen), natively', async () => {
    const native = await aiSdkCall('tools', 'openai/sim-tool', 'Weather in Paris?');
    assert.equal(native.error, undefined, JSON.stringify(native.error));
    assert.deepEqual(native.toolCalls, [{ toolName: 'get_weather', input: { city: 'Paris' } }]);
    assert.equal(native.steps, 2);
    assert.equal(native.text, RESPONSES_TOOL_ANSWER);
    const secondTurn = responses.requests.at(-1)!.body!.input as Array<{ type?: string; call_id?: string; output?: string }>;
    const output = secondTurn.find((item) => item.type === 'function_call_output');
    assert.equal(output?.call_id, 'call_sim_1');
    assert.match(String(output?.output), /sunny/);
  });

  // The SDK stores responses (store: true) and refers back to their items with `item_reference`,
  // which a translated route resolves from the gateway's own response store.
  test('a tool loop, translated to Anthropic', async () => {
    const translated = await aiSdkCall('tools', 'anthropic/sim-tool', 'Weather in Paris and London?');
    assert.equal(translated.error, undefined, JSON.stringify(translated.error));
    assert.deepEqual(translated.toolCalls?.map((c) => c.input), [{ city: 'Paris' }, { city: 'London' }]);
    assert.equal(translated.text, SIM_TOOL_ANSWER);
    const lastTurn = anthropic.requests.at(-1)!.body!.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    assert.deepEqual(lastTurn.at(-1)!.content.map((block) => block.type), ['tool_result', 'tool_result']);
  });

  test('an upstream refusal reaches the SDK as an API error with its status', async () => {
    const result = await aiSdkCall('generate', 'openai/sim-429', 'Say hello');
    assert.equal(result.error?.statusCode, 429);
  });

  test('embed, natively to OpenAI (the SDK\'s base64 decoded) and translated to Ollama, billed on input', async () => {
    const text = 'Tollgate embeds this sentence.';
    for (const model of ['embedder/text-embedding-3-small', 'ollama/nomic-embed-text']) {
      const result = await aiSdkCall('embed', model, text);
      assert.equal(result.error, undefined, JSON.stringify(result.error));
      assert.equal(result.dimensions, SIM_EMBEDDING_DIMENSIONS, model);
      assert.deepEqual(result.head, simEmbedding(text).slice(0, 4), model);
      const [row] = await tg.logRowsOf(model, 1);
      assert.equal(row!.endpoint, 'embeddings.create');
      assert.equal(row!.completion_tokens, 0);
      if (model.startsWith('embedder/')) assert.equal(row!.prompt_tokens, simEmbeddingTokens(text));
    }
  });
});

describe('the AI SDK\'s Anthropic and Google providers', { skip }, () => {
  test('@ai-sdk/anthropic with baseURL <gateway>/api: generateText and streamText through POST /api/messages, billed and logged', async () => {
    const before = anthropic.requests.length;
    const generated = await aiSdkCall('generate', 'anthropic/claude-sonnet-4-6', 'Say hello', 'anthropic');
    assert.equal(generated.error, undefined, JSON.stringify(generated.error));
    assert.equal(generated.text, SIM_REPLY);
    assert.equal(generated.usage?.outputTokens, SIM_USAGE.output_tokens);
    const streamed = await aiSdkCall('stream', 'anthropic/claude-sonnet-4-6', 'Say hello', 'anthropic');
    assert.equal(streamed.error, undefined, JSON.stringify(streamed.error));
    assert.equal(streamed.text, SIM_REPLY);
    assert.ok(streamed.deltas!.length > 1, 'streamed in several deltas');
    assert.equal(streamed.finishReason, 'stop');
    const sent = anthropic.requests.slice(before);
    assert.deepEqual(sent.map((r) => [r.path, r.body!.model, r.body!.stream === true]), [['/v1/messages', 'claude-sonnet-4-6', false], ['/v1/messages', 'claude-sonnet-4-6', true]]);
    const rows = await tg.logRowsOf('anthropic/claude-sonnet-4-6', 2);
    assert.deepEqual(rows.map((r) => [r.endpoint, r.status, r.stream, r.gateway_user_id]), [['messages.create', 200, 0, tg.userId], ['messages.create', 200, 1, tg.userId]]);
    // 12 × $3 + 5 × $0.30 + 3 × $3.75 + 9 × $15 per million, in nano-USD.
    for (const row of rows) assert.equal(row.cost_nanos, 12 * 3000 + 5 * 300 + 3 * 3750 + 9 * 15000);
  });

  test('@ai-sdk/google with baseURL <gateway>/api/v1beta: generateText and streamText natively to Gemini, key in x-goog-api-key, logged', async () => {
    const before = gemini.requests.length;
    const generated = await aiSdkCall('generate', 'gemini-2.5-flash', 'Say hello', 'google');
    assert.equal(generated.error, undefined, JSON.stringify(generated.error));
    assert.equal(generated.text, GEMINI_REPLY);
    const streamed = await aiSdkCall('stream', 'gemini-2.5-flash', 'Say hello', 'google');
    assert.equal(streamed.error, undefined, JSON.stringify(streamed.error));
    assert.equal(streamed.text, GEMINI_REPLY);
    // (The gateway's catalog may list the simulator's models first, to resolve the bare id.)
    const sent = gemini.requests.slice(before).filter((r) => r.method === 'POST').map((r) => [r.path, r.query.alt ?? null]);
    assert.deepEqual(sent, [['/v1beta/models/gemini-2.5-flash:generateContent', null], ['/v1beta/models/gemini-2.5-flash:streamGenerateContent', 'sse']]);
    const rows = await tg.logRowsOf('gemini-2.5-flash', 2);
    assert.deepEqual(rows.map((r) => [r.endpoint, r.provider, r.status, r.gateway_user_id]), [
      ['gemini.generateContent', 'gemini', 200, tg.userId], ['gemini.streamGenerateContent', 'gemini', 200, tg.userId],
    ]);
    for (const row of rows) assert.ok(Number(row.cost_nanos) > 0, 'billed');
  });
});
