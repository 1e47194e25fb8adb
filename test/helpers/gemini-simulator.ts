/**
 * A Google Gemini Developer API (v1beta) upstream on 127.0.0.1, speaking the real wire format
 * (docs/provider-wire-formats.md §3; https://ai.google.dev/api/generate-content):
 * `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse` (whole
 * `GenerateContentResponse` events, CRLF-framed, running-total `usageMetadata`, no terminator),
 * `:countTokens` (always `SIM_COUNT_TOKENS`), `GET /v1beta/models` paged with `nextPageToken`, and Google's error bodies
 * `{"error":{"code","message","status","details"}}`.
 *
 * It checks what Gemini checks: the `x-goog-api-key` header (`bad-key` → 400 API_KEY_INVALID), no
 * `?key=` query, known top-level and `generationConfig` fields ("Unknown name" 400 otherwise), roles
 * `user`/`model`, non-empty parts with exactly one data field, `functionResponse.response` objects.
 *
 * It misbehaves on request, chosen by the model:
 * - `sim-429`: 429 RESOURCE_EXHAUSTED per-minute, `RetryInfo.retryDelay: "12s"`; `sim-quota-day`: per-day quota
 * - `sim-500`: 500 INTERNAL; `sim-overloaded`: 503 UNAVAILABLE; `sim-404`: 404 NOT_FOUND
 * - `sim-403`: 403 PERMISSION_DENIED whose message quotes the key (to prove it is never relayed)
 * - `sim-reset`: streams 2 events then resets the socket (non-stream: resets at once)
 * - `sim-malformed`: a body / event that is not JSON; `sim-mid-error`: 2 events then an in-band error
 * - `sim-truncated`: 2 events without a finish reason, then closes
 * - `sim-blocked`: the prompt is blocked (200, `promptFeedback.blockReason`, no candidates)
 * - `sim-length`: finishes with MAX_TOKENS
 * - `sim-tool`: answers with two parallel function calls (the first with a `thoughtSignature`), or, when
 *   the last turn holds function responses, with a text answer
 * Any other model answers `SIM_REPLY` (+ a hidden thought part), one candidate per `candidateCount`.
 *
 * Started with `agent`, it plays the scripted agent of test/helpers/sim-agent.ts for Gemini CLI, whatever
 * the model: a request for JSON output (`responseJsonSchema`: the CLI's model router, which asks for a
 * `complexity_score`) gets `agentJson` of the schema; a turn offering `write_file` gets a `functionCall` to it, and once the
 * last turn holds its `functionResponse`, the agent's final text. Each is one event when streamed.
 */
import { simEmbedding, SIM_EMBEDDING_DIMENSIONS } from './sim-embeddings.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, type RecordedRequest, sleep, closeServer } from './sim-http.ts';
import { agentJson, agentToolCall, type SimAgent } from './sim-agent.ts';

export interface GeminiSimulatorOptions {
  /** Page size of `GET /models`, whatever the client asks, so paging is exercised. Default 2. */
  modelPageSize?: number;
  /** Answer `GET /models` with 500. */
  failModelList?: boolean;
  /** Play this scripted agent (see the header). */
  agent?: SimAgent;
}

/** A request as the simulator received it. */
export type RecordedGeminiRequest = RecordedRequest;

export interface GeminiSimulator {
  readonly origin: string;
  /** `origin + '/v1beta'`: what GEMINI_BASE_URL should be. */
  readonly baseUrl: string;
  readonly requests: RecordedGeminiRequest[];
  /** The recorded chat requests only (model-list calls left out). */
  chatRequests(): RecordedGeminiRequest[];
  close(): Promise<void>;
}

export const SIM_REPLY = 'Hello from the Gemini simulator.';
/** `totalTokens` of every `countTokens` answer. */
export const SIM_COUNT_TOKENS = 17;
export const SIM_TOOL_ANSWER = 'It is 18C in Paris and 24C in Tokyo.';
/** A thought signature using every base64 character class, padding included. */
export const SIM_SIGNATURE = 'q+/9c2lnbmF0dXJlLW9uZQ==';
/** Final `usageMetadata` of every answer: 21 prompt (6 cached), 9 answer + 4 thinking. */
export const SIM_USAGE = {
  promptTokenCount: 21, candidatesTokenCount: 9, thoughtsTokenCount: 4, cachedContentTokenCount: 6, totalTokenCount: 34,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 21 }],
};
const STREAM_PIECES = ['Hello', ' from the', ' Gemini', ' simulator.'];

export const SIM_MODELS = [
  { name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'] },
  { name: 'models/gemini-2.5-pro', displayName: 'Gemini 2.5 Pro', supportedGenerationMethods: ['generateContent', 'countTokens'] },
  { name: 'models/text-embedding-004', displayName: 'Text Embedding 004', supportedGenerationMethods: ['embedContent'] },
  { name: 'models/gemini-2.0-flash-lite', displayName: 'Gemini 2.0 Flash-Lite', supportedGenerationMethods: ['generateContent'] },
  { name: 'models/sim-tool', displayName: 'Simulated tool caller', supportedGenerationMethods: ['generateContent'] },
];

const TOP_LEVEL = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);
const GENERATION_CONFIG = new Set([
  'maxOutputTokens', 'temperature', 'topP', 'topK', 'candidateCount', 'stopSequences', 'seed', 'presencePenalty',
  'frequencyPenalty', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'thinkingConfig', 'responseLogprobs', 'logprobs',
]);
const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

class InvalidArgument extends Error {}

type Json = Record<string, unknown>;
const sse = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\r\n\r\n`;

function sendError(res: ServerResponse, code: number, status: string, message: string, details?: unknown[]) {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status, ...(details && { details }) } }, null, 2));
}

function validatePart(part: Json, where: string) {
  const present = PART_FIELDS.filter((f) => part[f] !== undefined);
  if (present.length !== 1) throw new InvalidArgument(`${where}: a part must hold exactly one of ${PART_FIELDS.join(', ')}.`);
  const response = (part.functionResponse as Json | undefined)?.response;
  if (part.functionResponse && (!response || typeof response !== 'object' || Array.isArray(response))) {
    throw new InvalidArgument(`${where}.function_response.response: must be an object.`);
  }
  const inline = part.inlineData as Json | undefined;
  if (inline && (typeof inline.mimeType !== 'string' || typeof inline.data !== 'string')) throw new InvalidArgument(`${where}.inline_data: mimeType and data are required.`);
}

/** Throws `InvalidArgument` with Google's wording for what the real API rejects. */
function validateRequest(body: Json) {
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) throw new InvalidArgument(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
  for (const key of Object.keys((body.generationConfig as Json) ?? {})) {
    if (!GENERATION_CONFIG.has(key)) throw new InvalidArgument(`Invalid JSON payload received. Unknown name "${key}" at 'generation_config': Cannot find field.`);
  }
  const contents = body.contents as Json[] | undefined;
  if (!Array.isArray(contents) || contents.length === 0) throw new InvalidArgument('* GenerateContentRequest.contents: contents is not specified');
  contents.forEach((content, i) => {
    if (content.role !== 'user' && content.role !== 'model') throw new InvalidArgument(`Please use a valid role: user, model.`);
    const parts = content.parts as Json[] | undefined;
    if (!Array.isArray(parts) || parts.length === 0) throw new InvalidArgument(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    parts.forEach((part, j) => validatePart(part, `contents[${i}].parts[${j}]`));
  });
  for (const part of ((body.systemInstruction as Json | undefined)?.parts as Json[] | undefined) ?? []) validatePart(part, 'system_instruction');
}

function candidate(parts: Json[], finishReason: string | undefined, index = 0): Json {
  return { content: { parts, role: 'model' }, ...(finishReason && { finishReason }), index };
}

/** The scripted agent's answer (see the header), or null for a request it does not script. */
function agentAnswer(agent: SimAgent, body: Json): { parts: Json[]; finishReason: string } | null {
  const schema = (body.generationConfig as Json | undefined)?.responseJsonSchema as Json | undefined;
  if (schema) return { parts: [{ text: JSON.stringify(agentJson(schema)) }], finishReason: 'STOP' };
  const names = ((body.tools ?? []) as Json[]).flatMap((tool) => ((tool.functionDeclarations ?? []) as Json[]).map((f) => String(f.name)));
  const call = agentToolCall(agent, names, body);
  if (!call) return null;
  const contents = body.contents as Array<{ parts: Json[] }>;
  if (contents.at(-1)!.parts.some((p) => p.functionResponse)) return { parts: [{ text: agent.answer }], finishReason: 'STOP' };
  return { parts: [{ functionCall: { name: call.name, args: call.input } }], finishReason: 'STOP' };
}

function answerFor(model: string, body: Json, agent?: SimAgent): { parts: Json[]; finishReason: string } {
  const scripted = agent && agentAnswer(agent, body);
  if (scripted) return scripted;
  if (model === 'sim-tool') {
    const contents = body.contents as Array<{ parts: Json[] }>;
    if (contents.at(-1)!.parts.some((p) => p.functionResponse)) return { parts: [{ text: SIM_TOOL_ANSWER }], finishReason: 'STOP' };
    return {
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIM_SIGNATURE },
        { functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'C' } } },
      ],
      finishReason: 'STOP',
    };
  }
  return { parts: [{ text: 'The user greets me.', thought: true }, { text: SIM_REPLY }], finishReason: model === 'sim-length' ? 'MAX_TOKENS' : 'STOP' };
}

/** Stream events: the answer in pieces, usage as a running total, the finish reason on the last. */
function streamEvents(model: string, body: Json, candidates: number, agent?: SimAgent): string[] {
  const answer = answerFor(model, body, agent);
  const base = { modelVersion: model, responseId: 'sim-response-1' };
  const all = (parts: Json[], finish?: string) => Array.from({ length: candidates }, (_, i) => candidate(parts, finish, i));
  if (model === 'sim-tool' || (agent && agentAnswer(agent, body))) return [sse({ candidates: all(answer.parts, answer.finishReason), usageMetadata: SIM_USAGE, ...base })];
  const events = [sse({ candidates: all([answer.parts[0]!]), usageMetadata: { promptTokenCount: 21, totalTokenCount: 21 }, ...base })];
  STREAM_PIECES.forEach((text, i) => {
    const last = i === STREAM_PIECES.length - 1;
    // The second piece comes without usageMetadata, as Gemini sometimes sends: it must not zero the counts.
    const usage = last ? SIM_USAGE : i === 1 ? undefined : { promptTokenCount: 21, candidatesTokenCount: i + 1, thoughtsTokenCount: 4, totalTokenCount: 26 + i };
    events.push(sse({ candidates: all([{ text }], last ? answer.finishReason : undefined), ...(usage && { usageMetadata: usage }), ...base }));
  });
  return events;
}

const ERRORS: Record<string, [number, string, string, unknown[]?]> = {
  'sim-429': [429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
    { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier', quotaDimensions: { model: 'gemini-2.5-flash', location: 'global' }, quotaValue: '10' }] },
    { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' },
  ]],
  'sim-quota-day': [429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
    { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier', quotaValue: '250' }] },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '43s' },
  ]],
  'sim-500': [500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'],
  'sim-overloaded': [503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  'sim-404': [404, 'NOT_FOUND', 'models/sim-404 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.'],
};

/**
 * `POST /v1beta/models/{model}:batchEmbedContents`: one `ContentEmbedding` per request, its `values`
 * the deterministic vector of its text parts (`outputDimensionality` honoured); no usage, as Gemini
 * reports none. Each request must name the same model as the path (`models/{model}`), as Gemini requires.
 */
function batchEmbed(res: ServerResponse, model: string, body: Json) {
  const failure = ERRORS[model];
  if (failure) return sendError(res, ...failure);
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0) return sendError(res, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: must not be empty');
  const embeddings: Json[] = [];
  for (const [i, request] of (requests as Json[]).entries()) {
    if (request.model !== `models/${model}`) {
      return sendError(res, 400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: model in the request must match the model in the URL`);
    }
    const parts = ((request.content as Json | undefined)?.parts ?? []) as Json[];
    const text = parts.map((part) => String(part.text ?? '')).join('');
    const dimensions = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : SIM_EMBEDDING_DIMENSIONS;
    embeddings.push({ values: simEmbedding(text, dimensions) });
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ embeddings }, null, 2));
}

/**
 * `POST /v1beta/models/{model}:embedContent`: `{embedding: {values}}`, the deterministic vector of the
 * content's text parts (`outputDimensionality` honoured), no usage. A `model` in the body must match the path's.
 */
function embedOne(res: ServerResponse, model: string, body: Json) {
  const failure = ERRORS[model];
  if (failure) return sendError(res, ...failure);
  if (body.model !== undefined && body.model !== `models/${model}`) {
    return sendError(res, 400, 'INVALID_ARGUMENT', '* EmbedContentRequest.model: model in the request must match the model in the URL');
  }
  const parts = ((body.content as Json | undefined)?.parts ?? []) as Json[];
  if (parts.length === 0) return sendError(res, 400, 'INVALID_ARGUMENT', '* EmbedContentRequest.content: contents must not be empty');
  const text = parts.map((part) => String(part.text ?? '')).join('');
  const dimensions = typeof body.outputDimensionality === 'number' ? body.outputDimensionality : SIM_EMBEDDING_DIMENSIONS;
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ embedding: { values: simEmbedding(text, dimensions) } }, null, 2));
}

export async function startGeminiSimulator(options: GeminiSimulatorOptions = {}): Promise<GeminiSimulator> {
  const pageSize = options.modelPageSize ?? 2;
  const requests: RecordedGeminiRequest[] = [];

  async function chat(req: IncomingMessage, res: ServerResponse, model: string, method: string, query: Record<string, string>, body: Json) {
    const stream = method === 'streamGenerateContent';
    if (stream && query.alt !== 'sse') return sendError(res, 400, 'INVALID_ARGUMENT', 'The simulator only streams with alt=sse.');
    const known = ERRORS[model];
    if (known) return sendError(res, ...known);
    if (model === 'sim-403') return sendError(res, 403, 'PERMISSION_DENIED', `Permission denied for API key ${String(req.headers['x-goog-api-key'])}.`);
    try {
      validateRequest(body);
    } catch (err) {
      if (err instanceof InvalidArgument) return sendError(res, 400, 'INVALID_ARGUMENT', err.message);
      throw err;
    }
    if (model === 'sim-reset' && !stream) return req.socket.destroy();
    if (model === 'sim-malformed') {
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      return res.end(stream ? 'data: {not json}\r\n\r\n' : '{"candidates": [');
    }
    const candidates = Number((body.generationConfig as Json | undefined)?.candidateCount ?? 1);
    if (!stream) return answer(res, model, body, candidates);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
    if (model === 'sim-blocked') return res.end(sse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 21, totalTokenCount: 21 }, modelVersion: model }));
    const events = streamEvents(model, body, candidates, options.agent);
    switch (model) {
      case 'sim-reset':
        res.write(events.slice(0, 2).join(''));
        await sleep(20);
        return req.socket.destroy();
      case 'sim-mid-error':
        res.write(events.slice(0, 2).join(''));
        return res.end(sse({ error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }));
      case 'sim-truncated':
        return res.end(events.slice(0, 2).join(''));
    }
    // Gemini itself sends no SSE comments, and the Gen AI SDK bundled in Gemini CLI 0.61 fails on one
    // ("Incomplete JSON segment at the end"): the agent's streams go without.
    if (!options.agent) res.write(': keep-alive\r\n\r\n');
    for (const event of events) res.write(event);
    res.end();
  }

  function answer(res: ServerResponse, model: string, body: Json, candidates: number) {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    if (model === 'sim-blocked') {
      return res.end(JSON.stringify({ promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] }, usageMetadata: { promptTokenCount: 21, totalTokenCount: 21 }, modelVersion: model }));
    }
    const { parts, finishReason } = answerFor(model, body, options.agent);
    res.end(JSON.stringify({
      candidates: Array.from({ length: candidates }, (_, i) => ({ ...candidate(parts, finishReason, i), safetyRatings: [] })),
      usageMetadata: SIM_USAGE, modelVersion: model, responseId: 'sim-response-1',
    }));
  }

  function listModels(res: ServerResponse, query: Record<string, string>) {
    if (options.failModelList) return sendError(res, 500, 'INTERNAL', 'An internal error has occurred.');
    const offset = query.pageToken ? Number(Buffer.from(query.pageToken, 'base64url').toString()) : 0;
    const size = Math.min(pageSize, Number(query.pageSize ?? 50));
    const models = SIM_MODELS.slice(offset, offset + size);
    const next = offset + size < SIM_MODELS.length ? Buffer.from(String(offset + size)).toString('base64url') : undefined;
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify({ models, ...(next && { nextPageToken: next }) }));
  }

  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    requests.push(request);
    const { path, query, body } = request;
    const key = req.headers['x-goog-api-key'];
    if (query.key) return sendError(res, 400, 'INVALID_ARGUMENT', 'The simulator refuses keys in the query string.');
    if (!key) return sendError(res, 403, 'PERMISSION_DENIED', 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.');
    if (key === 'bad-key') {
      return sendError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
      ]);
    }
    if (req.method === 'GET' && path === '/v1beta/models') return listModels(res, query);
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(path);
    if (req.method === 'POST' && match && body) return chat(req, res, match[1]!, match[2]!, query, body);
    if (req.method === 'POST' && /^\/v1beta\/models\/[^/:]+:countTokens$/.test(path) && body) {
      if (!Array.isArray(body.contents) && typeof body.generateContentRequest !== 'object') return sendError(res, 400, 'INVALID_ARGUMENT', 'contents or generateContentRequest is required.');
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      return res.end(JSON.stringify({ totalTokens: SIM_COUNT_TOKENS, promptTokensDetails: [{ modality: 'TEXT', tokenCount: SIM_COUNT_TOKENS }] }));
    }
    const embed = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(path);
    if (req.method === 'POST' && embed && body) return batchEmbed(res, embed[1]!, body);
    const embedSingle = /^\/v1beta\/models\/([^/:]+):embedContent$/.exec(path);
    if (req.method === 'POST' && embedSingle && body) return embedOne(res, embedSingle[1]!, body);
    sendError(res, 404, 'NOT_FOUND', `The simulator does not serve ${req.method} ${path}.`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1beta`,
    requests,
    chatRequests: () => requests.filter((r) => r.method === 'POST'),
    close: () => closeServer(server),
  };
}
