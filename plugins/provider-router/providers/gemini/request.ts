/**
 * Gemini request mapping: the canonical (OpenAI) chat request → the `generateContent` body.
 *
 * Sources (docs/provider-wire-formats.md §3.2):
 * - request: https://ai.google.dev/api/generate-content
 * - `Content` / `Part` shapes: https://ai.google.dev/api/caching#Content
 * - function calling, `toolConfig`: https://ai.google.dev/gemini-api/docs/function-calling
 * - JSON mode / `responseJsonSchema`: https://ai.google.dev/gemini-api/docs/structured-output
 * - images and other inline media: https://ai.google.dev/gemini-api/docs/image-understanding
 * - `reasoning_effort` → thinking budget (Google's own OpenAI mapping): https://ai.google.dev/gemini-api/docs/openai
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
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool } from '../../../../core/canonical/chat-types.ts';
import { invalidRequest } from '../../../../core/errors.ts';
import { contentParts, contentText, maxOutputTokens, parseDataUrl, parseToolArguments, unsupportedParameter } from '../canonical.ts';
import { signatureOf } from './tool-call-id.ts';

// Gemini request shapes (only the fields the gateway writes; `GeminiPart` is also read back)

export interface GeminiPart {
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
  logit_bias: { ok: (v) => isAbsent(v) || (typeof v === 'object' && Object.keys(v).length === 0), why: 'Gemini has no logit bias' },
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


/** Refuses every top-level field that is neither mapped, dropped, nor at a neutral value. */
function checkParameters(request: ChatCompletionRequest, provider: string): void {
  for (const [field, value] of Object.entries(request)) {
    if (MAPPED.has(field) || DROPPED.has(field)) continue;
    const rule = NEUTRAL_ONLY[field];
    if (!rule) throw unsupportedParameter(field, provider, 'it is not a Chat Completions parameter the gateway translates for Gemini');
    if (!rule.ok(value)) throw unsupportedParameter(field, provider, rule.why);
  }
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
  const num = (field: string) => (typeof request[field] === 'number' ? request[field] : undefined);
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
  const body: GeminiRequest = Object.assign(toContents(request.messages, provider), toToolFields(request, provider));
  const generationConfig = toGenerationConfig(request, provider);
  if (generationConfig) body.generationConfig = generationConfig;
  return body;
}
