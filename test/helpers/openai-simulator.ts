/**
 * An OpenAI Chat Completions upstream on 127.0.0.1, speaking the real wire format
 * (docs/provider-wire-formats.md §1): `chat.completion` bodies, SSE
 * `chat.completion.chunk`s with `usage: null`, the `choices: []` usage chunk when
 * `stream_options.include_usage` is set, `data: [DONE]`, and OpenAI error bodies.
 *
 * It misbehaves on request, chosen by the request's model:
 * - `sim-429`: 429 rate limit with `retry-after` / `x-ratelimit-*` headers
 * - `sim-quota`: 429 `insufficient_quota`
 * - `sim-500`: 500 server error; `sim-404`: 404 `model_not_found`; `sim-401`: 401 invalid key (echoing it, as OpenAI does)
 * - `sim-slow`: waits `slowMs` before answering
 * - `sim-flaky-<n>`: its first n requests (counted per model name) answer 503 with `retry-after-ms: 40`,
 *   the next ones answer normally
 * - `sim-reset`: streams 3 chunks then resets the connection (non-stream: resets at once)
 * - `sim-malformed`: a body / event that is not JSON
 * - `sim-mid-error`: streams 2 chunks then an in-band `{"error":...}` event
 * - `sim-drip`: streams 400 chunks, `dripMs` apart (for client-abort tests)
 * - `sim-truncated`: streams 2 chunks then ends without finish_reason or `[DONE]`
 * - `sim-no-usage`: answers normally but reports no usage (not even the include_usage chunk)
 * - `sim-flood`: streams 4,000 chunks of ~1 KiB as fast as the socket takes them, counting how often
 *   the socket pushed back (`backpressureWaits`)
 * - `sim-echo`: answers the last user message's text (its string content, or its text parts joined)
 *   instead of `SIM_REPLY`; streamed as two content chunks split at the text's middle (`simEchoPieces`),
 *   so a test chooses the answer and where a stream cuts it
 * Every other model answers normally. Bench and tests share this file.
 *
 * Faults can also be set while it runs (`fault`): every chat request carrying a given key, or asking
 * for a given model, answers a given status (429 with the headers given, 401 as for `sim-401`, 403 as
 * OpenAI's "Project … does not have access to model …" (code `model_not_found`), 200 normally, any
 * other as a server error), after `delayMs`, until the fault is cleared.
 *
 * `POST /v1/embeddings` answers OpenAI's `CreateEmbeddingResponse` with the deterministic vectors of
 * `sim-embeddings.ts` (base64 little-endian float32s when `encoding_format` is `base64`, `dimensions`
 * honoured) and `usage.prompt_tokens`; `sim-404` and `sim-500` fail as for chat.
 *
 * Started with `agent` it plays a scripted coding agent whatever the model (sim-agent.ts): offered a
 * function tool it knows (`Write`, `Bash`, Codex's `exec_command`, `shell`) it answers `tool_calls`
 * (finish `tool_calls`; streamed as one call whose `arguments` arrive in two pieces), and once the
 * last message is a `tool` message it answers `agent.answer`; asked for JSON (`response_format`
 * `json_schema`), it answers `agentJson` of the schema. Other requests get the normal reply.
 *
 * Like OpenAI it refuses `top_k` ("Unrecognized request argument supplied") and a `json_schema` whose
 * root type is not `"object"` (Gemini's upper-case `"OBJECT"` included).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readSimRequest, sleep, type RecordedRequest, closeServer } from './sim-http.ts';
import { agentJson, agentToolCall, type SimAgent } from './sim-agent.ts';
import { simEmbedding, simEmbeddingTokens, simInputs, SIM_EMBEDDING_DIMENSIONS } from './sim-embeddings.ts';

export interface SimulatorOptions {
  /** Content chunks in a normal stream (the stream has 1 role chunk + N content + 1 finish [+ usage]). */
  streamContentChunks?: number;
  slowMs?: number;
  dripMs?: number;
  models?: string[];
  /** Plays a scripted coding agent, whatever the model (sim-agent.ts). */
  agent?: SimAgent;
  /**
   * Keeps every request in `requests` (default true). The benchmark's simulator turns it off: it serves
   * millions of requests in a run, and their records (~1.2 KB each) grew its heap past 1 GB, whose
   * full collections ran on the core the proxies under test share.
   */
  record?: boolean;
}

export type { RecordedRequest } from './sim-http.ts';

export interface OpenAISimulator {
  readonly origin: string;
  /** `origin + '/v1'`: what OPENAI_BASE_URL should be. */
  readonly baseUrl: string;
  /** Every request received, oldest first (none with `record: false`). */
  readonly requests: RecordedRequest[];
  /** Count of chat responses whose client went away before the response ended. */
  abortedResponses(): number;
  /** Resolves when the next chat response is cut by its client (socket closed before the end). */
  nextAbort(): Promise<void>;
  /** How often `sim-flood` had to wait for `drain` (the reader pushed back). */
  backpressureWaits(): number;
  /** Open TCP connections right now. */
  openSockets(): number;
  /** Sets the usage every later answer reports (default `SIM_USAGE`). */
  setUsage(usage: SimUsage): void;
  /**
   * From now on, chat requests with `Authorization: Bearer <key>` (or for model `model`) answer
   * `status` with `headers`; `status` null clears the fault.
   */
  fault(match: { key: string } | { model: string }, status: number | null, headers?: Record<string, string>, delayMs?: number): void;
  close(): Promise<void>;
}

export interface SimUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [field: string]: unknown };
  [field: string]: unknown;
}

export const SIM_USAGE: SimUsage = {
  prompt_tokens: 19,
  completion_tokens: 24,
  total_tokens: 43,
  prompt_tokens_details: { cached_tokens: 3, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

export const SIM_REPLY = 'Hello from the OpenAI simulator.';
const SIM_WORDS = SIM_REPLY.split(/(?= )/);

/** The content piece of stream chunk `i`: the reply's words, round-robin. */
export function simStreamPiece(i: number): string {
  return SIM_WORDS[i % SIM_WORDS.length]!;
}

/** The text a normal stream with `contentChunks` pieces concatenates to. */
export function simStreamText(contentChunks = 8): string {
  return Array.from({ length: contentChunks }, (_, i) => simStreamPiece(i)).join('');
}

/** The two content pieces `sim-echo` streams `text` as: cut at its middle (never inside a surrogate pair). */
export function simEchoPieces(text: string): [string, string] {
  let middle = Math.floor(text.length / 2);
  if (middle > 0 && /[\uD800-\uDBFF]/.test(text[middle - 1]!)) middle++;
  return [text.slice(0, middle), text.slice(middle)];
}

/** The text of the last user message of a chat request, for `sim-echo`. */
function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages as Array<{ role?: unknown; content?: unknown }> : [];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  if (typeof last?.content === 'string') return last.content;
  if (!Array.isArray(last?.content)) return '';
  return (last.content as Array<{ type?: unknown; text?: unknown }>).filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text).join('');
}

function chunk(id: string, model: string, delta: Record<string, unknown>, finishReason: string | null, usage?: unknown) {
  return {
    id, object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_sim',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: usage ?? null,
  };
}

const sse = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;
/** Resolves on the response's next `drain` or its `close`, leaving no listener behind. */
export const drainOrClose = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

let agentTurns = 0;

/** The scripted agent's answer (sim-agent.ts) as a chat.completion and its chunks, or null when no tool fits. */
function agentAnswer(agent: SimAgent, body: Record<string, unknown>, usage: SimUsage, includeUsage: boolean): { completion: string; events: string[] } | null {
  const messages = (body.messages ?? []) as Array<{ role: string }>;
  const names = ((body.tools ?? []) as Array<{ function?: { name?: string } }>).map((t) => String(t.function?.name));
  const schema = (body.response_format as { json_schema?: { schema?: Record<string, unknown> } } | undefined)?.json_schema?.schema;
  const call = schema ? null : agentToolCall(agent, names, { system: messages.filter((m) => m.role === 'system'), messages });
  if (!schema && !call) return null;
  const model = String(body.model);
  const id = `chatcmpl-sim-agent-${++agentTurns}`;
  const done = !call || messages.at(-1)?.role === 'tool';
  const text = schema ? JSON.stringify(agentJson(schema)) : agent.answer;
  const args = JSON.stringify(call?.input ?? {});
  const toolCall = { id: `call_sim_agent_${agentTurns}`, type: 'function', function: { name: call?.name, arguments: args } };
  const message = done ? { role: 'assistant', content: text, refusal: null } : { role: 'assistant', content: null, refusal: null, tool_calls: [toolCall] };
  const finish = done ? 'stop' : 'tool_calls';
  const completion = JSON.stringify({
    id, object: 'chat.completion', created: 1_700_000_000, model, system_fingerprint: 'fp_sim',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage, service_tier: 'default',
  });
  const deltas = done
    ? [{ content: text }]
    : [
        { tool_calls: [{ index: 0, ...toolCall, function: { name: call.name, arguments: '' } }] },
        { tool_calls: [{ index: 0, function: { arguments: args.slice(0, 10) } }] },
        { tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] },
      ];
  const events = [sse(chunk(id, model, { role: 'assistant', content: done ? '' : null, refusal: null }, null))];
  for (const delta of deltas) events.push(sse(chunk(id, model, delta, null)));
  events.push(sse(chunk(id, model, {}, finish)));
  if (includeUsage) events.push(sse({ ...chunk(id, model, {}, null, usage), choices: [] }));
  events.push('data: [DONE]\n\n');
  return { completion, events };
}

/** What OpenAI refuses in a chat request that translated requests have carried: its message and param. */
function refusedArgument(body: Record<string, unknown>): { message: string; param: string } | null {
  if (body.top_k !== undefined) return { message: 'Unrecognized request argument supplied: top_k', param: 'top_k' };
  const format = body.response_format as { json_schema?: { name?: string; schema?: { type?: unknown } } } | undefined;
  const type = format?.json_schema?.schema?.type;
  if (format?.json_schema && type !== 'object') {
    return { message: `Invalid schema for response_format '${String(format.json_schema.name)}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(type)}"'.`, param: 'response_format' };
  }
  return null;
}

function sendError(res: ServerResponse, status: number, error: Record<string, unknown>, headers: Record<string, string> = {}) {
  const body = JSON.stringify({ error: { param: null, code: null, ...error } });
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_sim_error', ...headers });
  res.end(body);
}

/** The most dimensions the simulator embeds into (text-embedding-3-large's). */
const MAX_SIM_DIMENSIONS = 3072;

/** `POST /v1/embeddings`: the deterministic vectors of every input, OpenAI's shape and usage. */
function embeddings(res: ServerResponse, body: Record<string, unknown>) {
  const model = String(body.model ?? '');
  if (model === 'sim-404') return sendError(res, 404, { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', code: 'model_not_found' });
  if (model === 'sim-500') return sendError(res, 500, { message: 'The server had an error while processing your request.', type: 'server_error' });
  const inputs = simInputs(body.input);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : SIM_EMBEDDING_DIMENSIONS;
  // As OpenAI: text-embedding-3 models take 1 to 3072 dimensions (a fuzzer's huge value must not crash the simulator).
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_SIM_DIMENSIONS) {
    return sendError(res, 400, { message: `Invalid value for 'dimensions' = ${String(body.dimensions)}. Must be between 1 and ${MAX_SIM_DIMENSIONS}.`, type: 'invalid_request_error', param: 'dimensions' });
  }
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const vector = simEmbedding(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector };
  });
  const tokens = inputs.reduce((sum, input) => sum + simEmbeddingTokens(input), 0);
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_sim' });
  res.end(JSON.stringify({ object: 'list', data, model: `${model}-sim`, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
}

export async function startOpenAISimulator(options: SimulatorOptions = {}): Promise<OpenAISimulator> {
  const contentChunks = options.streamContentChunks ?? 8;
  const slowMs = options.slowMs ?? 2_000;
  const dripMs = options.dripMs ?? 20;
  const models = options.models ?? ['gpt-4o-mini', 'gpt-4o', 'sim-429', 'sim-500'];
  const requests: RecordedRequest[] = [];
  const record = options.record ?? true;
  const sockets = new Set<Socket>();
  let aborted = 0;
  let backpressureWaits = 0;
  const abortWaiters: Array<() => void> = [];
  const piece = simStreamPiece;
  let usage: SimUsage = SIM_USAGE;
  const usageOf = (model: string) => (model === 'sim-no-usage' ? null : usage);
  const flakySeen = new Map<string, number>();
  const faults = new Map<string, { status: number; headers: Record<string, string>; delayMs: number }>();
  const faultOf = (req: IncomingMessage, model: string) =>
    faults.get(`key:${String(req.headers.authorization).slice(7)}`) ?? faults.get(`model:${model}`);

  const completionBody = (model: string, reply = SIM_REPLY) =>
    JSON.stringify({
      id: 'chatcmpl-sim', object: 'chat.completion', created: 1_700_000_000, model, system_fingerprint: 'fp_sim',
      choices: [{ index: 0, message: { role: 'assistant', content: reply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      ...(usageOf(model) ? { usage: usageOf(model) } : {}), service_tier: 'default',
    });
  const streamEvents = (model: string, includeUsage: boolean, pieces?: readonly string[]): string[] => {
    const events = [sse(chunk('chatcmpl-sim', model, { role: 'assistant', content: '', refusal: null }, null))];
    if (pieces) for (const text of pieces) events.push(sse(chunk('chatcmpl-sim', model, { content: text }, null)));
    else for (let i = 0; i < contentChunks; i++) events.push(sse(chunk('chatcmpl-sim', model, { content: piece(i) }, null)));
    events.push(sse(chunk('chatcmpl-sim', model, {}, 'stop')));
    if (includeUsage && usageOf(model)) events.push(sse({ ...chunk('chatcmpl-sim', model, {}, null, usageOf(model)), choices: [] }));
    events.push('data: [DONE]\n\n');
    return events;
  };

  async function chat(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    const model = String(body.model ?? '');
    const stream = body.stream === true;
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    let finished = false;
    res.on('close', () => {
      if (finished || res.writableFinished) return;
      aborted++;
      abortWaiters.splice(0).forEach((w) => w());
    });
    const finish = (data?: string) => {
      finished = true;
      res.end(data);
    };
    const refused = refusedArgument(body);
    if (refused) return sendError(res, 400, { message: refused.message, type: 'invalid_request_error', param: refused.param });
    const scripted = options.agent && agentAnswer(options.agent, body, usage, includeUsage);
    if (scripted) {
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'x-request-id': 'req_sim' });
      if (!stream) return finish(scripted.completion);
      for (const event of scripted.events.slice(0, -1)) res.write(event);
      return finish(scripted.events.at(-1));
    }
    const fault = faultOf(req, model);
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault && fault.status !== 200) {
      if (fault.status === 429) return sendError(res, 429, { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' }, fault.headers);
      if (fault.status === 401) return sendError(res, 401, { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' }, fault.headers);
      if (fault.status === 403) return sendError(res, 403, { message: `Project \`proj_sim\` does not have access to model \`${model}\``, type: 'invalid_request_error', code: 'model_not_found' }, fault.headers);
      return sendError(res, fault.status, { message: 'The server had an error while processing your request.', type: 'server_error' }, fault.headers);
    }
    const flaky = /^sim-flaky-(\d+)$/.exec(model);
    if (flaky) {
      const seen = (flakySeen.get(model) ?? 0) + 1;
      flakySeen.set(model, seen);
      if (seen <= Number(flaky[1])) return sendError(res, 503, { message: 'The server is overloaded.', type: 'server_error' }, { 'retry-after-ms': '40' });
    }
    switch (model) {
      case 'sim-429':
        return sendError(res, 429, { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' }, {
          'retry-after': '2', 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '2s',
        });
      case 'sim-quota':
        return sendError(res, 429, { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' });
      case 'sim-500':
        return sendError(res, 500, { message: 'The server had an error while processing your request.', type: 'server_error' });
      case 'sim-404':
        return sendError(res, 404, { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', code: 'model_not_found' });
      case 'sim-401':
        return sendError(res, 401, { message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7, 14)}****. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', code: 'invalid_api_key' });
      case 'sim-slow':
        // Unref'd: a long hold the client gave up on does not keep the test's process alive.
        await new Promise((resolve) => setTimeout(resolve, slowMs).unref());
        break;
      case 'sim-reset':
        if (!stream) return req.socket.destroy();
        break;
      case 'sim-malformed':
        res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
        return finish(stream ? 'data: {not json}\n\n' : '{"id": "chatcmpl-sim", "choices": [');
    }
    if (res.destroyed) return;
    const echo = model === 'sim-echo' ? lastUserText(body) : null;
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_sim' });
      return finish(completionBody(model, echo ?? SIM_REPLY));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': 'req_sim' });
    const events = streamEvents(model, includeUsage, echo === null ? undefined : simEchoPieces(echo));
    const tail = events.slice(1 + contentChunks).join(''); // finish chunk, usage chunk if asked, [DONE]
    switch (model) {
      case 'sim-reset':
        res.write(events.slice(0, 3).join(''));
        await sleep(20);
        return req.socket.destroy();
      case 'sim-mid-error':
        res.write(events.slice(0, 2).join(''));
        return finish(sse({ error: { message: 'The model overloaded mid-stream.', type: 'server_error', param: null, code: 'overloaded' } }));
      case 'sim-flood': {
        const filler = 'x'.repeat(1000);
        res.write(events[0]!);
        for (let i = 0; i < 4000 && !res.destroyed; i++) {
          if (!res.write(sse(chunk('chatcmpl-sim', model, { content: filler }, null)))) {
            backpressureWaits++;
            await drainOrClose(res);
          }
        }
        return finish(tail);
      }
      case 'sim-truncated':
        return finish(events.slice(0, 2).join(''));
      case 'sim-drip':
        res.write(events[0]!);
        for (let i = 0; i < 400 && !res.destroyed; i++) {
          if (!res.write(sse(chunk('chatcmpl-sim', model, { content: piece(i) }, null)))) await drainOrClose(res);
          await sleep(dripMs);
        }
        return finish(tail);
    }
    // One write per event, as a real upstream flushes them.
    for (const event of events.slice(0, -1)) res.write(event);
    finish(events[events.length - 1]);
  }

  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    if (record) requests.push(request);
    const { path, body } = request;
    if (!req.headers.authorization?.startsWith('Bearer ')) {
      return sendError(res, 401, { message: 'You didn\'t provide an API key.', type: 'invalid_request_error' });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_715_367_049, owned_by: 'system' })) }));
    }
    if (req.method === 'POST' && path === '/v1/chat/completions' && body) return chat(req, res, body);
    if (req.method === 'POST' && path === '/v1/embeddings' && body) return embeddings(res, body);
    sendError(res, 404, { message: `Unknown path ${path}`, type: 'invalid_request_error' });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    requests,
    abortedResponses: () => aborted,
    backpressureWaits: () => backpressureWaits,
    nextAbort: () => new Promise((resolve) => abortWaiters.push(resolve)),
    openSockets: () => sockets.size,
    setUsage(next) {
      usage = next;
    },
    fault(match, status, headers = {}, delayMs = 0) {
      const id = 'key' in match ? `key:${match.key}` : `model:${match.model}`;
      if (status === null) faults.delete(id);
      else faults.set(id, { status, headers, delayMs });
    },
    close: () => closeServer(server),
  };
}
