/**
 * An Ollama server on 127.0.0.1 speaking the native API (docs/provider-wire-formats.md §5;
 * https://docs.ollama.com/api/chat , https://docs.ollama.com/api/errors , https://docs.ollama.com/api/tags):
 * `POST /api/chat` streams NDJSON (`application/x-ndjson`) unless the body says `"stream": false`, the
 * last line has `"done": true` with `done_reason` and the counts; tool calls carry `arguments` as objects
 * and arrive whole in one line; errors are `{"error": "..."}`, mid-stream as an NDJSON line.
 *
 * It checks what Ollama itself rejects (400 with Ollama's messages): a missing model, an unknown role,
 * images that are not raw base64 (a `data:` prefix), tool-call `arguments` that are not objects, a
 * `format` that is neither "json" nor a schema object, a non-boolean `stream`. An unknown model answers
 * 404 `model "x" not found, try pulling it first`, as Ollama does for a model that was never pulled.
 *
 * It misbehaves on request, chosen by the model:
 * - `sim-tool`: answers with a `get_weather` call (no id, as most Ollama versions), or, once the last
 *   message is a tool result, with a final text; `sim-tool-ids`: two calls in the newer shape (`id`,
 *   `function.index`), each on its own stream line
 * - `sim-thinking`: `message.thinking` before the content; `sim-length`: `done_reason: "length"`
 * - `sim-cached`: no `prompt_eval_count` (Ollama omits it when the whole prompt came from its cache);
 *   `sim-nocounts`: neither count
 * - `sim-429` (with `retry-after: 7`, as Ollama's cloud or a proxy sends), `sim-402` (usage limit),
 *   `sim-401` (echoes the bearer token, as a careless proxy might), `sim-500`, `sim-busy` (503, queue full),
 *   `sim-404`, `sim-proxy404` (a plain-text "404 page not found"), `sim-notools` (400 when tools are sent)
 * - `sim-reset`: streams 2 lines then resets the socket (non-stream: resets at once)
 * - `sim-malformed`: a body / line that is not JSON; `sim-mid-error`: 2 lines then `{"error": ...}`;
 *   `sim-truncated`: 2 lines then the body ends without `done: true`
 * `GET /api/tags` lists `models` (unpaged, as Ollama); set `failTags` to make it answer 500.
 * `POST /api/embed` (`{model, input: string | string[], dimensions?, truncate?}`) answers
 * `{model, embeddings, total_duration, load_duration, prompt_eval_count}` with the deterministic
 * vectors of `sim-embeddings.ts`; an unknown model is Ollama's 404.
 */
import { simEmbedding, simEmbeddingTokens, SIM_EMBEDDING_DIMENSIONS } from './sim-embeddings.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';

export type { RecordedRequest } from './sim-http.ts';

export interface OllamaSimulator {
  /** `http://127.0.0.1:<port>`: what OLLAMA_BASE_URL should be. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Chat requests only. */
  chatRequests(): RecordedRequest[];
  /** When true, `GET /api/tags` answers 500. */
  failTags: boolean;
  close(): Promise<void>;
}

export const SIM_REPLY = 'Hello from the Ollama simulator.';
export const SIM_TOOL_REPLY = 'It is 18C in Paris.';
/** The counts on every final line (unless the model says otherwise). */
export const SIM_COUNTS = { prompt_eval_count: 26, eval_count: 12 };
export const SIM_CREATED_AT = '2026-01-05T10:00:00.123456789Z';
/** `SIM_CREATED_AT` in unix seconds. */
export const SIM_CREATED = Math.floor(Date.parse(SIM_CREATED_AT) / 1000);
export const SIM_MODIFIED_AT = '2025-11-02T08:30:15.5524373+01:00';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Line = Record<string, unknown>;

function line(model: string, message: Record<string, unknown>, done = false): Line {
  return { model, created_at: SIM_CREATED_AT, message: { role: 'assistant', content: '', ...message }, done };
}

function finalLine(model: string, message: Record<string, unknown>, doneReason = 'stop'): Line {
  const counts: Record<string, number> = { ...SIM_COUNTS };
  if (model === 'sim-cached' || model === 'sim-nocounts') delete counts.prompt_eval_count;
  if (model === 'sim-nocounts') delete counts.eval_count;
  return {
    ...line(model, message, true), done_reason: doneReason, total_duration: 5_043_500_667, load_duration: 5_025_959,
    prompt_eval_duration: 325_953_000, eval_duration: 4_709_213_000, ...counts,
  };
}

function sendError(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify({ error }));
}

/** What Ollama rejects before running the model, as its 400 message; null when the body is acceptable. */
function validate(body: Record<string, unknown>): string | null {
  if (typeof body.model !== 'string' || body.model === '') return 'model is required';
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return 'json: cannot unmarshal string into Go struct field ChatRequest.stream of type bool';
  if (!Array.isArray(body.messages)) return 'json: cannot unmarshal object into Go struct field ChatRequest.messages of type []api.Message';
  for (const message of body.messages as Array<Record<string, unknown>>) {
    if (!ROLES.has(String(message.role))) return `invalid role: ${String(message.role)}`;
    if (typeof message.content !== 'string') return 'json: cannot unmarshal array into Go struct field Message.messages.content of type string';
    for (const image of (message.images as unknown[] | undefined) ?? []) {
      if (typeof image !== 'string' || !BASE64.test(image)) return 'illegal base64 data at input byte 4';
    }
    for (const call of (message.tool_calls as Array<{ function?: { arguments?: unknown } }> | undefined) ?? []) {
      const args = call.function?.arguments;
      if (!args || typeof args !== 'object' || Array.isArray(args)) {
        return 'json: cannot unmarshal string into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments';
      }
    }
  }
  const format = body.format;
  if (format !== undefined && format !== 'json' && format !== '' && (typeof format !== 'object' || Array.isArray(format))) return `invalid format: "${String(format)}"`;
  return null;
}

/** The model's answer as NDJSON lines (the last one `done: true`); a non-stream answer is the last line with the whole message. */
function answerLines(body: Record<string, unknown>): Line[] {
  const model = String(body.model);
  const messages = body.messages as Array<Record<string, unknown>>;
  const tools = (body.tools as Array<{ function: { name: string } }> | undefined) ?? [];
  const afterTool = messages.at(-1)?.role === 'tool';
  if (model === 'sim-tool' && !afterTool) {
    const call = { function: { name: tools[0]?.function.name ?? 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } };
    return [line(model, {}), line(model, { tool_calls: [call] }), finalLine(model, {})];
  }
  if (model === 'sim-tool-ids' && !afterTool) {
    const call = (index: number, city: string) => ({ id: `call_sim${index}`, function: { index, name: 'get_weather', arguments: { city } } });
    return [line(model, { tool_calls: [call(0, 'Paris')] }), line(model, { tool_calls: [call(1, 'Oslo')] }), finalLine(model, {})];
  }
  const text = afterTool ? SIM_TOOL_REPLY : SIM_REPLY;
  const words = text.split(/(?= )/);
  const lines = [line(model, {})]; // Ollama often starts with an empty line (model loading, tool-call buffering)
  if (model === 'sim-thinking') lines.push(line(model, { thinking: 'The user greets me.' }));
  for (const word of words) lines.push(line(model, { content: word }));
  lines.push(finalLine(model, {}, model === 'sim-length' ? 'length' : 'stop'));
  return lines;
}

/** The non-streamed body: the final line carrying the whole message. */
function completeAnswer(lines: Line[]): Line {
  const final = { ...lines.at(-1)! };
  const content = lines.map((l) => (l.message as { content: string }).content).join('');
  const thinking = lines.map((l) => (l.message as { thinking?: string }).thinking ?? '').join('');
  const toolCalls = lines.flatMap((l) => (l.message as { tool_calls?: unknown[] }).tool_calls ?? []);
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (thinking) message.thinking = thinking;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  final.message = message;
  return final;
}

/** Answers the misbehaving models that fail before any body; true when it did. */
function failEarly(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, known: Set<string>): boolean {
  const model = String(body.model);
  const fail = (status: number, error: string, headers?: Record<string, string>) => (sendError(res, status, error, headers), true);
  switch (model) {
    case 'sim-429': return fail(429, 'too many concurrent requests, please retry later', { 'retry-after': '7' });
    case 'sim-402': return fail(402, 'you have reached your weekly usage limit, upgrade for higher limits');
    case 'sim-401': return fail(401, `unauthorized: invalid token ${String(req.headers.authorization).slice(7)}`);
    case 'sim-500': return fail(500, 'llama runner process has terminated: signal: killed');
    case 'sim-busy': return fail(503, 'server busy, please try again.  maximum pending requests exceeded');
    case 'sim-proxy404':
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found');
      return true;
    case 'sim-notools':
      return Array.isArray(body.tools) && body.tools.length > 0 ? fail(400, `registry.ollama.ai/library/${model}:latest does not support tools`) : false;
  }
  if ((!known.has(model) && !model.startsWith('sim-')) || model === 'sim-404') return fail(404, `model "${model}" not found, try pulling it first`);
  return false;
}

async function chat(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, known: Set<string>) {
  const invalid = validate(body);
  if (invalid) return sendError(res, 400, invalid);
  if (failEarly(req, res, body, known)) return;
  const model = String(body.model);
  const stream = body.stream !== false; // Ollama streams unless told not to
  if (model === 'sim-reset' && !stream) return req.socket.destroy();
  if (model === 'sim-malformed') {
    res.writeHead(200, { 'content-type': stream ? 'application/x-ndjson' : 'application/json; charset=utf-8' });
    return res.end(stream ? `${JSON.stringify(line(model, { content: 'Hi' }))}\n{"model":"sim-malformed","message":\n` : '{"model":"sim-malformed","message":');
  }
  const lines = answerLines(body);
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    return res.end(JSON.stringify(completeAnswer(lines)));
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const write = (l: unknown) => res.write(`${JSON.stringify(l)}\n`);
  switch (model) {
    case 'sim-reset':
      lines.slice(0, 2).forEach(write);
      await new Promise((r) => setTimeout(r, 20));
      return req.socket.destroy();
    case 'sim-mid-error':
      lines.slice(0, 2).forEach(write);
      return res.end(`${JSON.stringify({ error: 'an error was encountered while running the model' })}\n`);
    case 'sim-truncated':
      lines.slice(0, 2).forEach(write);
      return res.end();
  }
  for (const l of lines.slice(0, -1)) write(l); // one write per line, as Ollama flushes them
  res.end(`${JSON.stringify(lines.at(-1))}\n`);
}

function tags(models: string[]) {
  return {
    models: models.map((name, i) => ({
      name, model: name, modified_at: SIM_MODIFIED_AT, size: 2_019_393_189 + i, digest: `a80c4f17acd5${String(i).padStart(52, '0')}`,
      details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
    })),
  };
}

/** `POST /api/embed`: one vector per input, `prompt_eval_count` the inputs' tokens. */
function embed(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, known: Set<string>) {
  if (failEarly(req, res, body, known)) return;
  const inputs = typeof body.input === 'string' ? [body.input] : (body.input as unknown[]);
  if (!Array.isArray(inputs) || !inputs.every((input) => typeof input === 'string')) return sendError(res, 400, 'invalid input type');
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : SIM_EMBEDDING_DIMENSIONS;
  const texts = inputs;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({
    model: String(body.model),
    embeddings: texts.map((text) => simEmbedding(text, dimensions)),
    total_duration: 14_143_917,
    load_duration: 1_019_500,
    prompt_eval_count: texts.reduce((sum, text) => sum + simEmbeddingTokens(text), 0),
  }));
}

export async function startOllamaSimulator(options: { models?: string[] } = {}): Promise<OllamaSimulator> {
  const models = options.models ?? ['llama3.2:latest', 'llava:7b', 'qwen3:8b'];
  const known = new Set(models.flatMap((m) => [m, m.replace(/:latest$/, '')]));
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const state = { failTags: false };

  const server: Server = createServer(async (req, res) => {
    const { request, malformed } = await readSimRequest(req);
    requests.push(request);
    if (malformed) return sendError(res, 400, 'invalid character looking for beginning of value');
    const { path, body } = request;
    if (req.method === 'GET' && path === '/api/tags') {
      if (state.failTags) return sendError(res, 500, 'open /root/.ollama/models/manifests: permission denied');
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      return res.end(JSON.stringify(tags(models)));
    }
    if (req.method === 'POST' && path === '/api/chat') return chat(req, res, body ?? {}, known);
    if (req.method === 'POST' && path === '/api/embed') return embed(req, res, body ?? {}, known);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/api/chat'),
    get failTags() {
      return state.failTags;
    },
    set failTags(value: boolean) {
      state.failTags = value;
    },
    close: () => closeServer(server),
  };
}
