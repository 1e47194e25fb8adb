/**
 * The Azure OpenAI provider through the real in-process gateway: the official `openai` and
 * `@anthropic-ai/sdk` clients against Tollgate, the Azure simulator upstream on both data-plane APIs
 * (v1 and the dated deployment API). The simulator's wire format is first checked against the
 * `openai` package's own `AzureOpenAI` client, which builds the URLs and headers Azure expects.
 * Every `assert.ok` has a message: without one, the message node:test generates for a failure here
 * stalled the run for minutes under tsx.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import {
  startAzureSimulator, AZURE_SIM_KEY, AZURE_SIM_FILTERED_TEXT, AZURE_SIM_STREAM_CHUNKS, type AzureSimulator,
} from '../helpers/azure-openai-simulator.ts';
import { SIM_REPLY, SIM_USAGE, simStreamText } from '../helpers/openai-simulator.ts';
import { RESPONSES_REPLY, RESPONSES_USAGE } from '../helpers/openai-responses-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';
import { DEFAULT_DATASET_PROVIDERS } from '../../core/money/price-dataset.ts';
import { AzureProvider } from '../../plugins/provider-router/providers/azure/index.ts';
import { azurePath } from '../../plugins/provider-router/providers/azure/urls.ts';
import { createUpstreamClient } from '../../core/upstream/upstream-client.ts';

const API_VERSION = '2024-10-21';
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

let sim: AzureSimulator;
let tg: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;

/** The simulator's requests since `from` that are model calls (not model lists). */
const callsSince = (from: number): RecordedRequest[] => sim.requests.slice(from).filter((r) => r.method === 'POST');

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

async function apiError(fn: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await fn().then(() => null, (e: unknown) => e);
  assert.ok(err instanceof OpenAI.APIError, `expected an APIError, got ${String(err)}`);
  return err;
}

/** The stored price row of `model` (as the dataset import wrote it). */
function storedPrice(model: string) {
  return tg.gateway.store.db.selectFrom('model_pricing').selectAll().where('model', '=', model).executeTakeFirstOrThrow();
}

before(async () => {
  sim = await startAzureSimulator();
  const deployments = { 'chat-prod': { model: 'gpt-4o-mini' }, 'embed-small': { model: 'text-embedding-3-small' } };
  tg = await startTestGateway({
    providers: {
      azure: { type: 'azure', baseUrl: sim.endpoint, apiKey: AZURE_SIM_KEY, deployments },
      azuredep: { type: 'azure', baseUrl: sim.endpoint, apiKey: AZURE_SIM_KEY, azureApi: 'deployments', apiVersion: API_VERSION, deployments },
      azurebad: { type: 'azure', baseUrl: sim.endpoint, apiKey: 'azure-wrong-key' },
      azurepool: { type: 'azure', baseUrl: sim.endpoint, apiKeys: ['azure-pool-bad-key', AZURE_SIM_KEY] },
    },
    // A second Azure entry is priced from the dataset as "azure" is (docs/providers.md).
    config: { pricing: { datasetProviders: { ...DEFAULT_DATASET_PROVIDERS, azuredep: 'openai' } } },
    // A 6 s retry-after ends the retries rather than being waited for; a refused pooled key is retried.
    router: { retry: { maxAttempts: 2, maxRetryAfterMs: 1_000 } },
  });
  client = tg.client;
  anthropic = new Anthropic({ apiKey: tg.apiKey, baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

describe('the Azure simulator against the official AzureOpenAI client', () => {
  test('the deployment API: chat, stream and embeddings at /openai/deployments/{d}/...?api-version, with api-key', async () => {
    const azure = new AzureOpenAI({ endpoint: sim.endpoint, apiKey: AZURE_SIM_KEY, apiVersion: API_VERSION, maxRetries: 0 });
    const from = sim.requests.length;
    const completion = await azure.chat.completions.create({ model: 'chat-prod', messages });
    assert.equal(completion.choices[0]!.message.content, SIM_REPLY);
    assert.equal(completion.model, 'gpt-4o-mini-2024-07-18');
    const chunks = await collect(await azure.chat.completions.create({ model: 'chat-prod', messages, stream: true, stream_options: { include_usage: true } }));
    assert.equal(chunks[0]!.choices.length, 0, 'the first chunk carries only prompt_filter_results');
    assert.ok((chunks[0] as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results.length > 0, 'prompt_filter_results on the first chunk');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), simStreamText(AZURE_SIM_STREAM_CHUNKS));
    assert.deepEqual(chunks.at(-1)!.usage, SIM_USAGE);
    const vectors = await azure.embeddings.create({ model: 'embed-small', input: ['a', 'b'] });
    assert.equal(vectors.data.length, 2);
    const seen = callsSince(from);
    assert.deepEqual(seen.map((r) => r.path), [
      '/openai/deployments/chat-prod/chat/completions', '/openai/deployments/chat-prod/chat/completions', '/openai/deployments/embed-small/embeddings',
    ]);
    for (const r of seen) {
      assert.equal(r.query['api-version'], API_VERSION);
      assert.equal(r.headers['api-key'], AZURE_SIM_KEY);
      assert.equal(r.headers.authorization, undefined);
    }
  });

  test('Responses at /openai/responses?api-version, the deployment as the body\'s model', async () => {
    const azure = new AzureOpenAI({ endpoint: sim.endpoint, apiKey: AZURE_SIM_KEY, apiVersion: '2025-04-01-preview', maxRetries: 0 });
    const from = sim.requests.length;
    const response = await azure.responses.create({ model: 'chat-prod', input: 'Say hello' });
    assert.equal(response.output_text, RESPONSES_REPLY);
    assert.equal(callsSince(from)[0]!.path, '/openai/responses');
    assert.equal(callsSince(from)[0]!.query['api-version'], '2025-04-01-preview');
  });

  test('refuses a key sent as Bearer, and a deployment URL without api-version', async () => {
    const bearer = new OpenAI({ apiKey: AZURE_SIM_KEY, baseURL: `${sim.endpoint}/openai/v1`, maxRetries: 0 });
    const refused = await apiError(() => bearer.chat.completions.create({ model: 'chat-prod', messages }));
    assert.equal(refused.status, 401);
    assert.match(refused.message, /Access denied due to invalid subscription key/);
    const undated = new OpenAI({ apiKey: 'unused', baseURL: `${sim.endpoint}/openai/deployments/chat-prod`, defaultHeaders: { 'api-key': AZURE_SIM_KEY }, maxRetries: 0 });
    assert.equal((await apiError(() => undated.chat.completions.create({ model: 'chat-prod', messages }))).status, 404);
  });
});

describe('azure chat through the gateway', () => {
  test('v1: a completion relayed with Azure\'s filter fields, sent to /openai/v1 with api-key and the deployment as model', async () => {
    const from = sim.requests.length;
    const { data, response } = await client.chat.completions.create({ model: 'azure/chat-prod', messages }).withResponse();
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.ok(Array.isArray((data as unknown as { prompt_filter_results: unknown }).prompt_filter_results), 'prompt_filter_results relayed');
    assert.ok((data.choices[0] as unknown as { content_filter_results: unknown }).content_filter_results, 'content_filter_results relayed');
    const [sent] = callsSince(from);
    assert.equal(sent!.path, '/openai/v1/chat/completions');
    assert.deepEqual(sent!.query, {});
    assert.equal(sent!.headers['api-key'], AZURE_SIM_KEY);
    assert.equal(sent!.headers.authorization, undefined);
    assert.equal(sent!.body!.model, 'chat-prod');
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.provider, 'azure');
    assert.equal(row.model_served, 'gpt-4o-mini-2024-07-18');
    assert.equal(row.prompt_tokens, SIM_USAGE.prompt_tokens);
    assert.equal(row.completion_tokens, SIM_USAGE.completion_tokens);
    assert.equal(row.unpriced, 0);
    assert.ok(row.cost_nanos! > 0, `cost ${row.cost_nanos}`);
  });

  test('the deployment API: /openai/deployments/{deployment}/chat/completions with the manifest\'s api-version', async () => {
    const from = sim.requests.length;
    const data = await client.chat.completions.create({ model: 'azuredep/chat-prod', messages });
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, '/openai/deployments/chat-prod/chat/completions');
    assert.deepEqual(sent!.query, { 'api-version': API_VERSION });
    assert.equal(sent!.headers['api-key'], AZURE_SIM_KEY);
  });

  test('a stream keeps the filter-only first chunk, ends with the usage chunk and [DONE], and is billed', async () => {
    const { data: stream, response } = await client.chat.completions.create({
      model: 'azuredep/chat-prod', messages, stream: true, stream_options: { include_usage: true },
    }).withResponse();
    const chunks = await collect(stream);
    assert.equal(chunks[0]!.choices.length, 0);
    assert.ok((chunks[0] as unknown as { prompt_filter_results?: unknown }).prompt_filter_results, 'prompt_filter_results on the first chunk');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), simStreamText(AZURE_SIM_STREAM_CHUNKS));
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)!.usage, SIM_USAGE);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.completion_tokens, SIM_USAGE.completion_tokens);
    assert.ok(row.cost_nanos! > 0, `cost ${row.cost_nanos}`);
  });

  test('a stream whose client did not ask for usage still asks Azure for it, bills it and shows none', async () => {
    const from = sim.requests.length;
    const { data: stream, response } = await client.chat.completions.create({ model: 'azure/chat-prod', messages, stream: true }).withResponse();
    const chunks = await collect(stream);
    assert.ok(chunks.every((c) => !c.usage), 'no usage shown');
    assert.deepEqual(callsSince(from)[0]!.body!.stream_options, { include_usage: true });
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.prompt_tokens, SIM_USAGE.prompt_tokens);
  });

  test('tools: a tool call answered whole and streamed', async () => {
    const data = await client.chat.completions.create({ model: 'azure/sim-tool', messages, tools: [weatherTool] });
    assert.equal(data.choices[0]!.finish_reason, 'tool_calls');
    const call = data.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.deepEqual([call.function.name, JSON.parse(call.function.arguments)], ['get_weather', { city: 'Paris' }]);
    const chunks = await collect(await client.chat.completions.create({ model: 'azuredep/sim-tool', messages, tools: [weatherTool], stream: true }));
    const args = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t) => t.function?.arguments ?? '').join('');
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'tool_calls');
  });
});

describe('azure embeddings and Responses through the gateway', () => {
  test('embeddings pass through to both APIs\' paths and are logged with their tokens', async () => {
    const from = sim.requests.length;
    const v1 = await client.embeddings.create({ model: 'azure/embed-small', input: ['hello', 'world'] });
    const dep = await client.embeddings.create({ model: 'azuredep/embed-small', input: 'hello' });
    assert.equal(v1.data.length, 2);
    assert.equal(dep.data.length, 1);
    assert.deepEqual(dep.data[0]!.embedding, v1.data[0]!.embedding);
    const sent = callsSince(from);
    assert.deepEqual(sent.map((r) => [r.path, r.query['api-version'], r.body!.model]), [
      ['/openai/v1/embeddings', undefined, 'embed-small'],
      ['/openai/deployments/embed-small/embeddings', API_VERSION, 'embed-small'],
    ]);
  });

  test('Responses pass through (v1 and dated), streamed too, billed at the deployment\'s model price', async () => {
    const from = sim.requests.length;
    const { data, response } = await client.responses.create({ model: 'azure/chat-prod', input: 'Say hello' }).withResponse();
    assert.equal(data.output_text, RESPONSES_REPLY);
    const events = await collect(await client.responses.create({ model: 'azuredep/chat-prod', input: 'Say hello', stream: true }));
    assert.equal(events.at(-1)!.type, 'response.completed');
    const sent = callsSince(from);
    assert.deepEqual(sent.map((r) => [r.path, r.query['api-version'], r.body!.model]), [
      ['/openai/v1/responses', undefined, 'chat-prod'],
      ['/openai/responses', API_VERSION, 'chat-prod'],
    ]);
    // The Responses simulator reports the deployment name as `model`: only the manifest's mapping prices it.
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.prompt_tokens, RESPONSES_USAGE.input_tokens);
    assert.equal(row.unpriced, 0);
    const billed = JSON.parse(String(row.billed_price)) as { input_price_per_million: number; output_price_per_million: number };
    const mini = await storedPrice('azure/gpt-4o-mini');
    assert.deepEqual([billed.input_price_per_million, billed.output_price_per_million], [mini.input_price_per_million, mini.output_price_per_million]);
  });
});

describe('an Anthropic client to an Azure deployment (translated)', () => {
  test('messages.create and its stream are translated to chat completions', async () => {
    const from = sim.requests.length;
    const message = await anthropic.messages.create({ model: 'azure/chat-prod', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.equal(message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), SIM_REPLY);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, SIM_USAGE.completion_tokens);
    const stream = anthropic.messages.stream({ model: 'azuredep/chat-prod', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    const final = await stream.finalMessage();
    assert.equal(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), simStreamText(AZURE_SIM_STREAM_CHUNKS));
    assert.deepEqual(callsSince(from).map((r) => r.path), ['/openai/v1/chat/completions', '/openai/deployments/chat-prod/chat/completions']);
  });

  test('a content-filter finish reads as Anthropic\'s refusal', async () => {
    const message = await anthropic.messages.create({ model: 'azure/sim-filter-finish', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.equal(message.stop_reason, 'refusal');
    const final = await anthropic.messages.stream({ model: 'azure/sim-filter-finish', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] }).finalMessage();
    assert.equal(final.stop_reason, 'refusal');
  });
});

describe('azure content filter and errors', () => {
  test('finish_reason content_filter with its filter results, whole and streamed', async () => {
    const data = await client.chat.completions.create({ model: 'azure/sim-filter-finish', messages });
    assert.equal(data.choices[0]!.finish_reason, 'content_filter');
    assert.equal(data.choices[0]!.message.content, AZURE_SIM_FILTERED_TEXT);
    const results = (data.choices[0] as unknown as { content_filter_results: { violence: { filtered: boolean } } }).content_filter_results;
    assert.equal(results.violence.filtered, true);
    const chunks = await collect(await client.chat.completions.create({ model: 'azure/sim-filter-finish', messages, stream: true }));
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'content_filter');
  });

  test('a filtered prompt answers 400 content_filter with Azure\'s message, not retried', async () => {
    const from = sim.requests.length;
    const err = await apiError(() => client.chat.completions.create({ model: 'azure/sim-filtered', messages }));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'content_filter');
    assert.match(err.message, /content management policy/);
    assert.equal(err.headers?.get('x-should-retry'), 'false');
    assert.equal(callsSince(from).length, 1);
  });

  test('429 passes on Azure\'s retry-after and retry-after-ms', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'azure/sim-429', messages }));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers?.get('retry-after'), '6');
    assert.equal(err.headers?.get('retry-after-ms'), '6000');
    assert.match(err.message, /exceeded token rate limit/);
  });

  test('an unknown deployment is 404 model_not_found with a hint', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'azure/no-such-deployment', messages }));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.match(err.message, /deployment name/);
  });

  test('a refused key is 401 upstream_authentication_error, without Azure\'s text', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'azurebad/chat-prod', messages }));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'upstream_authentication_error');
    assert.doesNotMatch(err.message, /subscription key/);
  });

  test('a key pool: the refused key rests and the request is served with the other', async () => {
    const from = sim.requests.length;
    for (let i = 0; i < 2; i++) {
      const data = await client.chat.completions.create({ model: 'azurepool/chat-prod', messages });
      assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    }
    const keys = callsSince(from).map((r) => r.headers['api-key']);
    assert.ok(keys.includes('azure-pool-bad-key'), keys.join(','));
    assert.equal(keys.filter((k) => k === AZURE_SIM_KEY).length, 2);
  });
});

describe('azure models', () => {
  test('GET /api/v1/models lists the manifest\'s deployments as azure/<deployment>, without asking Azure', async () => {
    const from = sim.requests.length;
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids.filter((id) => id.startsWith('azure/') || id.startsWith('azuredep/')).sort(), [
      'azure/chat-prod', 'azure/embed-small', 'azuredep/chat-prod', 'azuredep/embed-small',
    ]);
    assert.equal(sim.requests.slice(from).length, 0);
  });
});

describe('azure prices in the catalog', () => {
  test('GET /api/models shows a deployment at the price of the model it runs', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/models`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    const { data } = (await res.json()) as { data: Array<{ id: string; owned_by: string; input_price_per_1k: number | null; output_price_per_1k: number | null }> };
    const deployment = data.find((m) => m.id === 'azure/chat-prod')!;
    const mini = await storedPrice('azure/gpt-4o-mini');
    assert.equal(deployment.owned_by, 'gpt-4o-mini');
    assert.deepEqual([deployment.input_price_per_1k, deployment.output_price_per_1k], [mini.input_price_per_million / 1000, mini.output_price_per_million / 1000]);
  });
});

describe('azure paths and credential test', () => {
  test('builds each operation\'s path for both APIs, the deployment name percent-encoded', () => {
    const cases: Array<[Parameters<typeof azurePath>, string]> = [
      [['v1', '2024-10-21', '', 'chat', 'my dep'], '/openai/v1/chat/completions'],
      [['v1', '2024-10-21', '', 'models', ''], '/openai/v1/models'],
      [['deployments', '2024-10-21', '', 'chat', 'my dep'], '/openai/deployments/my%20dep/chat/completions?api-version=2024-10-21'],
      [['deployments', '2024-10-21', '/proxy', 'embeddings', 'e'], '/proxy/openai/deployments/e/embeddings?api-version=2024-10-21'],
      [['deployments', '2025-04-01-preview', '', 'responses', 'd'], '/openai/responses?api-version=2025-04-01-preview'],
      [['deployments', '2024-10-21', '', 'models', ''], '/openai/models?api-version=2024-10-21'],
    ];
    for (const [args, path] of cases) assert.equal(azurePath(...args), path, args.join(' '));
  });

  test('testCredential asks the base-model list: a good key passes, a wrong one fails', async () => {
    const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, maxResponseBytes: 1_000_000, connectionsPerOrigin: 2 });
    try {
      for (const azureApi of ['v1', 'deployments'] as const) {
        const provider = new AzureProvider('azure', { type: 'azure', baseUrl: sim.endpoint, apiKey: AZURE_SIM_KEY, azureApi }, upstream);
        assert.equal((await provider.testCredential(provider.sharedCredential()!)).ok, true, azureApi);
        assert.equal((await provider.testCredential({ apiKey: 'wrong', baseUrl: sim.endpoint, source: 'shared' })).ok, false, azureApi);
      }
    } finally {
      await upstream.close();
    }
  });
});
