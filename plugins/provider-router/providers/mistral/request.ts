/**
 * Mistral request mapping: the canonical (OpenAI) chat request → the `POST /chat/completions` body.
 * Mistral's request schema is strict (an unknown field is a 422 `extra_forbidden`), so the body is
 * built from the explicit allow-list below, never by spreading the request.
 *
 * Sources (docs/provider-wire-formats.md §4.1):
 * - API reference https://docs.mistral.ai/api/ and `@mistralai/mistralai`
 *   `src/models/components/{chatcompletionrequest,toolchoiceenum,responseformats,imageurlchunk,toolmessage,usermessage}.ts`
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
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool } from '../../../../core/canonical/chat-types.ts';
import { invalidRequest } from '../../../../core/errors.ts';
import { contentParts, contentText, maxOutputTokens, parseDataUrl, unsupportedParameter } from '../canonical.ts';

// Mistral request shapes (only the fields Tollgate fills)

type MistralUserChunk = { type: 'text'; text: string } | { type: 'image_url'; image_url: string | { url: string; detail: string } };

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
