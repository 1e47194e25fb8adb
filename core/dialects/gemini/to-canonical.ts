/**
 * A validated Gemini `generateContent` request → the canonical (OpenAI Chat Completions) request that
 * plugins read and translating providers send. The opposite direction of the Gemini provider's
 * request mapping (docs/provider-wire-formats.md §3, read right to left). A native Gemini upstream
 * never sees this: it receives the client's own body.
 *
 * Sources: https://ai.google.dev/api/generate-content , https://ai.google.dev/api/caching#Content ,
 * https://ai.google.dev/gemini-api/docs/function-calling , https://ai.google.dev/gemini-api/docs/structured-output ,
 * https://ai.google.dev/gemini-api/docs/thinking , https://platform.openai.com/docs/api-reference/chat/create .
 *
 * | Gemini | canonical (OpenAI chat) |
 * |---|---|
 * | model (the path's `{model}`) | `model` |
 * | `systemInstruction` text parts / string | a leading system message |
 * | `contents[i]` role `user` / `model` | `user` / `assistant` messages |
 * | `text` parts | `content` (one → a string, several → text parts) |
 * | `thought: true` parts, `thoughtSignature` | dropped (Gemini-only replay) |
 * | `inlineData` `image/*` | `image_url` part with a `data:` URL |
 * | `functionCall {id?, name, args}` | `tool_calls[{id, function:{name, arguments: JSON}}]`; no id → `call_<turn>_<part>` |
 * | `functionResponse {id?, name, response}` | a `tool` message (`JSON.stringify(response)`), before the turn's other parts; no id → the oldest unanswered call of that name |
 * | `tools[].functionDeclarations` `parametersJsonSchema` / `parameters` | function tools; `parameters` types lower-cased (`OBJECT` → `object`) |
 * | `toolConfig.functionCallingConfig` AUTO / ANY / NONE, `allowedFunctionNames` | `tool_choice` auto / required (one name: that function) / none; tools outside the names left out |
 * | `generationConfig` temperature, topP, topK, maxOutputTokens, stopSequences, seed, presencePenalty, frequencyPenalty | temperature, top_p, top_k, max_tokens, stop, seed, presence_penalty, frequency_penalty |
 * | `responseMimeType: application/json` (+ `responseJsonSchema` / `responseSchema`, types lower-cased) | `response_format` json_object / json_schema |
 * | `thinkingConfig.thinkingBudget` (≤1024 low, ≤8192 medium, more high; 0 and -1 nothing) / `thinkingLevel` | `reasoning_effort` |
 * | streamGenerateContent | `stream: true`, `stream_options.include_usage` |
 *
 * What the canonical form cannot carry (`fileData` and other part kinds, non-image inline data,
 * Gemini's own tools, `candidateCount` > 1, `cachedContent`, other response types) is left out and the
 * first such field is returned as `untranslatable`, which the router throws only when it must
 * translate. `safetySettings` are dropped: no other provider has them.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from '../../canonical/chat-types.ts';
import { invalidRequest, type GatewayError } from '../../errors.ts';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GenerateContentRequest } from './types.ts';

/** The canonical request, and the first part it could not carry (null when it carries everything). */
export interface CanonicalMapping {
  request: ChatCompletionRequest;
  untranslatable: GatewayError | null;
}

/** The state of one mapping: the 400s of what was left out, and calls waiting for their response. */
interface MappingState {
  errors: GatewayError[];
  /** Ids of calls made and not yet answered, by function name, oldest first. */
  pending: Map<string, string[]>;
}

const cannot = (param: string, why: string): GatewayError =>
  invalidRequest(`Invalid value for "${param}": ${why} cannot be translated to the gateway's canonical request.`, param);

/** Maps a validated body for `model`; `stream` for streamGenerateContent. Throws a 400 for a malformed part. */
export function toCanonical(body: GenerateContentRequest, model: string, stream: boolean): CanonicalMapping {
  const state: MappingState = { errors: [], pending: new Map() };
  const messages: ChatMessage[] = [];
  const system = systemTexts(body.systemInstruction);
  if (system.length > 0) messages.push({ role: 'system', content: textContent(system) });
  (body.contents ?? []).forEach((content, i) => messages.push(...turnMessages(content, i, state)));
  const request: ChatCompletionRequest = { model, messages };
  Object.assign(request, toolParams(body, state), generationParams(body.generationConfig ?? {}, state));
  if (body.cachedContent !== undefined) state.errors.push(cannot('cachedContent', 'Gemini\'s cached contents'));
  if (stream) {
    request.stream = true;
    // Gemini streams always carry usageMetadata; the canonical stream must carry usage too.
    request.stream_options = { include_usage: true };
  }
  return { request, untranslatable: state.errors[0] ?? null };
}

function textContent(texts: string[]): string | ChatContentPart[] {
  return texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text }));
}

function systemTexts(system: GenerateContentRequest['systemInstruction']): string[] {
  if (typeof system === 'string') return system === '' ? [] : [system];
  if (!system || !Array.isArray(system.parts)) return [];
  return system.parts.map((part) => part.text).filter((text): text is string => typeof text === 'string' && text !== '');
}

/** One turn → its messages: a model turn one assistant message, a user turn its tool results then its content. */
function turnMessages(content: GeminiContent, i: number, state: MappingState): ChatMessage[] {
  const role = content.role ?? 'user';
  if (role !== 'user' && role !== 'model') {
    throw invalidRequest(`Invalid value for "contents[${i}].role": "${role}"; use "user" or "model".`, `contents[${i}].role`);
  }
  return role === 'model' ? modelMessages(content.parts, i, state) : userMessages(content.parts, i, state);
}

function modelMessages(parts: GeminiPart[], i: number, state: MappingState): ChatMessage[] {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  parts.forEach((part, j) => {
    if (part.thought === true) return;
    if (typeof part.text === 'string') texts.push(part.text);
    else if (part.functionCall) {
      const id = part.functionCall.id || `call_${i}_${j}`;
      toolCalls.push({ id, type: 'function', function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) } });
      const ids = state.pending.get(part.functionCall.name) ?? [];
      state.pending.set(part.functionCall.name, [...ids, id]);
    } else state.errors.push(cannot(`contents[${i}].parts[${j}]`, `a "${partKind(part)}" part in a model turn`));
  });
  const nonEmpty = texts.filter((text) => text !== '');
  if (nonEmpty.length === 0 && toolCalls.length === 0) return [];
  const message: ChatMessage = { role: 'assistant', content: nonEmpty.length === 0 ? null : textContent(nonEmpty) };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return [message];
}

function userMessages(parts: GeminiPart[], i: number, state: MappingState): ChatMessage[] {
  const toolMessages: ChatMessage[] = [];
  const content: ChatContentPart[] = [];
  parts.forEach((part, j) => {
    const at = `contents[${i}].parts[${j}]`;
    if (part.thought === true) return;
    if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else if (part.inlineData) {
      const { mimeType, data } = part.inlineData;
      if (mimeType.startsWith('image/')) content.push({ type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } });
      else state.errors.push(cannot(`${at}.inlineData.mimeType`, `"${mimeType}" inline data (only images are)`));
    } else if (part.functionResponse) {
      const { id, name, response } = part.functionResponse;
      toolMessages.push({ role: 'tool', tool_call_id: id || takePending(state, name, at), content: JSON.stringify(response ?? {}) });
    } else state.errors.push(cannot(at, `a "${partKind(part)}" part`));
  });
  if (content.length === 0) return toolMessages;
  const onlyText = content.every((part) => part.type === 'text');
  return [...toolMessages, { role: 'user', content: onlyText ? textContent(content.map((part) => (part as { text: string }).text)) : content }];
}

/** The id of the oldest unanswered call of `name`: a response without an id answers it. */
function takePending(state: MappingState, name: string, param: string): string {
  const ids = state.pending.get(name);
  const id = ids?.shift();
  if (!id) throw invalidRequest(`"${param}.functionResponse" answers no earlier functionCall named "${name}".`, `${param}.functionResponse`);
  return id;
}

function partKind(part: GeminiPart): string {
  return Object.keys(part).find((key) => key !== 'thought' && key !== 'thoughtSignature') ?? 'empty';
}

/** `tools` and `toolConfig` → function tools and `tool_choice`. */
function toolParams(body: GenerateContentRequest, state: MappingState): Partial<ChatCompletionRequest> {
  let tools: ChatTool[] = [];
  (body.tools ?? []).forEach((tool, i) => {
    for (const key of Object.keys(tool)) {
      if (key !== 'functionDeclarations') state.errors.push(cannot(`tools[${i}].${key}`, `Gemini's own "${key}" tool`));
    }
    (tool.functionDeclarations ?? []).forEach((decl) => {
      const fn: ChatTool['function'] = { name: decl.name, parameters: decl.parametersJsonSchema ?? (decl.parameters ? openApiToJsonSchema(decl.parameters) : { type: 'object', properties: {} }) };
      if (decl.description) fn.description = decl.description;
      tools.push({ type: 'function', function: fn });
    });
  });
  const config = body.toolConfig?.functionCallingConfig;
  const allowed = config?.allowedFunctionNames;
  if (allowed && allowed.length > 0) tools = tools.filter((tool) => allowed.includes(tool.function.name));
  const out: Partial<ChatCompletionRequest> = tools.length > 0 ? { tools } : {};
  switch (config?.mode) {
    case undefined:
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
      if (tools.length > 0 && config?.mode) out.tool_choice = 'auto';
      break;
    case 'ANY':
      out.tool_choice = allowed?.length === 1 ? { type: 'function', function: { name: allowed[0]! } } : 'required';
      break;
    case 'NONE':
      out.tool_choice = 'none';
      break;
    default:
      state.errors.push(cannot('toolConfig.functionCallingConfig.mode', `"${String(config?.mode)}"`));
  }
  return out;
}

/** Keys of Gemini's OpenAPI-subset schema with no JSON Schema meaning. */
const OPENAPI_ONLY = new Set(['nullable', 'propertyOrdering', 'example']);

/** Gemini's OpenAPI-subset schema (`type: "OBJECT"`, `nullable`) → JSON Schema. */
export function openApiToJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (OPENAPI_ONLY.has(key)) continue;
    if (key === 'type' && typeof value === 'string') out.type = schema.nullable === true ? [value.toLowerCase(), 'null'] : value.toLowerCase();
    else if ((key === 'items' || key === 'not') && isObject(value)) out[key] = openApiToJsonSchema(value);
    else if ((key === 'properties' || key === '$defs') && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, isObject(sub) ? openApiToJsonSchema(sub) : sub]));
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      out[key] = value.map((sub: unknown) => (isObject(sub) ? openApiToJsonSchema(sub) : sub));
    } else out[key] = value;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Same-meaning numeric fields: Gemini name → canonical name. */
const SAME_MEANING: ReadonlyArray<[keyof GeminiGenerationConfig, string]> = [
  ['temperature', 'temperature'], ['topP', 'top_p'], ['topK', 'top_k'], ['maxOutputTokens', 'max_tokens'],
  ['seed', 'seed'], ['presencePenalty', 'presence_penalty'], ['frequencyPenalty', 'frequency_penalty'],
];

function generationParams(config: GeminiGenerationConfig, state: MappingState): Partial<ChatCompletionRequest> {
  const out: Partial<ChatCompletionRequest> = {};
  for (const [from, to] of SAME_MEANING) if (typeof config[from] === 'number') out[to] = config[from];
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0) out.stop = config.stopSequences;
  if (typeof config.candidateCount === 'number' && config.candidateCount > 1) {
    state.errors.push(cannot('generationConfig.candidateCount', 'more than one candidate'));
  }
  const format = responseFormat(config, state);
  if (format) out.response_format = format;
  const effort = reasoningEffort(config.thinkingConfig);
  if (effort) out.reasoning_effort = effort;
  for (const key of ['speechConfig', 'imageConfig', 'responseLogprobs', 'cachedContent']) {
    if (config[key] !== undefined && config[key] !== false) state.errors.push(cannot(`generationConfig.${key}`, `"${key}"`));
  }
  const modalities = config.responseModalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'TEXT')) {
    state.errors.push(cannot('generationConfig.responseModalities', 'an answer in other modalities than TEXT'));
  }
  return out;
}

function responseFormat(config: GeminiGenerationConfig, state: MappingState): Record<string, unknown> | null {
  const mime = config.responseMimeType;
  if (mime === undefined || mime === 'text/plain') return null;
  if (mime !== 'application/json') {
    state.errors.push(cannot('generationConfig.responseMimeType', `"${mime}"`));
    return null;
  }
  // Gemini also takes its OpenAPI type names in `responseJsonSchema` (Gemini CLI's model router sends
  // `"type": "OBJECT"`), which other providers refuse: both fields are read the same way.
  const given = config.responseJsonSchema ?? config.responseSchema;
  const schema = isObject(given) ? openApiToJsonSchema(given) : null;
  return schema ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
}

const LEVELS: Readonly<Record<string, string>> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' };
/** Budgets Google's own OpenAI mapping uses per effort (https://ai.google.dev/gemini-api/docs/openai), read back. */
const LOW_BUDGET_MAX = 1024;
const MEDIUM_BUDGET_MAX = 8192;

function reasoningEffort(thinking: GeminiGenerationConfig['thinkingConfig']): string | null {
  if (!thinking) return null;
  if (typeof thinking.thinkingLevel === 'string') return LEVELS[thinking.thinkingLevel.toLowerCase()] ?? null;
  const budget = thinking.thinkingBudget;
  // 0 (off) and -1 (dynamic) have no effort of their own: the target's default applies.
  if (typeof budget !== 'number' || budget <= 0) return null;
  if (budget <= LOW_BUDGET_MAX) return 'low';
  return budget <= MEDIUM_BUDGET_MAX ? 'medium' : 'high';
}
