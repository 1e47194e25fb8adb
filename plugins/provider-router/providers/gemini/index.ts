/**
 * Google Gemini Developer API upstream (v1beta): translates canonical (OpenAI) chat requests to
 * `generateContent` / `streamGenerateContent?alt=sse` and Gemini's answers, streams and errors back.
 *
 * Sources (shared/reference/provider-wire-formats.md §3 and §7):
 * - request, response, stream, usage: https://ai.google.dev/api/generate-content
 * - `Content` / `Part` shapes: https://ai.google.dev/api/caching#Content
 * - function calling, `toolConfig`: https://ai.google.dev/gemini-api/docs/function-calling
 * - thought signatures: https://ai.google.dev/gemini-api/docs/thought-signatures
 * - JSON mode / `responseJsonSchema`: https://ai.google.dev/gemini-api/docs/structured-output
 * - images and other inline media: https://ai.google.dev/gemini-api/docs/image-understanding
 * - `reasoning_effort` → thinking budget (Google's own OpenAI mapping): https://ai.google.dev/gemini-api/docs/openai
 * - model list: https://ai.google.dev/api/models#method:-models.list
 * - errors, quotas: https://ai.google.dev/gemini-api/docs/troubleshooting , https://ai.google.dev/gemini-api/docs/rate-limits
 *
 * Request decisions (every top-level OpenAI field is in exactly one of the lists below; any other field
 * is refused with a 400 naming it, since the gateway builds the upstream body field by field):
 * - mapped: `messages` (roles below), `max_completion_tokens` / `max_tokens` → `maxOutputTokens`,
 *   `temperature` (Gemini's range is 0..2 like OpenAI's, so no clamping), `top_p` → `topP`,
 *   `n` → `candidateCount`, `stop` → `stopSequences`, `seed`, `presence_penalty`, `frequency_penalty`,
 *   `tools` → `functionDeclarations` (with `parametersJsonSchema`: the `parameters` field only takes an
 *   OpenAPI subset that rejects common JSON Schema keywords; `strict` is dropped, Gemini has no such
 *   flag), `tool_choice` → `functionCallingConfig` (`allowed_tools` / custom choices are refused),
 *   `response_format` json_object / json_schema → `responseMimeType` (+ `responseJsonSchema`),
 *   `reasoning_effort` → `thinkingConfig.thinkingBudget` (none 0, minimal/low 1024, medium 8192, high 24576).
 * - dropped, they do not change the answer: `user`, `metadata`, `store`, `prompt_cache_key`,
 *   `safety_identifier` (OpenAI-side bookkeeping with no Gemini field), `stream_options` (Gemini always
 *   reports usage; the core honours `include_usage`), a message's `name` (Gemini has no participant names).
 * - accepted only at their neutral value, else refused: `logprobs`, `top_logprobs`, `logit_bias`,
 *   `parallel_tool_calls` (false cannot be enforced), `service_tier` (auto/default), `modalities` (text),
 *   `audio`, `prediction`, `web_search_options`, `functions`, `function_call`, `verbosity`.
 * - messages: system/developer → `systemInstruction` (all of them, in order: Gemini has one system
 *   prompt), user → `user`, assistant → `model` (tool calls → `functionCall` parts), consecutive tool
 *   results → one `user` content of `functionResponse` parts, named from the assistant call with that
 *   id; a string result that is a JSON object is sent as that object, anything else as `{content: text}`.
 *   Images: data URLs → `inlineData`; http(s) URLs are refused (`fileData` only takes Files-API / GCS
 *   URIs and the gateway does not fetch URLs); `image_url.detail` is dropped (Gemini has no per-image
 *   detail). `input_audio` and `file.file_data` (data URL) → `inlineData`; OpenAI file ids are refused.
 *   An assistant message with neither text nor tool calls is skipped (Gemini rejects empty contents).
 *
 * Response decisions: `thought: true` parts are reasoning summaries and are not content; other
 * non-text parts (inline images, code execution) have no Chat Completions field and are dropped.
 * Function calls carry no id → `call_…` ids are generated; a call's `thoughtSignature` (required on
 * replay by Gemini 3) is carried inside its id (`call_<hex>_sig_<base64url>`) and put back on the
 * `functionCall` part when the client replays it; signatures on text parts are optional on replay and
 * dropped. Gemini also matches results by name and order, so no ids are sent upstream.
 * A blocked prompt (HTTP 200, `promptFeedback.blockReason`, no candidates) becomes one choice with
 * empty content and `finish_reason: "content_filter"`.
 */
import type {
  ChatCompletion, ChatCompletionChoice, ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall, Usage,
} from '../../../../core/chat-types.ts';
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder, UpstreamCall } from '../../../../core/upstream-call.ts';
import { GatewayError, invalidRequest, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import {
  completionId, contentParts, contentText, createChunkBuilder, headerValue, malformedResponse,
  maxOutputTokens, nowUnixSec, parseDataUrl, parseToolArguments, parseUpstreamJson, toolCallId,
  truncatedStream, unsupportedParameter, usageOf, type ChunkBuilder,
} from '../canonical.ts';
import { ProviderService, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from '../base.ts';

// ---------------------------------------------------------------------------------------------
// Gemini wire shapes (only the fields the gateway writes or reads)

interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
}

interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  candidateCount?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: unknown;
  thinkingConfig?: { thinkingBudget: number };
}

/** The `generateContent` request body. */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: Array<{ name: string; description?: string; parametersJsonSchema?: Record<string, unknown> }> }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
}

interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
}

interface GeminiErrorStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string; violations?: Array<{ quotaId?: string }> }>;
}

/** A `GenerateContentResponse` (also each stream event), or an in-band error. */
interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: GeminiErrorStatus;
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** Fields whose only effect is OpenAI-side bookkeeping: dropped (see the module doc). */
const DROPPED = new Set(['user', 'metadata', 'store', 'prompt_cache_key', 'safety_identifier', 'stream_options']);

/** Fields the translation below reads. */
const MAPPED = new Set([
  'model', 'messages', 'stream', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'stop', 'seed',
  'presence_penalty', 'frequency_penalty', 'tools', 'tool_choice', 'response_format', 'reasoning_effort',
]);

const isAbsent = (v: unknown) => v === null || v === undefined;

/** Fields accepted only at a value that asks for nothing Gemini lacks; the reason is the 400's text. */
const NEUTRAL_ONLY: Record<string, { ok: (v: unknown) => boolean; why: string }> = {
  logprobs: { ok: (v) => isAbsent(v) || v === false, why: 'the gateway does not translate Gemini log probabilities' },
  top_logprobs: { ok: isAbsent, why: 'the gateway does not translate Gemini log probabilities' },
  logit_bias: { ok: (v) => isAbsent(v) || (typeof v === 'object' && Object.keys(v as object).length === 0), why: 'Gemini has no logit bias' },
  parallel_tool_calls: { ok: (v) => isAbsent(v) || v === true, why: 'Gemini cannot be limited to one tool call per turn' },
  service_tier: { ok: (v) => isAbsent(v) || v === 'auto' || v === 'default', why: 'Gemini has no service tiers' },
  modalities: { ok: (v) => isAbsent(v) || (Array.isArray(v) && v.every((m) => m === 'text')), why: 'only text output is translated' },
  audio: { ok: isAbsent, why: 'only text output is translated' },
  prediction: { ok: isAbsent, why: 'Gemini has no predicted outputs' },
  web_search_options: { ok: isAbsent, why: 'Google Search grounding is not exposed through this endpoint' },
  functions: { ok: isAbsent, why: 'use "tools" (the deprecated "functions" form is not translated)' },
  function_call: { ok: isAbsent, why: 'use "tool_choice" (the deprecated "function_call" form is not translated)' },
  verbosity: { ok: isAbsent, why: 'Gemini has no verbosity control' },
};

/** Thinking budgets Google's own OpenAI-compatible endpoint uses for `reasoning_effort`. */
const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

/** Marks a generated tool-call id that carries a Gemini thought signature: `call_<hex>_sig_<base64url>`. */
const SIGNED_ID = /^call_[0-9a-f]{24}_sig_([A-Za-z0-9_-]+)$/;

/** Refuses every top-level field that is neither mapped, dropped, nor at a neutral value. */
function checkParameters(request: ChatCompletionRequest, provider: string): void {
  for (const [field, value] of Object.entries(request)) {
    if (MAPPED.has(field) || DROPPED.has(field)) continue;
    const rule = NEUTRAL_ONLY[field];
    if (!rule) throw unsupportedParameter(field, provider, 'it is not a Chat Completions parameter the gateway translates for Gemini');
    if (!rule.ok(value)) throw unsupportedParameter(field, provider, rule.why);
  }
}

/** The model's resource path under the base URL; `models/` is never doubled. */
function modelPath(model: string): string {
  const path = model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
  // The id lands in the URL path: anything beyond Gemini's id alphabet could rewrite the path.
  if (!/^(models|tunedModels)\/[A-Za-z0-9._-]+$/.test(path)) {
    throw invalidRequest(`"${model}" is not a Gemini model id (letters, digits, ".", "_" and "-").`, 'model');
  }
  return path;
}

/**
 * A tool-call id for a Gemini function call, carrying its thought signature when it has one. The
 * signature (base64) is re-encoded as base64url so the id stays within `[A-Za-z0-9_-]`, the id
 * alphabet other providers accept if the conversation moves on.
 */
function encodeToolCallId(signature: string | undefined): string {
  if (!signature) return toolCallId();
  return `${toolCallId()}_sig_${signature.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** The thought signature (standard, padded base64) a tool-call id made by `encodeToolCallId` carries. */
function signatureOf(id: string): string | undefined {
  const encoded = SIGNED_ID.exec(id)?.[1];
  if (!encoded) return undefined;
  const base64 = encoded.replace(/-/g, '+').replace(/_/g, '/');
  return base64 + '='.repeat((4 - (base64.length % 4)) % 4);
}

/** One user content part as a Gemini part; `param` is `messages[i].content[j]`. */
function userPart(part: ChatContentPart, param: string, provider: string): GeminiPart {
  if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
  if (part.type === 'image_url') {
    const url = (part.image_url as { url: string }).url;
    const data = parseDataUrl(url);
    if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
    throw unsupportedParameter(`${param}.image_url`, provider,
      'only base64 data URLs are accepted (Gemini reads remote files only from its Files API or Cloud Storage, and the gateway does not fetch URLs)');
  }
  if (part.type === 'input_audio') {
    const audio = part.input_audio as { data?: unknown; format?: unknown } | undefined;
    if (typeof audio?.data === 'string' && typeof audio.format === 'string') return { inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } };
    throw invalidRequest(`"${param}.input_audio" needs "data" (base64) and "format".`, `${param}.input_audio`);
  }
  if (part.type === 'file') {
    const data = parseDataUrl(String((part.file as { file_data?: unknown } | undefined)?.file_data ?? ''));
    if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
    throw unsupportedParameter(`${param}.file`, provider, 'only "file_data" as a base64 data URL is accepted (uploaded file ids are OpenAI\'s)');
  }
  throw unsupportedParameter(param, provider, `content parts of type "${part.type}" are not translated`);
}

/** An assistant message as a `model` content: its text, then its tool calls as `functionCall` parts. */
function modelContent(message: ChatMessage, i: number, provider: string): GeminiContent {
  const parts: GeminiPart[] = [];
  const text = contentText(message.content, `messages[${i}].content`, provider);
  if (text) parts.push({ text });
  (message.tool_calls ?? []).forEach((call, j) => {
    const args = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
    const part: GeminiPart = { functionCall: { name: call.function.name, args } };
    const signature = signatureOf(call.id);
    if (signature) part.thoughtSignature = signature;
    parts.push(part);
  });
  return { role: 'model', parts };
}

/** A tool result as a `functionResponse` part, named after the assistant call it answers. */
function functionResponsePart(message: ChatMessage, i: number, toolNames: Map<string, string>, provider: string): GeminiPart {
  const name = toolNames.get(message.tool_call_id ?? '');
  if (!name) {
    throw invalidRequest(`"messages[${i}].tool_call_id" must name a tool call of an earlier assistant message.`, `messages[${i}].tool_call_id`);
  }
  const text = contentText(message.content, `messages[${i}].content`, provider);
  let response: Record<string, unknown> = { content: text };
  try {
    const parsed: unknown = JSON.parse(text);
    // Gemini wants an object; a JSON object result is passed as is so the model sees its fields.
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) response = parsed as Record<string, unknown>;
  } catch {
    // Plain text: sent wrapped.
  }
  return { functionResponse: { name, response } };
}

/** `messages` as Gemini `contents` plus the hoisted system instruction. */
function toContents(messages: ChatMessage[], provider: string): Pick<GeminiRequest, 'contents' | 'systemInstruction'> {
  const contents: GeminiContent[] = [];
  const system: Array<{ text: string }> = [];
  const toolNames = new Map<string, string>();
  let toolTurn: GeminiContent | null = null;
  messages.forEach((message, i) => {
    if (message.role !== 'tool') toolTurn = null;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push({ text: contentText(message.content, `messages[${i}].content`, provider) });
        return;
      case 'user':
        contents.push({ role: 'user', parts: contentParts(message.content).map((p, j) => userPart(p, `messages[${i}].content[${j}]`, provider)) });
        return;
      case 'assistant': {
        for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
        const content = modelContent(message, i, provider);
        // Gemini rejects a content without parts; an empty assistant turn carries nothing anyway.
        if (content.parts.length > 0) contents.push(content);
        return;
      }
      case 'tool':
        // Parallel results belong in one user turn, as Gemini answered them in one model turn.
        if (!toolTurn) contents.push((toolTurn = { role: 'user', parts: [] }));
        toolTurn.parts.push(functionResponsePart(message, i, toolNames, provider));
        return;
      default:
        throw unsupportedParameter(`messages[${i}].role`, provider, `the role "${message.role}" is deprecated; use "tool"`);
    }
  });
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}

/** `tools` and `tool_choice` as Gemini `tools` / `toolConfig`. */
function toToolFields(request: ChatCompletionRequest, provider: string): Pick<GeminiRequest, 'tools' | 'toolConfig'> {
  const tools = (request.tools as ChatTool[] | undefined) ?? [];
  const names = tools.map((t) => t.function.name);
  const choice = request.tool_choice;
  let config: NonNullable<GeminiRequest['toolConfig']>['functionCallingConfig'] | undefined;
  if (choice === 'auto') config = { mode: 'AUTO' };
  else if (choice === 'none') config = { mode: 'NONE' };
  else if (choice === 'required') config = { mode: 'ANY' };
  else if (choice && typeof choice === 'object' && (choice as { type?: unknown }).type === 'function') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== 'string' || !names.includes(name)) throw invalidRequest('"tool_choice.function.name" must name one of "tools".', 'tool_choice');
    config = { mode: 'ANY', allowedFunctionNames: [name] };
  } else if (!isAbsent(choice)) {
    throw unsupportedParameter('tool_choice', provider, 'only "auto", "none", "required" and {"type":"function"} are translated');
  }
  if (tools.length === 0) {
    if (config && config.mode !== 'NONE' && config.mode !== 'AUTO') throw invalidRequest('"tool_choice" requires "tools".', 'tool_choice');
    return {};
  }
  // `strict` has no Gemini counterpart: declarations are always schema-guided.
  const functionDeclarations = tools.map(({ function: fn }) => ({
    name: fn.name,
    ...(fn.description !== undefined && { description: fn.description }),
    ...(fn.parameters !== undefined && { parametersJsonSchema: fn.parameters }),
  }));
  return { tools: [{ functionDeclarations }], ...(config && { toolConfig: { functionCallingConfig: config } }) };
}

/** `response_format` as `responseMimeType` / `responseJsonSchema`. */
function responseFormatConfig(format: unknown, provider: string): Partial<GeminiGenerationConfig> {
  if (isAbsent(format)) return {};
  const { type, json_schema: jsonSchema } = format as { type: string; json_schema?: { schema?: unknown } };
  if (type === 'text') return {};
  if (type === 'json_object') return { responseMimeType: 'application/json' };
  if (type === 'json_schema') {
    const schema = jsonSchema?.schema;
    if (!schema || typeof schema !== 'object') throw invalidRequest('"response_format.json_schema.schema" must be a JSON Schema object.', 'response_format.json_schema.schema');
    return { responseMimeType: 'application/json', responseJsonSchema: schema };
  }
  throw unsupportedParameter('response_format.type', provider, `"${type}" is not one of text, json_object, json_schema`);
}

/** The sampling, length and format fields as `generationConfig` (undefined when none is set). */
function toGenerationConfig(request: ChatCompletionRequest, provider: string): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {};
  const maxTokens = maxOutputTokens(request);
  if (maxTokens !== null) config.maxOutputTokens = maxTokens;
  const num = (field: string) => (typeof request[field] === 'number' ? (request[field] as number) : undefined);
  config.temperature = num('temperature');
  config.topP = num('top_p');
  config.candidateCount = num('n');
  config.seed = num('seed');
  config.presencePenalty = num('presence_penalty');
  config.frequencyPenalty = num('frequency_penalty');
  const stop = request.stop;
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config.stopSequences = stop as string[];
  Object.assign(config, responseFormatConfig(request.response_format, provider));
  const effort = request.reasoning_effort;
  if (!isAbsent(effort)) {
    const budget = THINKING_BUDGET[String(effort)];
    if (budget === undefined) throw unsupportedParameter('reasoning_effort', provider, `"${String(effort)}" is not one of ${Object.keys(THINKING_BUDGET).join(', ')}`);
    config.thinkingConfig = { thinkingBudget: budget };
  }
  for (const key of Object.keys(config) as Array<keyof GeminiGenerationConfig>) if (config[key] === undefined) delete config[key];
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * The Gemini `generateContent` body for a canonical request. Throws 400 (`invalid_request`, naming
 * the parameter) for anything that cannot be honoured; see the module doc for every decision.
 */
export function toGeminiRequest(request: ChatCompletionRequest, provider: string): GeminiRequest {
  checkParameters(request, provider);
  const body: GeminiRequest = { ...toContents(request.messages, provider), ...toToolFields(request, provider) };
  const generationConfig = toGenerationConfig(request, provider);
  if (generationConfig) body.generationConfig = generationConfig;
  return body;
}

// ---------------------------------------------------------------------------------------------
// Response mapping

/** Finish reasons that mean the answer was withheld or cut by a safety / policy filter. */
const FILTERED = new Set([
  'SAFETY', 'RECITATION', 'LANGUAGE', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII',
  'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION',
]);

/**
 * Gemini `finishReason` → OpenAI `finish_reason` (reference §7). Gemini has no tool-call reason: a
 * candidate with `functionCall` parts that stopped normally finished with `tool_calls`. The function
 * call failures (MALFORMED_FUNCTION_CALL, …), OTHER and unknown reasons end the turn: `stop`.
 */
function finishReasonOf(reason: string, hasToolCalls: boolean): string {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** Canonical usage: thinking counts as completion, tool-use prompt as prompt, cached is a subset. */
function usageFromMetadata(m: GeminiUsageMetadata): Usage {
  const n = (v: number | undefined) => (typeof v === 'number' ? v : 0);
  return usageOf(
    n(m.promptTokenCount) + n(m.toolUsePromptTokenCount),
    n(m.candidatesTokenCount) + n(m.thoughtsTokenCount),
    n(m.cachedContentTokenCount),
    0,
    n(m.thoughtsTokenCount),
  );
}

/** The visible parts of a candidate: non-thought text and function calls. */
function visibleParts(candidate: GeminiCandidate): GeminiPart[] {
  const parts = candidate.content?.parts;
  return Array.isArray(parts) ? parts.filter((p) => p && p.thought !== true) : [];
}

function toolCallOf(part: GeminiPart & { functionCall: NonNullable<GeminiPart['functionCall']> }): ChatToolCall {
  return {
    id: encodeToolCallId(part.thoughtSignature),
    type: 'function',
    function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
  };
}

function hasFunctionCall(part: GeminiPart): part is GeminiPart & { functionCall: NonNullable<GeminiPart['functionCall']> } {
  return !!part.functionCall && typeof part.functionCall.name === 'string';
}

function toChoice(candidate: GeminiCandidate, position: number): ChatCompletionChoice {
  const parts = visibleParts(candidate);
  const text = parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  const toolCalls = parts.filter(hasFunctionCall).map(toolCallOf);
  const message: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: typeof candidate.index === 'number' ? candidate.index : position,
    message,
    finish_reason: finishReasonOf(candidate.finishReason ?? 'STOP', toolCalls.length > 0),
    logprobs: null,
  };
}

/** A non-streamed `GenerateContentResponse` as a `chat.completion`. Throws 502 when it is not one. */
export function toCompletion(body: GeminiResponse, model: string, provider: string): ChatCompletion {
  if (!body || typeof body !== 'object') throw malformedResponse(provider, 'a response that is not an object');
  let choices: ChatCompletionChoice[];
  if (Array.isArray(body.candidates) && body.candidates.length > 0) {
    choices = body.candidates.map(toChoice);
  } else if (body.promptFeedback?.blockReason) {
    choices = [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null }];
  } else {
    throw malformedResponse(provider, 'a response without candidates');
  }
  const completion: ChatCompletion = {
    id: body.responseId ? `chatcmpl-${body.responseId}` : completionId(),
    object: 'chat.completion',
    created: nowUnixSec(),
    model: body.modelVersion || model,
    choices,
  };
  if (body.usageMetadata) completion.usage = usageFromMetadata(body.usageMetadata);
  return completion;
}

// ---------------------------------------------------------------------------------------------
// Stream decoder

interface ChoiceState {
  started: boolean;
  toolCalls: number;
  finished: boolean;
}

/**
 * Reads `streamGenerateContent?alt=sse` events: each is a whole `GenerateContentResponse` with the
 * text delta since the previous one; function calls arrive whole; `usageMetadata` is a running total
 * (the last one wins, a chunk without it keeps the previous); there is no terminator, so `decode`
 * never ends the stream and `finish` emits the usage chunk, or throws 502 when no candidate finished.
 */
export class GeminiStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkBuilder;
  private readonly choices = new Map<number, ChoiceState>();
  private usage: Usage | null = null;
  private blocked = false;

  constructor(private readonly provider: string, model: string) {
    this.chunks = createChunkBuilder(completionId(), model);
  }

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const body = parseUpstreamJson<GeminiResponse | null>(this.provider, event.data, 'a stream event');
    if (!body || typeof body !== 'object') throw malformedResponse(this.provider, 'a stream event that is not an object');
    if (body.error) throw streamError(this.provider, body.error);
    if (body.modelVersion) this.chunks.setModel(body.modelVersion);
    if (body.usageMetadata) this.usage = usageFromMetadata(body.usageMetadata);
    if (Array.isArray(body.candidates) && body.candidates.length > 0) {
      body.candidates.forEach((candidate, position) => this.decodeCandidate(candidate, position, out));
    } else if (body.promptFeedback?.blockReason && !this.blocked) {
      this.blocked = true;
      this.push(out, 0, { role: 'assistant', content: '' }, 'content_filter');
    }
    return false;
  }

  finish(out: DecodedChunk[]): void {
    const states = [...this.choices.values()];
    const complete = this.blocked || (states.length > 0 && states.every((s) => s.finished));
    if (!complete) throw truncatedStream(this.provider);
    if (this.usage) out.push({ chunk: this.chunks.usage(this.usage), raw: null });
  }

  private decodeCandidate(candidate: GeminiCandidate, position: number, out: DecodedChunk[]): void {
    const index = typeof candidate.index === 'number' ? candidate.index : position;
    const state = this.stateOf(index);
    for (const part of visibleParts(candidate)) {
      if (hasFunctionCall(part)) {
        const call = toolCallOf(part);
        const callIndex = state.toolCalls++;
        this.push(out, index, { tool_calls: [{ index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
        this.push(out, index, { tool_calls: [{ index: callIndex, function: { arguments: call.function.arguments } }] });
      } else if (typeof part.text === 'string' && part.text !== '') {
        this.push(out, index, { content: part.text });
      }
    }
    if (candidate.finishReason && !state.finished) {
      state.finished = true;
      this.push(out, index, {}, finishReasonOf(candidate.finishReason, state.toolCalls > 0));
    }
  }

  private stateOf(index: number): ChoiceState {
    let state = this.choices.get(index);
    if (!state) this.choices.set(index, (state = { started: false, toolCalls: 0, finished: false }));
    return state;
  }

  /** One chunk for choice `index`; the first delta of each choice carries the role, as OpenAI's does. */
  private push(out: DecodedChunk[], index: number, delta: Record<string, unknown>, finishReason: string | null = null): void {
    const state = this.stateOf(index);
    const fullDelta = state.started ? delta : { role: 'assistant', ...delta };
    state.started = true;
    const chunk = this.chunks.delta(fullDelta, finishReason);
    chunk.choices[0]!.index = index;
    out.push({ chunk, raw: null });
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

function parseErrorBody(bodyText: string): GeminiErrorStatus {
  try {
    const body = JSON.parse(bodyText) as { error?: GeminiErrorStatus } | Array<{ error?: GeminiErrorStatus }> | null;
    // Some Google front ends wrap the error in a one-element array.
    const error = Array.isArray(body) ? body[0]?.error : body?.error;
    return error && typeof error === 'object' ? error : {};
  } catch {
    return {};
  }
}

const detailOf = (error: GeminiErrorStatus, type: string) => error.details?.find((d) => d?.['@type'] === `type.googleapis.com/google.rpc.${type}`);

/** `RetryInfo.retryDelay` (a protobuf Duration such as "12s" or "10.6s") in ms, or null. */
function retryDelayMs(error: GeminiErrorStatus): number | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(detailOf(error, 'RetryInfo')?.retryDelay ?? '');
  return match ? Math.ceil(Number(match[1]) * 1000) : null;
}

function retryHeaders(error: GeminiErrorStatus, headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const ms = retryDelayMs(error);
  if (ms !== null) return { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) };
  const value = headerValue(headers, 'retry-after');
  return value ? { 'retry-after': value } : {};
}

/** Key problems come back as 400 INVALID_ARGUMENT with an `ErrorInfo` reason `API_KEY_…`. */
function isCredentialError(status: number, error: GeminiErrorStatus): boolean {
  if (status === 401 || status === 403) return true;
  return (error.details ?? []).some((d) => typeof d?.reason === 'string' && d.reason.startsWith('API_KEY_'));
}

/**
 * A Gemini error answer as the contract's error: 4xx keep their status (`x-should-retry: false` but
 * for 408/409/429), 5xx become 502, 503 UNAVAILABLE → 503 `overloaded`, 504 → 504 `upstream_timeout`;
 * 429 passes `RetryInfo.retryDelay` as `retry-after` / `retry-after-ms`, and a per-day quota is
 * `insufficient_quota` with `x-should-retry: false`; key errors get a replaced message (Google's can
 * quote the key); a 404 is the model → `model_not_found`. The code is Gemini's `status`, lowercased.
 */
export function mapGeminiError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const error = parseErrorBody(bodyText);
  const message = typeof error.message === 'string' && error.message ? error.message : null;
  const code = typeof error.status === 'string' && error.status ? error.status.toLowerCase() : null;
  if (isCredentialError(status, error)) {
    return upstreamError({
      status,
      code: status === 403 ? 'upstream_permission_error' : 'upstream_authentication_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (status === 404) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}"${message ? ` (upstream says: ${message})` : ''}.`);
  }
  const text = `Provider "${provider}" answered ${status}${message ? `: ${message}` : '.'}`;
  if (status === 429) {
    const perDay = (detailOf(error, 'QuotaFailure')?.violations ?? []).some((v) => /PerDay/i.test(v?.quotaId ?? ''));
    if (perDay) return upstreamError({ status, code: 'insufficient_quota', message: text, headers: { 'x-should-retry': 'false' } });
    return upstreamError({ status, code: 'rate_limit_exceeded', message: text, headers: retryHeaders(error, headers) });
  }
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: text, headers: retryHeaders(error, headers) });
  if (status === 504) return upstreamError({ status: 504, code: 'upstream_timeout', message: text });
  if (status >= 500) return upstreamError({ status: 502, code, message: text });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code, message: text, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}

/** An in-band stream error event (`data: {"error":{...}}`), after the SSE headers went out. */
function streamError(provider: string, error: GeminiErrorStatus): GatewayError {
  const status = typeof error.code === 'number' ? error.code : 500;
  const message = typeof error.message === 'string' && error.message ? `: ${error.message}` : '.';
  const code = status === 503 ? 'overloaded' : typeof error.status === 'string' ? error.status.toLowerCase() : null;
  return upstreamError({ status: status >= 500 && status !== 503 ? 502 : status, code, message: `Provider "${provider}" failed mid-stream${message}` });
}

// ---------------------------------------------------------------------------------------------
// Provider

/** Pages of the model list followed at most: a bound against a list that never ends. */
const MAX_MODEL_PAGES = 20;

interface GeminiModelList {
  models?: Array<{ name?: unknown; displayName?: unknown; supportedGenerationMethods?: unknown }>;
  nextPageToken?: unknown;
}

/**
 * Gemini Developer API provider. `buildChatCall` throws 400 (`invalid_request`, naming the
 * parameter) for requests it cannot honour; the codec maps answers per the module doc.
 */
export class GeminiProvider extends ProviderService {
  readonly name = 'Google Gemini';

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const path = modelPath(model);
    const body = toGeminiRequest(request, this.id);
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const stream = request.stream === true;
    return this.postJson(credential, origin, `${basePath}/${path}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body, stream, this.codec(path.slice(path.indexOf('/') + 1)));
  }

  /** The key goes in a header, never in `?key=`: query strings end up in access logs. */
  protected override authHeaders(credential: Credential): Record<string, string> {
    return { 'x-goog-api-key': credential.apiKey };
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapGeminiError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: toCompletion(parseUpstreamJson(provider, bodyText, 'a response'), model, provider), raw: null }),
      createStreamDecoder: () => new GeminiStreamDecoder(provider, model),
    };
  }

  /** `GET {base}/models`, following `nextPageToken`; keeps the models that serve `generateContent`. */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const base = credential.baseUrl.replace(/\/+$/, '');
    const entries: CatalogEntry[] = [];
    let pageToken = '';
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const url = `${base}/models?pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
      const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as GeminiModelList | null;
      if (!list || typeof list !== 'object' || (list.models !== undefined && !Array.isArray(list.models))) {
        throw malformedResponse(this.id, 'a model list without "models"');
      }
      for (const m of list.models ?? []) {
        if (typeof m?.name !== 'string' || !Array.isArray(m.supportedGenerationMethods) || !m.supportedGenerationMethods.includes('generateContent')) continue;
        const entry: CatalogEntry = { id: m.name.replace(/^models\//, ''), created: 0, owned_by: 'google' };
        if (typeof m.displayName === 'string' && m.displayName) entry.display_name = m.displayName;
        entries.push(entry);
      }
      if (typeof list.nextPageToken !== 'string' || !list.nextPageToken) break;
      pageToken = list.nextPageToken;
    }
    return entries;
  }
}
