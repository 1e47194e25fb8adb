/**
 * An Azure OpenAI resource on 127.0.0.1, speaking Azure's wire format on both data-plane APIs
 * (https://learn.microsoft.com/azure/ai-foundry/openai/reference ,
 * https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle):
 * - v1: `POST /openai/v1/chat/completions`, `/openai/v1/embeddings`, `/openai/v1/responses` (the
 *   deployment is the body's `model`), `GET /openai/v1/models`;
 * - deployment API: `POST /openai/deployments/{deployment}/chat/completions?api-version=…` and
 *   `/embeddings?api-version=…`, `POST /openai/responses?api-version=…`, `GET /openai/models?api-version=…`;
 *   a call without `api-version` answers 404 as Azure does ("Resource not found").
 * Every call needs `api-key: <one of keys>` or `Authorization: Bearer <one of tokens>` (an Entra ID
 * token, e.g. one issued by entra-token-endpoint.ts); anything else answers Azure's 401 "Access
 * denied due to invalid subscription key or wrong API endpoint".
 *
 * Answers carry Azure's content-filter fields: `prompt_filter_results` on a completion, and on a
 * stream's first chunk, which has `choices: []`, an empty `id`/`model` and nothing else;
 * `content_filter_results` on every choice. `model` is the model the deployment runs, not its name.
 *
 * By deployment (unknown deployments answer 404 `DeploymentNotFound`):
 * - `sim-filtered`: 400 `content_filter` with `innererror.content_filter_result` (the prompt was filtered)
 * - `sim-filter-finish`: answers part of the reply, then `finish_reason: "content_filter"`
 *   (`content_filter_results.violence.filtered: true`)
 * - `sim-429`: Azure's token-rate 429 with `retry-after: 6` and `retry-after-ms: 6000`
 * - `sim-tool`: offered a function tool and no `tool` message yet, calls it with `{"city":"Paris"}`
 * Every other configured deployment answers `SIM_REPLY` (streamed in `simStreamPiece`s) with `SIM_USAGE`.
 * Responses are answered by the OpenAI Responses simulator's logic (`answerResponses`); started with
 * `agent`, they play its scripted coding agent (sim-agent.ts) for Codex.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';
import { SIM_REPLY, SIM_USAGE, simStreamPiece } from './openai-simulator.ts';
import { answerResponses } from './openai-responses-simulator.ts';
import type { SimAgent } from './sim-agent.ts';
import { simEmbedding, simEmbeddingTokens, simInputs, SIM_EMBEDDING_DIMENSIONS } from './sim-embeddings.ts';

export const AZURE_SIM_KEY = 'azure-sim-key-0001';
/** Deployment name → the model it runs (what answers report as `model`). */
export const AZURE_SIM_DEPLOYMENTS: Readonly<Record<string, string>> = {
  'chat-prod': 'gpt-4o-mini-2024-07-18',
  'embed-small': 'text-embedding-3-small',
  'sim-filtered': 'gpt-4o-mini-2024-07-18',
  'sim-filter-finish': 'gpt-4o-mini-2024-07-18',
  'sim-429': 'gpt-4o-mini-2024-07-18',
  'sim-tool': 'gpt-4o-mini-2024-07-18',
  'codex-prod': 'gpt-5-mini-2025-08-07',
};
export const AZURE_SIM_STREAM_CHUNKS = 4;
/** The text `sim-filter-finish` answers before the filter stops it. */
export const AZURE_SIM_FILTERED_TEXT = 'Hello from';

export interface AzureSimulatorOptions {
  /** Responses play a scripted coding agent (sim-agent.ts). */
  agent?: SimAgent;
}

export interface AzureSimulator {
  /** The resource endpoint, as a manifest's `baseUrl` (`https://<resource>.openai.azure.com`). */
  readonly endpoint: string;
  readonly requests: RecordedRequest[];
  /** Keys the resource accepts (a test may add or remove some). */
  readonly keys: Set<string>;
  /** Entra ID access tokens the resource accepts as `Authorization: Bearer`. */
  readonly tokens: Set<string>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const SAFE = { filtered: false, severity: 'safe' };
const contentFilterResults = (violence: Json = SAFE) => ({ hate: SAFE, self_harm: SAFE, sexual: SAFE, violence });
const promptFilterResults = [{ prompt_index: 0, content_filter_results: { ...contentFilterResults(), jailbreak: { filtered: false, detected: false } } }];

function sendError(res: ServerResponse, status: number, error: Json, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': 'apim-sim-0001', 'x-request-id': 'apim-sim-0001', ...headers });
  res.end(JSON.stringify({ error }));
}

const ACCESS_DENIED = {
  code: '401',
  message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
};

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

function chunk(model: string, delta: Json, finishReason: string | null, filter: Json = contentFilterResults()) {
  return {
    id: 'chatcmpl-azsim', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_azsim',
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null, content_filter_results: finishReason ? {} : filter }],
  };
}

/** The tool call `sim-tool` answers, or null when it answers text. */
function toolCallOf(body: Json): Json | null {
  const tools = (body.tools ?? []) as Array<{ function?: { name?: string } }>;
  const messages = (body.messages ?? []) as Array<{ role?: string }>;
  if (tools.length === 0 || messages.at(-1)?.role === 'tool') return null;
  return { id: 'call_azsim_1', type: 'function', function: { name: String(tools[0]!.function?.name), arguments: '{"city":"Paris"}' } };
}

function chat(res: ServerResponse, deployment: string, body: Json) {
  const model = AZURE_SIM_DEPLOYMENTS[deployment]!;
  const toolCall = deployment === 'sim-tool' ? toolCallOf(body) : null;
  const filteredFinish = deployment === 'sim-filter-finish';
  const finish = toolCall ? 'tool_calls' : filteredFinish ? 'content_filter' : 'stop';
  const violence = filteredFinish ? { filtered: true, severity: 'medium' } : SAFE;
  if (body.stream !== true) {
    const message = toolCall ? { role: 'assistant', content: null, refusal: null, tool_calls: [toolCall] }
      : { role: 'assistant', content: filteredFinish ? AZURE_SIM_FILTERED_TEXT : SIM_REPLY, refusal: null };
    res.writeHead(200, { 'content-type': 'application/json', 'apim-request-id': 'apim-sim-0002' });
    return res.end(JSON.stringify({
      choices: [{ content_filter_results: contentFilterResults(violence), finish_reason: finish, index: 0, logprobs: null, message }],
      created: 1_700_000_000, id: 'chatcmpl-azsim', model, object: 'chat.completion', prompt_filter_results: promptFilterResults,
      system_fingerprint: 'fp_azsim', usage: SIM_USAGE,
    }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'apim-request-id': 'apim-sim-0002' });
  // Azure's first event: the prompt's filter results, before any choice.
  res.write(sse({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptFilterResults }));
  res.write(sse(chunk(model, { role: 'assistant', content: toolCall ? null : '', refusal: null }, null)));
  if (toolCall) {
    res.write(sse(chunk(model, { tool_calls: [{ index: 0, ...toolCall, function: { name: (toolCall.function as Json).name, arguments: '' } }] }, null)));
    res.write(sse(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }, null)));
  } else if (filteredFinish) {
    res.write(sse(chunk(model, { content: AZURE_SIM_FILTERED_TEXT }, null)));
    res.write(sse(chunk(model, {}, null, contentFilterResults(violence))));
  } else {
    for (let i = 0; i < AZURE_SIM_STREAM_CHUNKS; i++) res.write(sse(chunk(model, { content: simStreamPiece(i) }, null)));
  }
  res.write(sse(chunk(model, {}, finish)));
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true) {
    res.write(sse({ choices: [], created: 1_700_000_000, id: 'chatcmpl-azsim', model, object: 'chat.completion.chunk', system_fingerprint: 'fp_azsim', usage: SIM_USAGE }));
  }
  res.end('data: [DONE]\n\n');
}

function embeddings(res: ServerResponse, deployment: string, body: Json) {
  const inputs = simInputs(body.input);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : SIM_EMBEDDING_DIMENSIONS;
  const data = inputs.map((input, index) => ({ object: 'embedding', index, embedding: simEmbedding(input, dimensions) }));
  const tokens = inputs.reduce((sum, input) => sum + simEmbeddingTokens(input), 0);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: AZURE_SIM_DEPLOYMENTS[deployment], usage: { prompt_tokens: tokens, total_tokens: tokens } }));
}

/** A model call after its key, api-version and deployment were checked: the deployment's behaviour. */
function modelCall(res: ServerResponse, operation: string, deployment: string, body: Json, agent: SimAgent | undefined) {
  if (!(deployment in AZURE_SIM_DEPLOYMENTS)) {
    return sendError(res, 404, { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' });
  }
  if (deployment === 'sim-429') {
    return sendError(res, 429, {
      code: '429',
      message: 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds.',
    }, { 'retry-after': '6', 'retry-after-ms': '6000' });
  }
  if (deployment === 'sim-filtered') {
    return sendError(res, 400, {
      message: 'The response was filtered due to the prompt triggering Azure OpenAI\'s content management policy. Please modify your prompt and retry.',
      type: null, param: 'prompt', code: 'content_filter', status: 400,
      innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: contentFilterResults({ filtered: true, severity: 'high' }) },
    });
  }
  if (operation === 'chat') return chat(res, deployment, body);
  if (operation === 'embeddings') return embeddings(res, deployment, body);
  return answerResponses(res, body, agent);
}

/** `{ operation, deployment }` of a model-call path, or null. The v1 API and Responses name the deployment in the body. */
function routeOf(path: string, body: Json | null): { operation: string; deployment: string; dated: boolean } | null {
  const v1 = /^\/openai\/v1\/(chat\/completions|embeddings|responses)$/.exec(path);
  if (v1) return { operation: v1[1] === 'chat/completions' ? 'chat' : v1[1]!, deployment: String(body?.model ?? ''), dated: false };
  const scoped = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(path);
  if (scoped) return { operation: scoped[2] === 'chat/completions' ? 'chat' : scoped[2]!, deployment: decodeURIComponent(scoped[1]!), dated: true };
  if (path === '/openai/responses') return { operation: 'responses', deployment: String(body?.model ?? ''), dated: true };
  return null;
}

function authorized(req: IncomingMessage, keys: Set<string>, tokens: Set<string>): boolean {
  const key = req.headers['api-key'];
  if (typeof key === 'string') return keys.has(key);
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  return bearer !== undefined && tokens.has(bearer);
}

export async function startAzureSimulator(options: AzureSimulatorOptions = {}): Promise<AzureSimulator> {
  const requests: RecordedRequest[] = [];
  const keys = new Set([AZURE_SIM_KEY]);
  const tokens = new Set<string>();
  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    requests.push(request);
    const { path, query, body } = request;
    if (!authorized(req, keys, tokens)) return sendError(res, 401, ACCESS_DENIED);
    if (req.method === 'GET' && (path === '/openai/v1/models' || (path === '/openai/models' && query['api-version']))) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_721_172_741, status: 'succeeded' }] }));
    }
    const route = req.method === 'POST' ? routeOf(path, body) : null;
    if (!route || (route.dated && !query['api-version'])) return sendError(res, 404, { code: '404', message: 'Resource not found' });
    return modelCall(res, route.operation, route.deployment, body ?? {}, options.agent);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { endpoint, requests, keys, tokens, close: () => closeServer(server) };
}
