/**
 * A Mistral La Plateforme upstream on 127.0.0.1, speaking its wire format
 * (docs/provider-wire-formats.md §4; https://docs.mistral.ai/api/):
 * - `POST /v1/chat/completions` with Bearer auth and Mistral's STRICT request schema: an unknown
 *   field (top level or in a message) is a 422 `extra_forbidden` `{"detail":[...]}`; `temperature`
 *   over 1.5 and `top_p` of 0 are 422s in the wrapped `{"object":"error","message":{"detail":[...]}}`
 *   form; tool-call ids that are not `[a-zA-Z0-9]{9}` are a 400 `{"object":"error",...}`.
 * - answers: `chat.completion` bodies with usage (incl. `prompt_tokens_details.cached_tokens`);
 *   streams of `chat.completion.chunk`s whose LAST chunk carries `finish_reason` and `usage` (no
 *   `stream_options`), then `data: [DONE]`; tool calls arrive whole in one delta, several calls all
 *   numbered `index: 0` as Mistral does. An SSE comment keep-alive opens each stream.
 * - `GET /v1/models` (not paged): chat and non-chat cards with `capabilities`, `name`, `deprecation`.
 * - `POST /v1/embeddings`: `{model, input: string | string[], output_dimension?, output_dtype?}`
 *   strictly (any other field, `encoding_format` included, is a 422 `extra_forbidden`), answered
 *   OpenAI-shaped with the deterministic vectors of `sim-embeddings.ts` and `usage`
 *   (`completion_tokens: 0`); `sim-404` is a 404 `invalid_model`.
 *
 * The API key must be `validKey` (else 401 `{"message":"Unauthorized"}`). It misbehaves on request,
 * chosen by the model:
 * - `sim-429`: 429 `rate_limited` with `ratelimitbysize-*` headers (reset 7 s)
 * - `sim-quota`: 429 with `x-ratelimitbysize-remaining-month: 0` (monthly budget spent)
 * - `sim-500`: 500; `sim-overloaded`: 503 with `retry-after: 3`
 * - `sim-404`: 404 `invalid_model`; `sim-invalid-model`: 400 `invalid_model` code 1500 (what Mistral sends)
 * - `sim-reset`: streams 2 chunks then resets the socket (non-stream: resets at once)
 * - `sim-malformed`: a body / stream event that is not JSON
 * - `sim-mid-error`: streams 2 chunks then an in-band `{"object":"error",...}` event
 * - `sim-finish-error`: content then `finish_reason: "error"`
 * - `sim-truncated`: streams 2 chunks then closes without finish_reason or `[DONE]`
 * - `sim-tool`: a `get_weather` tool call, or, once the last message is a tool result, the final answer
 * - `sim-tools-2`: two tool calls in one delta, both `index: 0`
 * - `sim-length`: `finish_reason: "model_length"`; `sim-thinking`: content as thinking + text chunks
 * Set `failModels` to make `GET /v1/models` answer 500.
 */
import { simEmbedding, simEmbeddingTokens, SIM_EMBEDDING_DIMENSIONS } from './sim-embeddings.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, sleep, type RecordedRequest, closeServer } from './sim-http.ts';

export type { RecordedRequest } from './sim-http.ts';

export interface MistralSimulator {
  readonly origin: string;
  /** `origin + '/v1'`: what MISTRAL_BASE_URL should be. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** When true, `GET /v1/models` answers 500. */
  failModels: boolean;
  close(): Promise<void>;
}

export const MISTRAL_SIM_KEY = 'sk-mistral-sim-secret';
export const MISTRAL_SIM_REPLY = 'Bonjour from the Mistral simulator.';
export const MISTRAL_SIM_USAGE = { prompt_tokens: 21, total_tokens: 30, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 5 } };
export const MISTRAL_SIM_TOOL_ID = 'D681PevKs';
export const MISTRAL_SIM_FINAL = 'It is sunny in Paris.';
const WORDS = MISTRAL_SIM_REPLY.split(/(?= )/);
const CREATED = 1_750_000_000;

const MODELS = [
  { id: 'mistral-small-latest', name: 'Mistral Small', capabilities: { completion_chat: true, function_calling: true, vision: true }, deprecation: null },
  { id: 'mistral-large-latest', name: 'Mistral Large', capabilities: { completion_chat: true, function_calling: true, vision: false }, deprecation: null },
  { id: 'open-mistral-7b', name: '', capabilities: { completion_chat: true }, deprecation: '2025-03-30T12:00:00Z' },
  { id: 'mistral-embed', name: 'Mistral Embed', capabilities: { completion_chat: false, function_calling: false } },
  { id: 'mistral-ocr-latest', capabilities: { completion_chat: false, ocr: true } },
];

const TOP_LEVEL = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'metadata', 'response_format',
  'tools', 'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'reasoning_effort',
  'prompt_mode', 'guardrails', 'prompt_cache_key', 'service_tier', 'safe_prompt',
]);
const MESSAGE_FIELDS: Record<string, Set<string>> = {
  system: new Set(['role', 'content']),
  user: new Set(['role', 'content']),
  assistant: new Set(['role', 'content', 'tool_calls', 'prefix']),
  tool: new Set(['role', 'content', 'tool_call_id', 'name']),
};
const TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;

type Json = Record<string, unknown>;
type Detail = { type: string; loc: Array<string | number>; msg: string; input: unknown };

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'mistral-correlation-id': 'corr-sim', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const mistralError = (message: unknown, type: string, code: string | null = null) => ({ object: 'error', message, type, param: null, code });
const sse = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

/** Mistral's strict validation: the first problem as [status, body], or null when the body is valid. */
function validate(body: Json): [number, unknown] | null {
  const extra: Detail[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (!TOP_LEVEL.has(key)) extra.push({ type: 'extra_forbidden', loc: ['body', key], msg: 'Extra inputs are not permitted', input: value });
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  messages.forEach((message, i) => {
    const allowed = MESSAGE_FIELDS[String(message.role)];
    if (!allowed) extra.push({ type: 'literal_error', loc: ['body', 'messages', i, 'role'], msg: 'Input should be system, user, assistant or tool', input: message.role });
    else for (const [key, value] of Object.entries(message)) {
      if (!allowed.has(key)) extra.push({ type: 'extra_forbidden', loc: ['body', 'messages', i, key], msg: 'Extra inputs are not permitted', input: value });
    }
  });
  if (extra.length > 0) return [422, { detail: extra }];
  if (typeof body.temperature === 'number' && body.temperature > 1.5) {
    return [422, mistralError({ detail: [{ type: 'less_than_equal', loc: ['body', 'temperature'], msg: 'Input should be less than or equal to 1.5', input: body.temperature }] }, 'invalid_request_error')];
  }
  if (typeof body.top_p === 'number' && body.top_p <= 0) {
    return [422, mistralError(JSON.stringify({ detail: [{ type: 'greater_than', loc: ['body', 'top_p'], msg: 'Input should be greater than 0', input: body.top_p }] }), 'invalid_request_error')];
  }
  const choice = body.tool_choice;
  if (choice !== undefined && !['auto', 'none', 'any', 'required'].includes(choice as string) && (choice as Json)?.type !== 'function') {
    return [422, { detail: [{ type: 'union_tag_invalid', loc: ['body', 'tool_choice'], msg: 'Input should be auto, none, any or required', input: choice }] }];
  }
  const format = (body.response_format as Json | undefined)?.type;
  if (format !== undefined && !['text', 'json_object', 'json_schema'].includes(format as string)) {
    return [422, { detail: [{ type: 'enum', loc: ['body', 'response_format', 'type'], msg: 'Input should be text, json_object or json_schema', input: format }] }];
  }
  for (const message of messages) {
    const ids = [message.tool_call_id, ...((message.tool_calls as Json[] | undefined) ?? []).map((c) => c.id)].filter((id) => id !== undefined);
    const bad = ids.find((id) => !TOOL_CALL_ID.test(String(id)));
    if (bad !== undefined) return [400, mistralError(`Tool call id was ${String(bad)} but must be a-z, A-Z, 0-9, with a length of 9.`, 'invalid_request_message_tool_call_id', '3280')];
  }
  return null;
}

function chunk(model: string, delta: Json, finishReason: string | null = null, usage?: unknown): Json {
  const out: Json = { id: 'cmpl-sim-stream', object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  if (usage) out.usage = usage;
  return out;
}

const weatherCall = (id: string, city: string) => ({ id, function: { name: 'get_weather', arguments: JSON.stringify({ city }) }, index: 0 });

/** What the model answers: content, tool calls, finish reason. */
function answer(model: string, body: Json): { content: unknown; toolCalls: Json[]; finish: string } {
  const messages = body.messages as Json[];
  const last = messages[messages.length - 1];
  if (model === 'sim-tool' && last?.role !== 'tool') return { content: '', toolCalls: [weatherCall(MISTRAL_SIM_TOOL_ID, 'Paris')], finish: 'tool_calls' };
  if (model === 'sim-tool') return { content: MISTRAL_SIM_FINAL, toolCalls: [], finish: 'stop' };
  if (model === 'sim-tools-2') return { content: '', toolCalls: [weatherCall('aaaaaaaa1', 'Paris'), weatherCall('bbbbbbbb2', 'Lyon')], finish: 'tool_calls' };
  if (model === 'sim-length') return { content: MISTRAL_SIM_REPLY, toolCalls: [], finish: 'model_length' };
  if (model === 'sim-finish-error') return { content: MISTRAL_SIM_REPLY, toolCalls: [], finish: 'error' };
  if (model === 'sim-thinking') {
    return { content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Let me think.' }] }, { type: 'text', text: MISTRAL_SIM_REPLY }], toolCalls: [], finish: 'stop' };
  }
  return { content: MISTRAL_SIM_REPLY, toolCalls: [], finish: 'stop' };
}

function completion(model: string, body: Json): Json {
  const { content, toolCalls, finish } = answer(model, body);
  const message: Json = { role: 'assistant', content, tool_calls: toolCalls.length ? toolCalls : null, prefix: false };
  return { id: 'cmpl-sim-1', object: 'chat.completion', created: CREATED, model, choices: [{ index: 0, message, finish_reason: finish }], usage: MISTRAL_SIM_USAGE };
}

function streamEvents(model: string, body: Json): string[] {
  const { content, toolCalls, finish } = answer(model, body);
  const events = [': keep-alive\n\n', sse(chunk(model, { role: 'assistant', content: '' }))];
  if (toolCalls.length) events.push(sse(chunk(model, { content: '', tool_calls: toolCalls })));
  else for (const word of typeof content === 'string' ? content.split(/(?= )/) : WORDS) events.push(sse(chunk(model, { content: word })));
  events.push(sse(chunk(model, { content: '' }, finish, MISTRAL_SIM_USAGE)));
  events.push('data: [DONE]\n\n');
  return events;
}

async function chat(req: IncomingMessage, res: ServerResponse, body: Json) {
  const invalid = validate(body);
  if (invalid) return send(res, invalid[0], invalid[1]);
  const model = String(body.model);
  const stream = body.stream === true;
  switch (model) {
    case 'sim-429':
      return send(res, 429, mistralError('Requests rate limit exceeded', 'rate_limited', '1300'), {
        'ratelimitbysize-limit': '500000', 'ratelimitbysize-remaining': '0', 'ratelimitbysize-reset': '7', 'ratelimitbysize-query-cost': '32000',
      });
    case 'sim-quota':
      return send(res, 429, mistralError('Monthly token limit exceeded', 'rate_limited', '1300'), { 'x-ratelimitbysize-limit-month': '1000000', 'x-ratelimitbysize-remaining-month': '0' });
    case 'sim-500':
      return send(res, 500, mistralError('Internal server error', 'internal_server_error', '3000'));
    case 'sim-overloaded':
      return send(res, 503, mistralError('Service unavailable', 'service_unavailable', '3505'), { 'retry-after': '3' });
    case 'sim-404':
      return send(res, 404, mistralError(`Invalid model: ${model}`, 'invalid_model', '1500'));
    case 'sim-invalid-model':
      return send(res, 400, mistralError(`Invalid model: ${model}`, 'invalid_model', '1500'));
    case 'sim-malformed':
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      return res.end(stream ? 'data: {not json\n\n' : '{"id": "cmpl-sim", "choices": [');
    case 'sim-reset':
      if (!stream) return req.socket.destroy();
  }
  if (!stream) return send(res, 200, completion(model, body));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mistral-correlation-id': 'corr-sim' });
  const events = streamEvents(model, body);
  switch (model) {
    case 'sim-reset':
      res.write(events.slice(0, 3).join(''));
      await sleep(20);
      return req.socket.destroy();
    case 'sim-mid-error':
      res.write(events.slice(0, 3).join(''));
      return res.end(sse(mistralError('Internal error while generating', 'internal_server_error', '3000')));
    case 'sim-truncated':
      return res.end(events.slice(0, 3).join(''));
  }
  // One write per event, as a real upstream flushes them.
  for (const event of events.slice(0, -1)) res.write(event);
  res.end(events[events.length - 1]);
}

const EMBEDDING_FIELDS = new Set(['model', 'input', 'output_dimension', 'output_dtype', 'metadata']);

/** `POST /v1/embeddings`, with Mistral's strict schema. */
function embeddings(res: ServerResponse, body: Json) {
  const extra = Object.entries(body).filter(([key]) => !EMBEDDING_FIELDS.has(key));
  if (extra.length > 0) {
    return send(res, 422, { detail: extra.map(([key, value]) => ({ type: 'extra_forbidden', loc: ['body', key], msg: 'Extra inputs are not permitted', input: value })) });
  }
  const model = String(body.model);
  if (model === 'sim-404') return send(res, 404, mistralError(`Invalid model: ${model}`, 'invalid_model', '1500'));
  const inputs = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
  if (!Array.isArray(inputs) || !inputs.every((input) => typeof input === 'string')) {
    return send(res, 422, { detail: [{ type: 'string_type', loc: ['body', 'input'], msg: 'Input should be a valid string', input: body.input }] });
  }
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : SIM_EMBEDDING_DIMENSIONS;
  const tokens = inputs.reduce((sum, input) => sum + simEmbeddingTokens(input), 0);
  send(res, 200, {
    id: 'embd-sim', object: 'list', model,
    data: inputs.map((input, index) => ({ object: 'embedding', embedding: simEmbedding(input, dimensions), index })),
    usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens },
  });
}

export async function startMistralSimulator(options: { validKey?: string } = {}): Promise<MistralSimulator> {
  const validKey = options.validKey ?? MISTRAL_SIM_KEY;
  const requests: RecordedRequest[] = [];
  const state = { failModels: false };
  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    requests.push(request);
    const { path, body } = request;
    if (req.headers.authorization !== `Bearer ${validKey}`) return send(res, 401, { message: 'Unauthorized', request_id: 'req-sim-401' });
    if (req.method === 'GET' && path === '/v1/models') {
      if (state.failModels) return send(res, 500, mistralError('Internal server error', 'internal_server_error', '3000'));
      const data = MODELS.map((m) => ({ object: 'model', created: CREATED, owned_by: 'mistralai', aliases: [], type: 'base', ...m }));
      return send(res, 200, { object: 'list', data });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions' && body) return chat(req, res, body);
    if (req.method === 'POST' && path === '/v1/embeddings' && body) return embeddings(res, body);
    send(res, 404, { detail: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    requests,
    get failModels() {
      return state.failModels;
    },
    set failModels(value: boolean) {
      state.failModels = value;
    },
    close: () => closeServer(server),
  };
}
