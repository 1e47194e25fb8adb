/**
 * Mistral (La Plateforme) upstream: `POST {base}/chat/completions` with `Authorization: Bearer KEY`,
 * OpenAI-shaped but with a strict request schema (an unknown field is a 422 `extra_forbidden`), so
 * the upstream body is built from the explicit allow-list below, never by spreading the request.
 *
 * Sources (shared/reference/provider-wire-formats.md §4, §7):
 * - API reference https://docs.mistral.ai/api/ (chat completions, models) and `@mistralai/mistralai`
 *   `src/models/components/{chatcompletionrequest,chatcompletionchoice,completionresponsestreamchoice,
 *   usageinfo,toolchoiceenum,responseformats,imageurlchunk,toolmessage,basemodelcard,modelcapabilities}.ts`
 * - Errors https://docs.mistral.ai/resources/error-glossary ; 422 bodies
 *   `src/models/errors/httpvalidationerror.ts`; unknown model `{"type":"invalid_model","code":"1500"}`
 *   (tmc/langchaingo#1233); rate-limit headers `ratelimitbysize-*` (reference §4.4, third-party).
 * - Tool-call ids must match `[a-zA-Z0-9]{9}` (langchain-ai/langchain#24668, anomalyco/opencode#1680).
 * - Vision https://docs.mistral.ai/capabilities/vision/ (http(s) and base64 data URLs).
 * - Prompt caching https://docs.mistral.ai/studio-api/conversations/advanced/prompt-caching
 *   (`prompt_cache_key`; reads reported in `usage.prompt_tokens_details.cached_tokens`).
 * - Sampling bounds probed against the live API: `temperature` ≤ 1.5, `top_p` > 0
 *   (SillyTavern/SillyTavern#4856, mnfst/modelparams.dev#234).
 *
 * Request fields (OpenAI name → Mistral):
 * | OpenAI field | Decision |
 * |---|---|
 * | model, messages, stream, stop, n, presence_penalty, frequency_penalty, parallel_tool_calls, prompt_cache_key | mapped as is (messages translated, see below) |
 * | temperature | clamped to Mistral's 0–1.5 (OpenAI allows 2; Mistral 422s above 1.5) |
 * | top_p | raised to 0.01 when 0 (Mistral requires > 0; 0.01 keeps OpenAI's "nearly greedy" meaning) |
 * | max_completion_tokens ?? max_tokens | `max_tokens` |
 * | seed | `random_seed` |
 * | response_format | text / json_object as is; json_schema → `{name, description, schema, strict}`; other types → 400 |
 * | tools | function tools → `{type:"function", function:{name, description, parameters, strict}}` |
 * | tool_choice | auto / none as is, `required` → `any`, `{type:"function",function:{name}}` as is; others → 400 |
 * | prediction | `{type:"content", content}` (text parts joined) |
 * | safe_prompt | Mistral's own flag, forwarded when boolean |
 * | stream_options | dropped: Mistral always sends usage on the last stream chunk (the core hides it when not asked for) |
 * | user | dropped: an abuse-monitoring tag for OpenAI; Mistral has no such field |
 * | store, metadata | dropped: they tag OpenAI stored completions; nothing is stored here |
 * | service_tier | dropped: OpenAI's tiers (flex, priority) have no Mistral meaning; a billing hint, the answer is the same |
 * | reasoning_effort, verbosity | dropped: hints whose accepted values differ per Mistral model; the answer stays valid |
 * | logprobs, top_logprobs | refused (400) when asked for: Mistral returns no log probabilities |
 * | logit_bias | refused (400) when non-empty: Mistral cannot bias tokens |
 * | modalities (other than text), audio | refused (400): Mistral chat answers in text only |
 * | web_search_options | refused (400): no web search in Mistral chat completions |
 * | functions, function_call | refused (400): the deprecated form is not translated; use tools |
 * | anything else | refused (400): Mistral would 422 on it and Tollgate cannot know it is harmless |
 *
 * Messages: `developer` → `system`; system/tool content must be text; user parts: text, image_url
 * (http(s) or base64 image data URL, sent as Mistral's `image_url` string or `{url, detail}`); other
 * parts → 400 naming them; message `name` is dropped except on tool messages (Mistral has no
 * participant names; it 422s on them); an assistant's `refusal` / `audio` are not forwarded (they
 * describe an earlier OpenAI answer, not prompt text, and Mistral 422s on them); role `function` → 400. Tool-call ids are rewritten to 9-char
 * base62 (see `mistralToolCallId`) in assistant `tool_calls` and tool `tool_call_id` alike.
 *
 * Answers: `finish_reason` `model_length` → `length`, `error` → a 502 `upstream_error` (in a stream:
 * the final SSE error event), since the answer is cut short and `stop` would pass it off as complete.
 * Content given as chunks keeps its text chunks; `thinking` chunks are dropped (OpenAI's shape has no
 * place for them; their tokens are still in `completion_tokens`).
 */
import { createHash } from 'node:crypto';
import type {
  ChatCompletion, ChatCompletionChoice, ChatCompletionChunk, ChatCompletionChunkChoice, ChatCompletionRequest,
  ChatContentPart, ChatMessage, ChatTool, ChatToolCall, ChatToolCallDelta, Usage,
} from '../../../../core/chat-types.ts';
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder, UpstreamCall } from '../../../../core/upstream-call.ts';
import { GatewayError, invalidRequest, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import {
  completionId, contentParts, contentText, headerValue, malformedResponse, maxOutputTokens, nowUnixSec,
  parseDataUrl, parseUpstreamJson, toolCallId, truncatedStream, unsupportedParameter, usageOf,
} from '../canonical.ts';
import { ProviderService, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from '../base.ts';

// ---------------------------------------------------------------------------------------------
// Wire types (Mistral side)
// ---------------------------------------------------------------------------------------------

type MistralUserChunk = { type: 'text'; text: string } | { type: 'image_url'; image_url: string | { url: string; detail: string } };

interface MistralToolCall {
  id?: string;
  type?: string;
  index?: number;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

type MistralMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | MistralUserChunk[] }
  | { role: 'assistant'; content?: string; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; content: string; tool_call_id: string; name?: string };

/** The request body Mistral accepts (only the fields Tollgate fills). */
export interface MistralChatRequest {
  model: string;
  messages: MistralMessage[];
  stream: boolean;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string | string[];
  random_seed?: number;
  response_format?: Record<string, unknown>;
  tools?: Array<{ type: 'function'; function: Record<string, unknown> }>;
  tool_choice?: string | { type: 'function'; function: { name: string } };
  presence_penalty?: number;
  frequency_penalty?: number;
  n?: number;
  parallel_tool_calls?: boolean;
  prediction?: { type: 'content'; content: string };
  safe_prompt?: boolean;
  prompt_cache_key?: string;
}

type MistralContent = string | Array<{ type?: string; text?: string }> | null | undefined;

interface MistralUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

interface MistralCompletion {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; message?: { content?: MistralContent; tool_calls?: MistralToolCall[] | null }; finish_reason?: string | null }>;
  usage?: MistralUsage | null;
}

interface MistralStreamChunk {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; delta?: { role?: string; content?: MistralContent; tool_calls?: MistralToolCall[] | null }; finish_reason?: string | null }>;
  usage?: MistralUsage | null;
  object?: string;
  error?: unknown;
}

interface MistralModelCard {
  id?: unknown;
  created?: unknown;
  owned_by?: unknown;
  name?: unknown;
  capabilities?: { completion_chat?: unknown } | null;
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

const TEMPERATURE_MAX = 1.5;
const TOP_P_MIN = 0.01;

/** Fields `buildMistralRequest` translates (the allow-list). */
const MAPPED_FIELDS = new Set([
  'model', 'messages', 'stream', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'seed',
  'response_format', 'tools', 'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'parallel_tool_calls',
  'prediction', 'safe_prompt', 'prompt_cache_key',
]);

/** Fields dropped whatever their value, and why (the answer is still what the client asked for). */
const DROPPED_FIELDS: Record<string, string> = {
  stream_options: 'Mistral always reports stream usage; the gateway hides it unless include_usage was asked',
  user: 'an OpenAI abuse-monitoring tag with no Mistral counterpart',
  store: 'it asks OpenAI to store the completion; nothing is stored',
  metadata: 'it tags OpenAI stored completions; nothing is stored',
  service_tier: 'OpenAI tiers have no Mistral meaning; the answer is the same',
  reasoning_effort: 'a hint whose accepted values differ per Mistral model',
  verbosity: 'a hint Mistral does not take',
};

/** Fields refused when they ask for something Mistral cannot do; `null` = harmless value, dropped. */
const CONDITIONAL_FIELDS: Record<string, (value: unknown) => string | null> = {
  logprobs: (v) => (v === true ? 'Mistral returns no token log probabilities' : null),
  top_logprobs: (v) => (v === null || v === undefined ? null : 'Mistral returns no token log probabilities'),
  logit_bias: (v) => (v && typeof v === 'object' && Object.keys(v).length > 0 ? 'Mistral cannot bias tokens' : null),
  modalities: (v) => (Array.isArray(v) && v.some((m) => m !== 'text') ? 'Mistral chat answers in text only' : null),
  audio: (v) => (v === null || v === undefined ? null : 'Mistral chat answers in text only'),
  web_search_options: (v) => (v === null || v === undefined ? null : 'Mistral chat completions have no web search'),
  functions: (v) => (v === null || v === undefined ? null : 'the deprecated "functions" form is not translated; use "tools"'),
  function_call: (v) => (v === null || v === undefined ? null : 'the deprecated "function_call" form is not translated; use "tool_choice"'),
};

/** Throws 400 for the first field that is neither mapped, dropped, nor harmless. */
function checkFields(request: ChatCompletionRequest, provider: string): void {
  for (const [field, value] of Object.entries(request)) {
    if (MAPPED_FIELDS.has(field) || field in DROPPED_FIELDS) continue;
    const check = CONDITIONAL_FIELDS[field];
    const why = check ? check(value) : 'it is not a field Tollgate can translate for Mistral';
    if (why) throw unsupportedParameter(field, provider, why);
  }
}

const MISTRAL_TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A tool-call id Mistral accepts (`[a-zA-Z0-9]{9}`). Valid ids pass unchanged (Mistral's own, coming
 * back in the history); others become a 9-char base62 digest of the id, so the same client id maps to
 * the same Mistral id in the assistant message and its tool result, on every turn, statelessly.
 */
export function mistralToolCallId(id: string): string {
  if (MISTRAL_TOOL_CALL_ID.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += BASE62[digest[i]! % 62];
  return out;
}

/** A user content part in Mistral's shape; 400 naming the part when Mistral cannot take it. */
function userChunk(part: ChatContentPart, param: string, provider: string): MistralUserChunk {
  if (part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
  if (part.type === 'image_url') {
    const image = (part as { image_url?: { url?: unknown; detail?: unknown } }).image_url;
    const url = typeof image?.url === 'string' ? image.url : '';
    const data = url.startsWith('data:') ? parseDataUrl(url) : null;
    if (!/^https?:\/\//i.test(url) && !data?.mediaType.startsWith('image/')) {
      throw unsupportedParameter(`${param}.image_url`, provider, 'images must be an http(s) URL or a base64 data URL of an image');
    }
    return { type: 'image_url', image_url: typeof image?.detail === 'string' ? { url, detail: image.detail } : url };
  }
  throw unsupportedParameter(param, provider, `content parts of type "${part.type}" are not translated (text and image_url are)`);
}

function userMessage(message: ChatMessage, i: number, provider: string): MistralMessage {
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  const parts = contentParts(message.content);
  if (parts.length === 0) throw invalidRequest(`"messages[${i}].content" is required for user messages.`, `messages[${i}].content`);
  return { role: 'user', content: parts.map((part, j) => userChunk(part, `messages[${i}].content[${j}]`, provider)) };
}

function assistantMessage(message: ChatMessage, i: number, provider: string): MistralMessage {
  const content = contentText(message.content, `messages[${i}].content`, provider);
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return { role: 'assistant', content };
  const out: MistralMessage = {
    role: 'assistant',
    tool_calls: calls.map((call) => ({
      id: mistralToolCallId(call.id),
      type: 'function',
      function: { name: call.function.name, arguments: call.function.arguments },
    })),
  };
  // OpenAI sends `content: null` beside tool calls; Mistral takes the field absent.
  if (content) out.content = content;
  return out;
}

function toolMessage(message: ChatMessage, i: number, provider: string, names: Map<string, string>): MistralMessage {
  if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '') {
    throw invalidRequest(`"messages[${i}].tool_call_id" is required for tool messages.`, `messages[${i}].tool_call_id`);
  }
  const out: MistralMessage = {
    role: 'tool',
    content: contentText(message.content, `messages[${i}].content`, provider),
    tool_call_id: mistralToolCallId(message.tool_call_id),
  };
  // Mistral's tool message carries the function name; fill it from the call it answers.
  const name = typeof message.name === 'string' ? message.name : names.get(message.tool_call_id);
  if (name) out.name = name;
  return out;
}

/** The conversation in Mistral's roles and shapes. Throws 400 naming the message part it cannot take. */
export function mistralMessages(messages: ChatMessage[], provider: string): MistralMessage[] {
  const names = new Map<string, string>();
  return messages.map((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: contentText(message.content, `messages[${i}].content`, provider) };
      case 'user':
        return userMessage(message, i, provider);
      case 'assistant':
        for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
        return assistantMessage(message, i, provider);
      case 'tool':
        return toolMessage(message, i, provider, names);
      default:
        throw unsupportedParameter(`messages[${i}].role`, provider, `the role "${message.role}" is not translated; use "tool" messages`);
    }
  });
}

function mapResponseFormat(value: unknown, provider: string): Record<string, unknown> {
  const format = value as { type?: unknown; json_schema?: { name?: unknown; description?: unknown; schema?: unknown; strict?: unknown } };
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type !== 'json_schema') {
    throw unsupportedParameter('response_format.type', provider, `"${String(format.type)}" is not one of text, json_object, json_schema`);
  }
  const spec = format.json_schema;
  if (!spec || typeof spec.name !== 'string' || !spec.schema || typeof spec.schema !== 'object') {
    throw invalidRequest('"response_format.json_schema" needs a "name" and a "schema" object.', 'response_format.json_schema');
  }
  const jsonSchema: Record<string, unknown> = { name: spec.name, schema: spec.schema };
  if (typeof spec.description === 'string') jsonSchema.description = spec.description;
  if (typeof spec.strict === 'boolean') jsonSchema.strict = spec.strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}

function mapTools(tools: ChatTool[]): NonNullable<MistralChatRequest['tools']> {
  return tools.map(({ function: fn }) => {
    // Mistral requires `parameters`; OpenAI's default for a missing one is "no arguments".
    const out: Record<string, unknown> = { name: fn.name, parameters: fn.parameters ?? { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') out.description = fn.description;
    if (typeof fn.strict === 'boolean') out.strict = fn.strict;
    return { type: 'function' as const, function: out };
  });
}

function mapToolChoice(value: unknown, provider: string): NonNullable<MistralChatRequest['tool_choice']> {
  if (value === 'auto' || value === 'none' || value === 'any') return value;
  if (value === 'required') return 'any';
  const choice = value as { type?: unknown; function?: { name?: unknown } } | null;
  if (choice && choice.type === 'function' && typeof choice.function?.name === 'string') {
    return { type: 'function', function: { name: choice.function.name } };
  }
  throw unsupportedParameter('tool_choice', provider, 'Mistral takes "auto", "none", "required" or {"type":"function","function":{"name"}}');
}

function mapPrediction(value: unknown, provider: string): MistralChatRequest['prediction'] {
  const prediction = value as { type?: unknown; content?: unknown };
  if (prediction?.type === 'content' && (typeof prediction.content === 'string' || Array.isArray(prediction.content))) {
    return { type: 'content', content: contentText(prediction.content as ChatMessage['content'], 'prediction.content', provider) };
  }
  throw unsupportedParameter('prediction', provider, 'only {"type":"content","content":...} predictions exist');
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Sampling and limit fields, with Mistral's bounds applied (see the module table). */
function samplingFields(request: ChatCompletionRequest): Partial<MistralChatRequest> {
  const out: Partial<MistralChatRequest> = {};
  const temperature = num(request.temperature);
  if (temperature !== undefined) out.temperature = Math.min(temperature, TEMPERATURE_MAX);
  const topP = num(request.top_p);
  if (topP !== undefined) out.top_p = Math.max(topP, TOP_P_MIN);
  const maxTokens = maxOutputTokens(request);
  if (maxTokens !== null) out.max_tokens = maxTokens;
  const stop = request.stop;
  if (typeof stop === 'string' || Array.isArray(stop)) out.stop = stop as string | string[];
  const seed = num(request.seed);
  if (seed !== undefined) out.random_seed = seed;
  for (const field of ['presence_penalty', 'frequency_penalty', 'n'] as const) {
    const value = num(request[field]);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/**
 * The Mistral request body for `request`, addressed to `model`, built from the allow-list.
 * Throws `GatewayError` 400 (param named) for anything Mistral cannot honour (module table).
 */
export function buildMistralRequest(request: ChatCompletionRequest, model: string, provider: string): MistralChatRequest {
  checkFields(request, provider);
  const body: MistralChatRequest = {
    model,
    messages: mistralMessages(request.messages, provider),
    stream: request.stream === true,
    ...samplingFields(request),
  };
  if (request.response_format) body.response_format = mapResponseFormat(request.response_format, provider);
  if (Array.isArray(request.tools) && request.tools.length > 0) body.tools = mapTools(request.tools as ChatTool[]);
  if (request.tool_choice !== undefined && request.tool_choice !== null) body.tool_choice = mapToolChoice(request.tool_choice, provider);
  if (typeof request.parallel_tool_calls === 'boolean') body.parallel_tool_calls = request.parallel_tool_calls;
  if (request.prediction !== undefined && request.prediction !== null) body.prediction = mapPrediction(request.prediction, provider);
  if (typeof request.safe_prompt === 'boolean') body.safe_prompt = request.safe_prompt;
  if (typeof request.prompt_cache_key === 'string') body.prompt_cache_key = request.prompt_cache_key;
  return body;
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

/** Mistral `finish_reason` → OpenAI (§7). `error` is handled by the callers; unknown values → `stop`. */
function finishReason(reason: string | null | undefined): string | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'length':
    case 'model_length':
      return 'length';
    case 'tool_calls':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

function generationFailed(provider: string): GatewayError {
  return upstreamError({ status: 502, code: 'upstream_error', message: `Provider "${provider}" stopped generating with an error (finish_reason "error"); the answer is incomplete. Retry the request.` });
}

/** Text of a Mistral content: a string, or the text chunks of a chunk array (thinking dropped). */
function contentString(content: MistralContent): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  return content.map((chunk) => (chunk?.type === 'text' && typeof chunk.text === 'string' ? chunk.text : '')).join('');
}

/** Mistral sends `arguments` as a JSON string, or (some models) as an object. */
function argumentsString(args: string | Record<string, unknown> | null | undefined): string {
  if (typeof args === 'string') return args;
  return args === undefined || args === null ? '' : JSON.stringify(args);
}

function toolCallOf(call: MistralToolCall): ChatToolCall {
  return {
    id: call.id || toolCallId(),
    type: 'function',
    function: { name: call.function?.name ?? '', arguments: argumentsString(call.function?.arguments) || '{}' },
  };
}

/** Canonical usage; Mistral's cached prompt tokens are a subset of `prompt_tokens`, as OpenAI's. */
function usageFrom(usage: MistralUsage | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  return usageOf(usage.prompt_tokens ?? 0, usage.completion_tokens ?? 0, usage.prompt_tokens_details?.cached_tokens ?? 0);
}

/** A Mistral `chat.completion` body as the canonical completion. 502 when it is not one. */
export function decodeMistralCompletion(provider: string, model: string, bodyText: string): ChatCompletion {
  const body = parseUpstreamJson<MistralCompletion | null>(provider, bodyText, 'a response');
  if (!body || !Array.isArray(body.choices)) throw malformedResponse(provider, 'a response without "choices"');
  const choices = body.choices.map((choice, i): ChatCompletionChoice => {
    if (choice.finish_reason === 'error') throw generationFailed(provider);
    const calls = (choice.message?.tool_calls ?? []).map(toolCallOf);
    const content = contentString(choice.message?.content);
    const message: ChatMessage = { role: 'assistant', content: calls.length > 0 && !content ? null : content };
    if (calls.length > 0) message.tool_calls = calls;
    return { index: choice.index ?? i, message, finish_reason: finishReason(choice.finish_reason) };
  });
  const completion: ChatCompletion = {
    id: body.id || completionId(),
    object: 'chat.completion',
    created: body.created ?? nowUnixSec(),
    model: body.model || model,
    choices,
  };
  const usage = usageFrom(body.usage);
  if (usage) completion.usage = usage;
  return completion;
}

// ---------------------------------------------------------------------------------------------
// Stream decoder
// ---------------------------------------------------------------------------------------------

/** Tool-call bookkeeping of one choice: output indexes by Mistral id and by Mistral index. */
interface ChoiceState {
  byId: Map<string, number>;
  byIndex: Map<number, number>;
  next: number;
}

/**
 * Reads Mistral's `chat.completion.chunk` events into OpenAI's: `[DONE]` ends the stream; usage (on
 * the last chunk) becomes a separate `choices: []` chunk at the end; a tool call Mistral sends whole
 * becomes a header delta (index, id, type, name, `arguments: ""`) then an arguments delta; an in-band
 * error event or `finish_reason: "error"` throws (the core ends the SSE stream with an error event).
 */
export class MistralStreamDecoder implements StreamDecoder {
  private finished = false;
  private readonly choices = new Map<number, ChoiceState>();
  private readonly fallbackId = completionId();
  private readonly fallbackCreated = nowUnixSec();
  private usage: ChatCompletionChunk | null = null;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    if (event.data === '[DONE]') {
      this.flushUsage(out);
      return true;
    }
    const chunk = parseUpstreamJson<MistralStreamChunk | null>(this.provider, event.data, 'a stream event');
    if (event.event === 'error' || chunk?.object === 'error' || chunk?.error !== undefined) {
      const { message, type, code } = parseMistralError(event.data);
      throw upstreamError({ status: 502, code: type ?? code, message: `Provider "${this.provider}" failed mid-stream${message ? `: ${message}` : '.'}` });
    }
    if (!chunk || !Array.isArray(chunk.choices)) throw malformedResponse(this.provider, 'a stream event without "choices"');
    const make = (choices: ChatCompletionChunkChoice[], usage?: Usage): ChatCompletionChunk => ({
      id: chunk.id || this.fallbackId,
      object: 'chat.completion.chunk',
      created: chunk.created ?? this.fallbackCreated,
      model: chunk.model || this.model,
      choices,
      ...(usage ? { usage } : {}),
    });
    for (const [i, choice] of chunk.choices.entries()) {
      for (const choiceOut of this.choiceDeltas(choice, i)) out.push({ chunk: make([choiceOut]), raw: null });
      // The text decoded so far (already in `out`) still reaches the client before the error event.
      if (choice.finish_reason === 'error') throw generationFailed(this.provider);
    }
    // Held until the end, so a repeated (running-total) usage still yields one usage chunk, the last.
    const usage = usageFrom(chunk.usage);
    if (usage) this.usage = make([], usage);
    return false;
  }

  finish(out: DecodedChunk[]): void {
    if (!this.finished) throw truncatedStream(this.provider);
    this.flushUsage(out);
  }

  private flushUsage(out: DecodedChunk[]): void {
    if (this.usage) out.push({ chunk: this.usage, raw: null });
    this.usage = null;
  }

  /** One upstream choice delta as OpenAI choice deltas, the finish reason on the last one (`error` is the caller's). */
  private choiceDeltas(choice: NonNullable<MistralStreamChunk['choices']>[number], position: number): ChatCompletionChunkChoice[] {
    const index = choice.index ?? position;
    const deltas: ChatCompletionChunkChoice['delta'][] = [];
    const text = contentString(choice.delta?.content);
    if (choice.delta?.role !== undefined || text) {
      const delta: ChatCompletionChunkChoice['delta'] = {};
      if (choice.delta?.role !== undefined) delta.role = 'assistant';
      if (text !== null) delta.content = text;
      deltas.push(delta);
    }
    for (const call of choice.delta?.tool_calls ?? []) deltas.push(...this.toolCallDeltas(index, call));
    const out = deltas.map((delta) => ({ index, delta, finish_reason: null as string | null }));
    const reason = choice.finish_reason === 'error' ? null : finishReason(choice.finish_reason);
    if (reason) {
      this.finished = true;
      if (out.length === 0) out.push({ index, delta: {}, finish_reason: reason });
      else out[out.length - 1]!.finish_reason = reason;
    }
    return out;
  }

  private toolCallDeltas(choiceIndex: number, call: MistralToolCall): ChatCompletionChunkChoice['delta'][] {
    let state = this.choices.get(choiceIndex);
    if (!state) this.choices.set(choiceIndex, (state = { byId: new Map(), byIndex: new Map(), next: 0 }));
    const args = argumentsString(call.function?.arguments);
    let index = call.id ? state.byId.get(call.id) : state.byIndex.get(call.index ?? 0);
    const deltas: ChatToolCallDelta[] = [];
    if (index === undefined) {
      // A new call (Mistral may number every call 0, so the id decides, not `index`).
      index = state.next++;
      const id = call.id || toolCallId();
      state.byId.set(id, index);
      deltas.push({ index, id, type: 'function', function: { name: call.function?.name ?? '', arguments: '' } });
    }
    state.byIndex.set(call.index ?? 0, index);
    if (args) deltas.push({ index, function: { arguments: args } });
    return deltas.map((delta) => ({ tool_calls: [delta] }));
  }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

interface ParsedError {
  message: string | null;
  type: string | null;
  code: string | null;
  /** The client-side field a 422 names, when it names one. */
  param: string | null;
}

interface ValidationDetail {
  loc?: Array<string | number>;
  msg?: string;
}

/** Mistral's request field → the OpenAI field the client sent. */
const CLIENT_FIELD: Record<string, string> = { random_seed: 'seed' };

/** A 422 `loc` (`["body","messages",2,"content"]`) as the client's param (`messages[2].content`). */
function detailParam(loc: Array<string | number> | undefined): string | null {
  const [first, ...rest] = (loc ?? []).filter((part, i) => !(i === 0 && part === 'body'));
  if (first === undefined) return null;
  const head = typeof first === 'string' ? CLIENT_FIELD[first] ?? first : String(first);
  return head + rest.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('');
}

function fromDetail(detail: unknown): Pick<ParsedError, 'message' | 'param'> {
  if (typeof detail === 'string') return { message: detail, param: null };
  if (!Array.isArray(detail)) return { message: null, param: null };
  const items = detail as ValidationDetail[];
  const message = items.map((d) => `${detailParam(d.loc) ?? 'body'}: ${d.msg ?? 'invalid'}`).join('; ');
  return { message: message || null, param: detailParam(items[0]?.loc) };
}

/** Mistral's `message` may be a string, a `{detail}` object, or that object JSON-encoded (§4.4). */
function fromMessage(message: unknown): Pick<ParsedError, 'message' | 'param'> {
  if (typeof message === 'string') {
    if (message.trimStart().startsWith('{')) {
      try {
        return fromMessage(JSON.parse(message));
      } catch {
        return { message, param: null };
      }
    }
    return { message, param: null };
  }
  if (message && typeof message === 'object' && 'detail' in message) return fromDetail((message as { detail: unknown }).detail);
  return { message: message === undefined || message === null ? null : JSON.stringify(message), param: null };
}

/** Reads any of Mistral's error bodies: `{object:"error",message,type,param,code}`, `{detail}`, `{message}`. */
export function parseMistralError(bodyText: string): ParsedError {
  let body: Record<string, unknown> | null;
  try {
    body = JSON.parse(bodyText) as Record<string, unknown> | null;
  } catch {
    return { message: null, type: null, code: null, param: null };
  }
  if (!body || typeof body !== 'object') return { message: null, type: null, code: null, param: null };
  const inner = body.error && typeof body.error === 'object' ? (body.error as Record<string, unknown>) : body;
  const { message, param } = inner.detail !== undefined ? fromDetail(inner.detail) : fromMessage(inner.message ?? (typeof body.error === 'string' ? body.error : undefined));
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);
  return { message, type: text(inner.type), code: text(inner.code), param };
}

/** `retry-after` (+ `-ms`) from Mistral's `retry-after` or `ratelimitbysize-reset` (seconds). */
function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const seconds = Number(headerValue(headers, 'retry-after') ?? headerValue(headers, 'ratelimitbysize-reset'));
  if (Number.isFinite(seconds) && seconds >= 0) {
    out['retry-after'] = String(Math.ceil(seconds));
    out['retry-after-ms'] = String(Math.round(seconds * 1000));
  }
  return out;
}

function isUnknownModel(status: number, parsed: ParsedError): boolean {
  if (parsed.type === 'invalid_model' || parsed.code === '1500') return status === 400 || status === 404;
  return status === 404 && /model/i.test(parsed.message ?? '');
}

/**
 * A Mistral error answer as the contract's error: 401/403 keep their status with a replaced message
 * (never echo upstream text near a credential); unknown model → 404 `model_not_found`; 422 → 400
 * `invalid_request` naming the field; 429 → 429 with `retry-after(-ms)` (`x-should-retry: false`
 * when the monthly budget is spent); 503 → 503 `overloaded`; other 5xx → 502; other 4xx keep their
 * status with `x-should-retry: false`.
 */
export function mapMistralError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const parsed = parseMistralError(bodyText);
  const says = `Provider "${provider}" answered ${status}${parsed.message ? `: ${parsed.message}` : '.'}`;
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: status === 401 ? 'upstream_authentication_error' : 'upstream_permission_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (isUnknownModel(status, parsed)) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}"${parsed.message ? ` (upstream says: ${parsed.message})` : ''}.`);
  }
  if (status === 422) return invalidRequest(says, parsed.param);
  if (status === 429) {
    const quotaSpent = headerValue(headers, 'x-ratelimitbysize-remaining-month') === '0';
    return upstreamError({
      status,
      code: quotaSpent ? 'insufficient_quota' : 'rate_limit_exceeded',
      message: says,
      headers: quotaSpent ? { 'x-should-retry': 'false' } : retryHeaders(headers),
    });
  }
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: says, headers: retryHeaders(headers) });
  if (status >= 500) return upstreamError({ status: 502, code: parsed.type ?? parsed.code, message: says });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code: parsed.type ?? parsed.code, message: says, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}

// ---------------------------------------------------------------------------------------------
// Provider
// ---------------------------------------------------------------------------------------------

export class MistralProvider extends ProviderService {
  readonly name = 'Mistral';

  /** `POST {base}/chat/completions`; throws 400 for a request Mistral cannot honour (module table). */
  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = buildMistralRequest(request, model, this.id);
    return this.postJson(credential, origin, `${basePath}/chat/completions`, body, body.stream, this.codec(model));
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapMistralError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: decodeMistralCompletion(provider, model, bodyText), raw: null }),
      createStreamDecoder: () => new MistralStreamDecoder(provider, model),
    };
  }

  /**
   * `GET {base}/models` (not paged): chat-capable models (`capabilities.completion_chat`, kept when
   * absent), `display_name` from `name`. Deprecated models stay listed: they answer until retired
   * and the list gives no retirement date. Throws `GatewayError` when the upstream fails.
   */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const url = `${credential.baseUrl.replace(/\/+$/, '')}/models`;
    const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as { data?: MistralModelCard[] } | null;
    if (!list || !Array.isArray(list.data)) throw malformedResponse(this.id, 'a model list without "data"');
    const entries: CatalogEntry[] = [];
    for (const card of list.data) {
      if (typeof card?.id !== 'string' || card.id === '' || card.capabilities?.completion_chat === false) continue;
      const entry: CatalogEntry = {
        id: card.id,
        created: typeof card.created === 'number' ? card.created : 0,
        owned_by: typeof card.owned_by === 'string' ? card.owned_by : 'mistralai',
      };
      if (typeof card.name === 'string' && card.name !== '') entry.display_name = card.name;
      entries.push(entry);
    }
    return entries;
  }
}
