/**
 * An upstream that misbehaves the way a broken or hostile provider does, on the APIs a gateway
 * provider may call: OpenAI Chat Completions (`/v1/chat/completions`), OpenAI Responses
 * (`/v1/responses`), Anthropic Messages (`/v1/messages`) and Gemini, each in its own wire format
 * (docs/provider-wire-formats.md). By model:
 * - `huge-usage`: a normal answer ("Hello from a hostile upstream.") whose usage reports
 *   1e22 output tokens (stream and non-stream)
 * - `echo-400`, `echo-429`, `echo-500`: that error status in the API's own error shape, the message
 *   quoting the credential the request carried (`authorization` or `x-api-key`)
 * - `echo-stream`: streams one text delta, then an in-band error event quoting the credential
 * - `huge-model-name`: a normal answer whose `model` is `HUGE_MODEL_NAME` (100,007 characters)
 * - cut answers (issue 42): a stream sends its start and one text delta (`HOSTILE_REPLY`), no usage
 *   and no terminal event, then `cut-reset` destroys the socket, `cut-close` ends the body cleanly and
 *   `cut-tail` ends it in the middle of its next event, `cut-stall` sends nothing more (until the
 *   gateway's body timeout closes the connection); `cut-slow` streams a text delta every 10 ms
 *   (up to 500) until its client leaves. Non-streamed, every `cut-*` sends its head (with the whole
 *   body's `content-length`) and half the JSON body, then destroys the socket.
 * Every other model answers normally with sane usage. The Gemini API (`/v1beta/models/{model}:
 * generateContent`, `:streamGenerateContent?alt=sse`) is served too, with the same models.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, closeServer, sleep } from './sim-http.ts';
import { startTestGateway, type TestGateway } from './test-gateway.ts';

export const HOSTILE_REPLY = 'Hello from a hostile upstream.';
export const HUGE_TOKENS = 1e22;
export const HUGE_MODEL_NAME = 'served-' + 'm'.repeat(100_000);

export interface HostileUpstream {
  /** `origin + '/v1'`: the provider's base URL. */
  readonly baseUrl: string;
  /** `origin + '/v1beta'`: a `gemini` provider's base URL. */
  readonly geminiBaseUrl: string;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
type Api = 'chat' | 'responses' | 'messages' | 'gemini';

/** The credential as received, e.g. `Bearer sk-...` or `sk-ant-...`. */
function credentialOf(req: IncomingMessage): string {
  return String(req.headers['x-api-key'] ?? req.headers.authorization ?? '');
}

function errorBody(api: Api, status: number, message: string): Json {
  if (api === 'gemini') return { error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' } };
  if (api === 'messages') return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message } };
  return { error: { message, type: status === 429 ? 'requests' : 'invalid_request_error', code: status === 429 ? 'rate_limit_exceeded' : null, param: null } };
}

function usageOf(api: Api, outputTokens: number): Json {
  if (api === 'gemini') return { promptTokenCount: 12, candidatesTokenCount: outputTokens, totalTokenCount: 12 + outputTokens };
  if (api === 'chat') return { prompt_tokens: 12, completion_tokens: outputTokens, total_tokens: 12 + outputTokens };
  if (api === 'responses') return { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 + outputTokens };
  return { input_tokens: 12, output_tokens: outputTokens, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
}

function completion(api: Api, model: string, outputTokens: number): Json {
  const usage = usageOf(api, outputTokens);
  if (api === 'chat') {
    return { id: 'chatcmpl-hostile', object: 'chat.completion', created: 1_700_000_000, model, choices: [{ index: 0, message: { role: 'assistant', content: HOSTILE_REPLY }, finish_reason: 'stop' }], usage };
  }
  if (api === 'responses') return responseObject(model, 'completed', usage);
  if (api === 'gemini') return geminiChunk(model, HOSTILE_REPLY, 'STOP', usage);
  return { id: 'msg_hostile', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: HOSTILE_REPLY }], stop_reason: 'end_turn', stop_sequence: null, usage };
}

function responseObject(model: string, status: string, usage: Json | null): Json {
  const output = status === 'completed' ? [{ type: 'message', id: 'msg_h', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: HOSTILE_REPLY, annotations: [] }] }] : [];
  return { id: 'resp_hostile', object: 'response', created_at: 1_763_900_000, status, model, output, error: null, usage };
}

function geminiChunk(model: string, text: string, finishReason: string | null, usage: Json | null): Json {
  const candidate = { content: { parts: [{ text }], role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) };
  return { candidates: [candidate], ...(usage ? { usageMetadata: usage } : {}), modelVersion: model };
}

const sse = (event: string | null, data: unknown) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** How many of a stream's frames a cut answer sends: its start and its one text delta, before any usage or end. */
const CUT_FRAMES: Readonly<Record<Api, number>> = { chat: 2, responses: 2, messages: 3, gemini: 1 };

/** The SSE frames of one streamed answer: one delta, then the end with usage or an error echoing `secret`. */
function streamFrames(api: Api, model: string, outputTokens: number, errorEcho: string | null): string[] {
  if (api === 'gemini') {
    const first = sse(null, geminiChunk(model, HOSTILE_REPLY, null, null));
    if (errorEcho) return [first, sse(null, errorBody(api, 500, errorEcho))];
    return [first, sse(null, geminiChunk(model, '', 'STOP', usageOf(api, outputTokens)))];
  }
  if (api === 'chat') {
    const chunk = (delta: Json, finish: string | null, usage: Json | null = null) =>
      sse(null, { id: 'chatcmpl-hostile', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: finish === 'usage' ? [] : [{ index: 0, delta, finish_reason: finish }], usage });
    const first = [chunk({ role: 'assistant', content: '' }, null), chunk({ content: HOSTILE_REPLY }, null)];
    if (errorEcho) return [...first, sse(null, { error: { message: errorEcho, type: 'server_error', code: null, param: null } })];
    return [...first, chunk({}, 'stop'), chunk({}, 'usage', usageOf(api, outputTokens)), 'data: [DONE]\n\n'];
  }
  if (api === 'responses') {
    const events: Json[] = [
      { type: 'response.created', response: responseObject(model, 'in_progress', null) },
      { type: 'response.output_text.delta', item_id: 'msg_h', output_index: 0, content_index: 0, delta: HOSTILE_REPLY, logprobs: [] },
    ];
    if (errorEcho) events.push({ type: 'error', code: 'server_error', message: errorEcho, param: null });
    else events.push({ type: 'response.completed', response: responseObject(model, 'completed', usageOf(api, outputTokens)) });
    return events.map((e, i) => sse(String(e.type), { ...e, sequence_number: i }));
  }
  const event = (name: string, data: Json) => sse(name, { type: name, ...data });
  const frames = [
    event('message_start', { message: { id: 'msg_hostile', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: HOSTILE_REPLY } }),
  ];
  if (errorEcho) return [...frames, event('error', { error: { type: 'overloaded_error', message: errorEcho } })];
  return [
    ...frames,
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } }),
    event('message_stop', {}),
  ];
}

/** A chat stream that sends a text delta every 10 ms (up to 500) until its client leaves. */
async function slowStream(res: ServerResponse, model: string): Promise<void> {
  const chunk = (delta: Json) => sse(null, { id: 'chatcmpl-hostile', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: null }] });
  res.write(chunk({ role: 'assistant', content: '' }));
  for (let i = 0; i < 500 && !res.destroyed; i++) {
    res.write(chunk({ content: `word${i} ` }));
    await sleep(10);
  }
  res.end();
}

/** A `cut-*` answer (see the module doc). */
async function cutAnswer(res: ServerResponse, req: IncomingMessage, api: Api, model: string, stream: boolean): Promise<void> {
  if (!stream) {
    const text = JSON.stringify(completion(api, model, 7));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.write(text.slice(0, text.length >> 1));
    await sleep(20);
    req.socket.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (model === 'cut-slow' && api === 'chat') return slowStream(res, model);
  const frames = streamFrames(api, model, 7, null);
  const sent = CUT_FRAMES[api];
  res.write(frames.slice(0, sent).join(''));
  if (model === 'cut-close') return void res.end();
  // Silent until the gateway gives up (its upstream.bodyTimeoutMs) and closes the connection.
  if (model === 'cut-stall') return;
  if (model === 'cut-tail') return void res.end(frames[sent]!.slice(0, frames[sent]!.length >> 1));
  await sleep(20);
  req.socket.destroy();
}

function answer(res: ServerResponse, req: IncomingMessage, api: Api, body: Json): void {
  const model = body.model === 'huge-model-name' ? HUGE_MODEL_NAME : String(body.model);
  if (model.startsWith('cut-')) {
    void cutAnswer(res, req, api, model, body.stream === true);
    return;
  }
  const echo = `Invalid request with key ${credentialOf(req)} (echoed by a careless upstream).`;
  const errorStatus = /^echo-(\d{3})$/.exec(model)?.[1];
  if (errorStatus) {
    res.writeHead(Number(errorStatus), { 'content-type': 'application/json' });
    res.end(JSON.stringify(errorBody(api, Number(errorStatus), echo)));
    return;
  }
  const outputTokens = model === 'huge-usage' ? HUGE_TOKENS : 7;
  if (body.stream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const frame of streamFrames(api, model, outputTokens, model === 'echo-stream' ? echo : null)) res.write(frame);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion(api, model, outputTokens)));
}

const API_BY_PATH: Readonly<Record<string, Api>> = { '/v1/chat/completions': 'chat', '/v1/responses': 'responses', '/v1/messages': 'messages' };

/** Gemini's path names the model and whether it streams: `/v1beta/models/{model}:streamGenerateContent`. */
const GEMINI_PATH = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)$/;

export async function startHostileUpstream(): Promise<HostileUpstream> {
  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    const gemini = GEMINI_PATH.exec(request.path);
    if (gemini && request.body) request.body = { ...request.body, model: decodeURIComponent(gemini[1]!), stream: gemini[2] === 'streamGenerateContent' };
    const api = gemini ? 'gemini' : API_BY_PATH[request.path];
    if (req.method !== 'POST' || !api || !request.body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Unknown path ${request.path}`, type: 'invalid_request_error', code: null, param: null } }));
      return;
    }
    answer(res, req, api, request.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl: `${origin}/v1`, geminiBaseUrl: `${origin}/v1beta`, close: () => closeServer(server) };
}

/** A test gateway whose `openai` and `anthropic` providers are both one hostile upstream. `close` stops both. */
export interface HostileGateway {
  readonly upstream: HostileUpstream;
  readonly tg: TestGateway;
  close(): Promise<void>;
}

/** Starts the hostile upstream and a test gateway in front of it (`dataDir`: e.g. one with prices). */
export async function startHostileGateway(options: { openaiKey: string; anthropicKey: string; dataDir?: string }): Promise<HostileGateway> {
  const upstream = await startHostileUpstream();
  const tg = await startTestGateway({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    providers: {
      openai: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: options.openaiKey },
      anthropic: { type: 'anthropic', baseUrl: upstream.baseUrl, apiKey: options.anthropicKey },
    },
  });
  return {
    upstream,
    tg,
    async close() {
      await tg.close();
      await upstream.close();
    },
  };
}
