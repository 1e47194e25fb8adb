/**
 * Ollama native API upstream (`POST {base}/api/chat`, `GET {base}/api/tags`), translated to and from
 * the canonical OpenAI Chat Completions shapes. Base URL convention: `http://127.0.0.1:11434` (no
 * `/api`, no `/v1`). Ollama needs no key; when one is configured (a reverse proxy, Ollama's cloud) it
 * is sent as `Authorization: Bearer <key>`.
 *
 * Sources (shared/reference/provider-wire-formats.md §5 and §7):
 * - Chat request / response / stream: https://docs.ollama.com/api/chat ,
 *   https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion ,
 *   ollama-js `src/interfaces.ts` (`ChatRequest`, `Message`, `ToolCall`, `ChatResponse`).
 * - Streaming (NDJSON by default, last line `"done": true`): https://docs.ollama.com/api/streaming .
 * - Sampling options (`options.temperature`, `top_p`, `num_predict`, `stop`, `seed`, penalties):
 *   https://docs.ollama.com/modelfile#valid-parameters-and-values .
 * - Tools (`arguments` are objects, results use `tool_name`): https://docs.ollama.com/capabilities/tool-calling .
 * - Images (`images: [<raw base64>]` on the message): https://docs.ollama.com/capabilities/vision .
 * - JSON mode / structured outputs (`format: "json" | <JSON Schema>`): https://docs.ollama.com/capabilities/structured-outputs .
 * - Errors (`{"error": "..."}`, and mid-stream as an NDJSON line with the status unchanged):
 *   https://docs.ollama.com/api/errors ; 503 "server busy" when `OLLAMA_MAX_QUEUE` is exceeded
 *   (https://docs.ollama.com/faq#how-does-ollama-handle-concurrent-requests).
 * - Models: https://docs.ollama.com/api/tags (one unpaged list; no display names).
 *
 * Request mapping (everything else a client sends gets one of these decisions):
 * - mapped: `messages` (system/developer → `system`; user text + image data URLs → `content` +
 *   `images`; assistant `tool_calls` with `arguments` parsed to objects; tool results → `tool` with the
 *   function name recovered as `tool_name`), `tools`, `tool_choice: "none"` (the tools are not sent),
 *   `response_format` (`json_object` → `format: "json"`, `json_schema` → `format: <schema>`),
 *   `temperature` (no clamping: Ollama accepts OpenAI's whole 0–2 range), `top_p`,
 *   `max_completion_tokens ?? max_tokens` → `options.num_predict`, `stop` (always an array), `seed`,
 *   `presence_penalty`, `frequency_penalty`, `stream` (always sent explicitly: Ollama streams by default).
 * - dropped, with the reason: see `DROPPED` below (`user`, `metadata`, `store`, `service_tier`,
 *   `reasoning_effort`, `prediction`, `stream_options`, message `name`, tool `strict`, image `detail`, ...).
 * - refused with 400 naming the parameter: see `REFUSED` below (`n` > 1, `logprobs`, `logit_bias`,
 *   `audio`, ...), plus `tool_choice: "required"` / named, `parallel_tool_calls: false`, image http(s)
 *   URLs (the gateway does not fetch URLs), non-text/non-image parts, the deprecated `function` role.
 * - `keep_alive`, `think` and other Ollama-only fields are not sent: the server defaults apply.
 *
 * Response mapping: `message.content` → `content`; `message.thinking` → `reasoning_content` (the
 * DeepSeek-style extension many clients read; never mixed into `content`); `message.tool_calls` →
 * `tool_calls` with generated ids (Ollama sends none, or an id in newer versions which is kept) and
 * `arguments` JSON-stringified; `done_reason` `length` → `length`, tool calls → `tool_calls`, anything
 * else (`stop`, `load`, `unload`) → `stop`. Usage: `prompt_tokens = prompt_eval_count`,
 * `completion_tokens = eval_count`; a missing count is 0 (Ollama omits `prompt_eval_count` when the
 * whole prompt came from its cache, and reports no cache-hit count, so `cached_tokens` is never set);
 * when both are missing no usage is reported at all, so the core does not bill a fabricated zero.
 */
import type {
  ChatCompletion, ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall, ChatToolCallDelta, Usage,
} from '../../../../core/chat-types.ts';
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder, UpstreamCall } from '../../../../core/upstream-call.ts';
import { GatewayError, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import {
  completionId, contentParts, contentText, createChunkBuilder, headerValue, malformedResponse,
  maxOutputTokens, nowUnixSec, parseDataUrl, parseToolArguments, parseUpstreamJson, toolCallId,
  truncatedStream, unsupportedParameter, usageOf, type ChunkBuilder,
} from '../canonical.ts';
import { ProviderService, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from '../base.ts';

// ---------------------------------------------------------------------------------------------
// Ollama wire shapes (ollama-js src/interfaces.ts)
// ---------------------------------------------------------------------------------------------

interface OllamaToolCall {
  function: { name: string; arguments: Record<string, unknown> };
}

interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  images?: string[];
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
}

interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** `options`: the Modelfile parameters Tollgate maps from OpenAI fields. */
interface OllamaOptions {
  temperature?: number;
  top_p?: number;
  num_predict?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

/** The `POST /api/chat` body Tollgate sends. */
export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  stream: boolean;
  tools?: OllamaTool[];
  format?: 'json' | Record<string, unknown>;
  options?: OllamaOptions;
}

/** A tool call as Ollama returns it; newer versions add `id` and `function.index`. */
interface OllamaResponseToolCall {
  id?: unknown;
  function?: { index?: unknown; name?: unknown; arguments?: unknown };
}

/** A non-streamed answer, or one NDJSON line of a stream (the last has `done: true` and the counts). */
interface OllamaChatResponse {
  model?: string;
  created_at?: string;
  message?: { role?: string; content?: string; thinking?: string; tool_calls?: OllamaResponseToolCall[] };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

/**
 * OpenAI fields Tollgate does not send, and why. Nothing reads them: this table is the record of the
 * decision (the upstream body is built field by field, never by spreading the client's request).
 */
export const DROPPED: Readonly<Record<string, string>> = {
  user: 'an end-user id for OpenAI abuse tracking; the gateway logs its own user',
  metadata: 'OpenAI dashboard tags; Ollama stores nothing',
  store: 'OpenAI-side storage of completions; Ollama stores nothing',
  service_tier: 'a local server has no tiers',
  reasoning_effort: 'Ollama\'s `think` levels exist only for some models and `think` on a model without thinking is a 400; the model\'s default applies',
  prediction: 'predicted outputs only speed OpenAI up; the answer is the same without them',
  stream_options: 'Ollama always reports the counts on its final line; the core hides the usage chunk unless asked',
  prompt_cache_key: 'Ollama caches prompt prefixes on its own',
  safety_identifier: 'an OpenAI abuse-tracking id',
  verbosity: 'an OpenAI reasoning-model hint with no Ollama equivalent',
  'messages[].name': 'Ollama messages have no participant names',
  'messages[].refusal': 'an earlier refusal needs no replay; the assistant content carries the turn',
  'tools[].function.strict': 'Ollama has no strict mode; the schema still constrains the model as a prompt',
  'content[].image_url.detail': 'Ollama has no image detail level',
  'tool_choice: "auto"': 'Ollama\'s only behaviour',
  'parallel_tool_calls: true': 'Ollama\'s default',
  'n: 1': 'Ollama\'s only behaviour',
};

const isSet = (value: unknown) => value !== undefined && value !== null && value !== false;

/** Fields refused with a 400 when set: Ollama cannot honour them and ignoring them would change the answer. */
const REFUSED: ReadonlyArray<{ param: string; applies: (value: unknown) => boolean; why: string }> = [
  { param: 'n', applies: (v) => typeof v === 'number' && v > 1, why: 'Ollama generates one choice per request' },
  { param: 'logprobs', applies: isSet, why: 'Tollgate does not translate Ollama\'s log probabilities' },
  { param: 'top_logprobs', applies: (v) => typeof v === 'number' && v > 0, why: 'Tollgate does not translate Ollama\'s log probabilities' },
  { param: 'logit_bias', applies: (v) => isSet(v) && Object.keys(v as object).length > 0, why: 'Ollama has no logit bias' },
  { param: 'audio', applies: isSet, why: 'Ollama produces text only' },
  { param: 'modalities', applies: (v) => Array.isArray(v) && v.some((m) => m !== 'text'), why: 'Ollama produces text only' },
  { param: 'web_search_options', applies: isSet, why: 'Ollama has no built-in web search' },
  { param: 'functions', applies: isSet, why: 'the deprecated functions API is not translated; use "tools"' },
  { param: 'function_call', applies: isSet, why: 'the deprecated functions API is not translated; use "tool_choice"' },
];

function refuseUnsupported(request: ChatCompletionRequest, provider: string): void {
  for (const { param, applies, why } of REFUSED) {
    if (applies(request[param])) throw unsupportedParameter(param, provider, why);
  }
}

/** Builds the `POST /api/chat` body. Throws 400 (`GatewayError`) for what Ollama cannot honour. */
export function toOllamaRequest(request: ChatCompletionRequest, model: string, provider: string): OllamaChatRequest {
  refuseUnsupported(request, provider);
  const body: OllamaChatRequest = { model, messages: toOllamaMessages(request.messages, provider), stream: request.stream === true };
  const tools = toOllamaTools(request, provider);
  if (tools) body.tools = tools;
  const format = toOllamaFormat(request.response_format, provider);
  if (format !== undefined) body.format = format;
  const options = toOllamaOptions(request);
  if (Object.keys(options).length > 0) body.options = options;
  return body;
}

function toOllamaOptions(request: ChatCompletionRequest): OllamaOptions {
  const options: OllamaOptions = {};
  const num = (field: string) => (typeof request[field] === 'number' ? (request[field] as number) : undefined);
  const temperature = num('temperature');
  if (temperature !== undefined) options.temperature = temperature;
  const topP = num('top_p');
  if (topP !== undefined) options.top_p = topP;
  const maxTokens = maxOutputTokens(request);
  if (maxTokens !== null) options.num_predict = maxTokens;
  const stop = request.stop;
  if (typeof stop === 'string') options.stop = [stop];
  else if (Array.isArray(stop) && stop.length > 0) options.stop = stop as string[];
  const seed = num('seed');
  if (seed !== undefined) options.seed = seed;
  const presence = num('presence_penalty');
  if (presence !== undefined) options.presence_penalty = presence;
  const frequency = num('frequency_penalty');
  if (frequency !== undefined) options.frequency_penalty = frequency;
  return options;
}

/**
 * `tools` → Ollama `tools` (same function shape, `strict` dropped). Ollama has no `tool_choice`:
 * `auto` is its behaviour, `none` is honoured by not sending the tools, and `required` or a named
 * function cannot be enforced, so they are refused. `parallel_tool_calls: false` cannot be enforced either.
 */
function toOllamaTools(request: ChatCompletionRequest, provider: string): OllamaTool[] | undefined {
  const choice = request.tool_choice;
  if (choice !== undefined && choice !== null && choice !== 'auto' && choice !== 'none') {
    throw unsupportedParameter('tool_choice', provider, 'Ollama has no tool_choice; only "auto" and "none" can be honoured');
  }
  const tools = request.tools as ChatTool[] | undefined;
  if (!tools || tools.length === 0 || choice === 'none') return undefined;
  if (request.parallel_tool_calls === false) {
    throw unsupportedParameter('parallel_tool_calls', provider, 'Ollama cannot be limited to one tool call per turn');
  }
  return tools.map((tool) => {
    const fn: OllamaTool['function'] = { name: tool.function.name };
    if (tool.function.description !== undefined) fn.description = tool.function.description;
    if (tool.function.parameters !== undefined) fn.parameters = tool.function.parameters;
    return { type: 'function', function: fn };
  });
}

/** `response_format` → `format`: `"json"` for JSON mode, the schema itself for structured outputs. */
function toOllamaFormat(responseFormat: unknown, provider: string): OllamaChatRequest['format'] | undefined {
  if (responseFormat === undefined || responseFormat === null) return undefined;
  const format = responseFormat as { type?: unknown; json_schema?: { schema?: unknown } };
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return 'json';
    case 'json_schema': {
      const schema = format.json_schema?.schema;
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
        throw unsupportedParameter('response_format.json_schema.schema', provider, 'Ollama needs the JSON Schema object itself');
      }
      return schema as Record<string, unknown>;
    }
    default:
      throw unsupportedParameter('response_format.type', provider, `only "text", "json_object" and "json_schema" can be translated, not "${String(format.type)}"`);
  }
}

/** The canonical history as Ollama messages. Tool results get the function name of the call they answer. */
function toOllamaMessages(messages: ChatMessage[], provider: string): OllamaMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: contentText(message.content, `${param}.content`, provider) };
      case 'user':
        return toOllamaUserMessage(message.content, param, provider);
      case 'assistant':
        return toOllamaAssistantMessage(message, param, provider, toolNames);
      case 'tool': {
        const out: OllamaMessage = { role: 'tool', content: contentText(message.content, `${param}.content`, provider) };
        // An unknown id (history trimmed by the client) leaves tool_name out; Ollama accepts that.
        const name = message.tool_call_id === undefined ? undefined : toolNames.get(message.tool_call_id);
        if (name !== undefined) out.tool_name = name;
        return out;
      }
      default:
        throw unsupportedParameter(`${param}.role`, provider, `the "${message.role}" role is not translated; use "tool" messages`);
    }
  });
}

/** User content: text parts joined with newlines, image data URLs as raw base64 in `images`. */
function toOllamaUserMessage(content: ChatMessage['content'], param: string, provider: string): OllamaMessage {
  const texts: string[] = [];
  const images: string[] = [];
  contentParts(content).forEach((part: ChatContentPart, j) => {
    const partParam = `${param}.content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image_url') images.push(imageBase64(part, `${partParam}.image_url`, provider));
    else throw unsupportedParameter(partParam, provider, `only text and image parts can be translated, not "${part.type}"`);
  });
  const out: OllamaMessage = { role: 'user', content: texts.join('\n') };
  if (images.length > 0) out.images = images;
  return out;
}

function imageBase64(part: ChatContentPart, param: string, provider: string): string {
  const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
  const dataUrl = typeof url === 'string' ? parseDataUrl(url) : null;
  if (dataUrl && dataUrl.mediaType.startsWith('image/')) return dataUrl.data;
  if (typeof url === 'string' && /^https?:/i.test(url)) {
    throw unsupportedParameter(param, provider, 'Ollama takes images inline and the gateway does not fetch URLs; send a base64 data URL');
  }
  throw unsupportedParameter(param, provider, 'expected a base64 data URL of an image ("data:image/png;base64,...")');
}

function toOllamaAssistantMessage(message: ChatMessage, param: string, provider: string, toolNames: Map<string, string>): OllamaMessage {
  const out: OllamaMessage = { role: 'assistant', content: contentText(message.content, `${param}.content`, provider) };
  const calls = message.tool_calls ?? [];
  if (calls.length > 0) {
    out.tool_calls = calls.map((call: ChatToolCall, k) => {
      toolNames.set(call.id, call.function.name);
      const args = parseToolArguments(call.function.arguments, `${param}.tool_calls[${k}].function.arguments`);
      return { function: { name: call.function.name, arguments: args } };
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

/** `done_reason` → `finish_reason` (reference §7): tool calls win over `stop`, `length` wins over both. */
function finishReason(doneReason: string | undefined, hadToolCalls: boolean): string {
  if (doneReason === 'length') return 'length';
  return hadToolCalls ? 'tool_calls' : 'stop';
}

/** The counts of a final object as canonical usage, or null when Ollama reported neither. */
function usageFrom(line: OllamaChatResponse): Usage | null {
  const prompt = typeof line.prompt_eval_count === 'number' ? line.prompt_eval_count : null;
  const completion = typeof line.eval_count === 'number' ? line.eval_count : null;
  if (prompt === null && completion === null) return null;
  return usageOf(prompt ?? 0, completion ?? 0);
}

/** `created_at` (RFC 3339, nanoseconds) as unix seconds; now when missing or unreadable. */
function createdFrom(createdAt: unknown): number {
  const ms = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : nowUnixSec();
}

/** Ollama tool calls as OpenAI ones: an id generated unless Ollama sent one, arguments as a JSON string. */
function toOpenAIToolCalls(calls: OllamaResponseToolCall[], provider: string): ChatToolCall[] {
  return calls.map((call) => {
    const name = call?.function?.name;
    if (typeof name !== 'string' || name === '') throw malformedResponse(provider, 'a tool call without a function name');
    const args = call.function?.arguments;
    return {
      id: typeof call.id === 'string' && call.id !== '' ? call.id : toolCallId(),
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    };
  });
}

/** An in-band `{"error": "..."}` (a 200 body or a stream line) as a 502. */
function inBandError(provider: string, error: unknown, where: string): GatewayError {
  const message = typeof error === 'string' && error ? `: ${error}` : '.';
  return upstreamError({ status: 502, code: 'upstream_error', message: `Provider "${provider}" failed ${where}${message}` });
}

/** A non-streamed `/api/chat` body as a `chat.completion`. Throws 502 when it is not a final answer. */
export function toChatCompletion(bodyText: string, model: string, provider: string): ChatCompletion {
  const body = parseUpstreamJson<OllamaChatResponse>(provider, bodyText, 'a response');
  if (!body || typeof body !== 'object') throw malformedResponse(provider, 'a response that is not an object');
  if (body.error !== undefined) throw inBandError(provider, body.error, 'to answer');
  if (body.done !== true || !body.message || typeof body.message !== 'object') {
    throw malformedResponse(provider, 'a response without a final "message"');
  }
  const calls = Array.isArray(body.message.tool_calls) ? toOpenAIToolCalls(body.message.tool_calls, provider) : [];
  const text = typeof body.message.content === 'string' ? body.message.content : '';
  const message: ChatMessage = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  if (typeof body.message.thinking === 'string' && body.message.thinking) message.reasoning_content = body.message.thinking;
  const completion: ChatCompletion = {
    id: completionId(),
    object: 'chat.completion',
    created: createdFrom(body.created_at),
    model: typeof body.model === 'string' && body.model ? body.model : model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(body.done_reason, calls.length > 0) }],
  };
  const usage = usageFrom(body);
  if (usage) completion.usage = usage;
  return completion;
}

// ---------------------------------------------------------------------------------------------
// Stream decoder
// ---------------------------------------------------------------------------------------------

/**
 * Reads Ollama's NDJSON lines (one `event.data` each). Content and thinking become deltas; tool calls,
 * which Ollama sends whole in one line, become complete deltas (id, type, name and all the arguments
 * at once, which the OpenAI SDK assembles like any first fragment); the `done: true` line becomes the
 * finish chunk plus the usage-only chunk, and ends the stream. A `{"error": ...}` line is a 502.
 */
export class OllamaStreamDecoder implements StreamDecoder {
  private builder: ChunkBuilder | null = null;
  private toolCalls = 0;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const line = parseUpstreamJson<OllamaChatResponse>(this.provider, event.data, 'a stream line');
    if (!line || typeof line !== 'object') throw malformedResponse(this.provider, 'a stream line that is not an object');
    if (line.error !== undefined) throw inBandError(this.provider, line.error, 'mid-stream');
    const builder = this.start(line, out);
    const delta = this.deltaOf(line);
    if (delta) out.push({ chunk: builder.delta(delta), raw: null });
    if (line.done !== true) return false;
    out.push({ chunk: builder.delta({}, finishReason(line.done_reason, this.toolCalls > 0)), raw: null });
    const usage = usageFrom(line);
    if (usage) out.push({ chunk: builder.usage(usage), raw: null });
    return true;
  }

  /** The upstream closed without a `done: true` line: the answer is incomplete. */
  finish(): void {
    throw truncatedStream(this.provider);
  }

  /** On the first line: the builder (id, `created`, model from the line) and the role chunk. */
  private start(line: OllamaChatResponse, out: DecodedChunk[]): ChunkBuilder {
    if (this.builder) return this.builder;
    const model = typeof line.model === 'string' && line.model ? line.model : this.model;
    this.builder = createChunkBuilder(completionId(), model, createdFrom(line.created_at));
    out.push({ chunk: this.builder.delta({ role: 'assistant', content: '' }), raw: null });
    return this.builder;
  }

  private deltaOf(line: OllamaChatResponse): Record<string, unknown> | null {
    const message = line.message;
    if (!message || typeof message !== 'object') return null;
    const delta: Record<string, unknown> = {};
    if (typeof message.thinking === 'string' && message.thinking) delta.reasoning_content = message.thinking;
    if (typeof message.content === 'string' && message.content) delta.content = message.content;
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      delta.tool_calls = toOpenAIToolCalls(message.tool_calls, this.provider).map(
        (call): ChatToolCallDelta => ({ index: this.toolCalls++, ...call }),
      );
    }
    return Object.keys(delta).length > 0 ? delta : null;
  }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * The upstream's message: the `error` string of Ollama's body, or a short plain-text body (a reverse
 * proxy's "404 page not found"); null for HTML or anything long.
 */
function errorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as { error?: unknown };
    if (typeof body?.error === 'string' && body.error) return body.error;
    if (body?.error && typeof (body.error as { message?: unknown }).message === 'string') return (body.error as { message: string }).message;
    return null;
  } catch {
    const text = bodyText.trim();
    return text && text.length <= 200 && !text.includes('<') ? text : null;
  }
}

function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const retryAfter = headerValue(headers, 'retry-after');
  const retryAfterMs = headerValue(headers, 'retry-after-ms');
  if (retryAfter) out['retry-after'] = retryAfter;
  if (retryAfterMs) out['retry-after-ms'] = retryAfterMs;
  return out;
}

/**
 * Maps an Ollama error answer to the contract: 404 "model ... not found" → 404 `model_not_found`;
 * 401/403 keep their status with a replaced message (a proxy's text may echo the key); 402 (Ollama
 * cloud: usage exhausted) → 402 `insufficient_quota`, not retryable; 429 keeps `retry-after`; 503
 * (queue full, "server busy") → 503 `overloaded`; other 4xx keep their status and are not retryable;
 * other 5xx → 502.
 */
export function mapOllamaError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const message = errorMessage(bodyText);
  if (status === 404 && /model\b.*\bnot found/i.test(message ?? '')) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}" (upstream says: ${message}). An operator can pull it with "ollama pull ${model}".`);
  }
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: status === 401 ? 'upstream_authentication_error' : 'upstream_permission_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  const said = `Provider "${provider}" answered ${status}${message ? `: ${message}` : '.'}`;
  if (status === 429) return upstreamError({ status, code: 'rate_limit_exceeded', message: said, headers: retryHeaders(headers) });
  if (status === 402) return upstreamError({ status, code: 'insufficient_quota', message: said, headers: { 'x-should-retry': 'false' } });
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: said, headers: retryHeaders(headers) });
  if (status >= 500) return upstreamError({ status: 502, message: said });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, message: said, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}

// ---------------------------------------------------------------------------------------------
// The provider
// ---------------------------------------------------------------------------------------------

/**
 * The `ollama` provider type. `buildChatCall` throws 400 (`GatewayError`, `param` set) for requests
 * Ollama cannot honour; the codec maps answers, NDJSON streams and errors as described above.
 * `listModels` reads `GET {base}/api/tags` and throws `GatewayError` (502 `upstream_unreachable` when
 * Ollama is not running).
 */
export class OllamaProvider extends ProviderService {
  readonly name = 'Ollama';
  override readonly requiresApiKey = false;

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = toOllamaRequest(request, model, this.id);
    return this.postJson(credential, origin, `${basePath}/api/chat`, body, body.stream, this.codec(model));
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'ndjson',
      decodeError: (status, bodyText, headers) => mapOllamaError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: toChatCompletion(bodyText, model, provider), raw: null }),
      createStreamDecoder: () => new OllamaStreamDecoder(provider, model),
    };
  }

  /** The locally pulled models (`GET /api/tags`, one unpaged list): id = `name`, created = `modified_at`. */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const url = `${credential.baseUrl.replace(/\/+$/, '')}/api/tags`;
    const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as {
      models?: Array<{ name?: unknown; model?: unknown; modified_at?: unknown }>;
    };
    if (!list || !Array.isArray(list.models)) throw malformedResponse(this.id, 'a model list without "models"');
    const entries: CatalogEntry[] = [];
    for (const m of list.models) {
      const id = typeof m?.name === 'string' && m.name ? m.name : typeof m?.model === 'string' ? m.model : '';
      if (!id) continue;
      const ms = typeof m.modified_at === 'string' ? Date.parse(m.modified_at) : NaN;
      entries.push({ id, created: Number.isFinite(ms) ? Math.floor(ms / 1000) : 0, owned_by: 'ollama' });
    }
    return entries;
  }
}
