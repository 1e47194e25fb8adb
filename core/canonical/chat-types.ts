/**
 * The canonical format every provider translates to and from: OpenAI's Chat Completions
 * (request, `chat.completion`, `chat.completion.chunk`). Field names follow openai-node
 * `src/resources/chat/completions/completions.ts` (see docs/provider-wire-formats.md §1).
 * Only the fields the gateway reads are typed; everything else passes through untouched.
 */

export type ChatRole = 'developer' | 'system' | 'user' | 'assistant' | 'tool' | 'function';

/** A part of a message's `content` array. Parts of other types (audio, file) pass through untyped. */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: string; [field: string]: unknown };

/** An assistant's tool call; `function.arguments` is a JSON string. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A streamed tool-call fragment (`delta.tool_calls[]`): `index` identifies the call across chunks. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** A function tool the model may call; `parameters` is a JSON Schema object. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export interface ChatMessage {
  role: ChatRole;
  /** A string, an array of `ChatContentPart`s, or null (assistant messages with tool calls). */
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [field: string]: unknown;
}

/** `POST /v1/chat/completions` body, as validated by `chatCompletionRequestSchema`. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null; [field: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  [field: string]: unknown;
}

/**
 * OpenAI `CompletionUsage`. `cached_tokens` (cache reads) and `cache_write_tokens` (tokens written to
 * a provider's prompt cache, billed at its cache-write rate; OpenRouter's name) are subsets of
 * `prompt_tokens`.
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; [field: string]: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: number; [field: string]: unknown } | null;
  [field: string]: unknown;
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatMessage;
  finish_reason: string | null;
  [field: string]: unknown;
}

/** A non-streamed response, `object: "chat.completion"`. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage?: Usage | null;
  [field: string]: unknown;
}

export interface ChatCompletionChunkChoice {
  index: number;
  delta: { role?: ChatRole; content?: string | null; tool_calls?: ChatToolCallDelta[]; [field: string]: unknown };
  finish_reason: string | null;
  [field: string]: unknown;
}

/** One streamed event, `object: "chat.completion.chunk"`. The usage-only chunk has `choices: []`. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  usage?: Usage | null;
  [field: string]: unknown;
}

/** The output-token cap a client asked for: `max_completion_tokens`, else `max_tokens`, else null. */
export function maxOutputTokens(request: ChatCompletionRequest): number | null {
  return request.max_completion_tokens ?? request.max_tokens ?? null;
}

/**
 * The token counts the gateway bills and logs, taken from an upstream `Usage`. `cachedTokens` (cache
 * reads) and `cacheWriteTokens` are parts of `promptTokens`, never added to it.
 */
export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
}

/**
 * The most tokens one field of one request's usage may report: 10,000,000 (50× the largest context
 * window sold today). A larger count is a broken or hostile upstream, and billing it would overflow
 * the integer cost arithmetic (`cost.ts`, `price-bounds.ts`).
 */
export const MAX_REPORTED_TOKENS = 10_000_000;

/** The fields of a `Usage` that are billed, by their canonical path, and how to read each. */
const BILLED_FIELDS: ReadonlyArray<[string, (usage: Usage) => unknown]> = [
  ['prompt_tokens', (u) => u.prompt_tokens],
  ['completion_tokens', (u) => u.completion_tokens],
  ['prompt_tokens_details.cached_tokens', (u) => u.prompt_tokens_details?.cached_tokens],
  ['prompt_tokens_details.cache_write_tokens', (u) => u.prompt_tokens_details?.cache_write_tokens],
];

/**
 * The first billed field of an upstream's usage report that is present but not a token count (an
 * integer from 0 to `MAX_REPORTED_TOKENS`), with its value; null when the report is sane. Absent and
 * null fields count as 0. Every provider's usage reaches the gateway through this check
 * (`tokenCountsOf`, called by the proxy for translated and passed-through answers alike).
 */
export function invalidUsageField(usage: Usage): { field: string; value: unknown } | null {
  for (const [field, read] of BILLED_FIELDS) {
    const value = read(usage);
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_REPORTED_TOKENS) return { field, value };
  }
  return null;
}

/**
 * Reads `TokenCounts` from an OpenAI-shaped usage object, missing fields as 0. Null when a field is
 * not a sane count (`invalidUsageField`): the caller treats the report as missing and counts locally.
 */
export function tokenCountsOf(usage: Usage): TokenCounts | null {
  if (invalidUsageField(usage)) return null;
  return {
    promptTokens: usage.prompt_tokens || 0,
    completionTokens: usage.completion_tokens || 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens || 0,
    cacheWriteTokens: usage.prompt_tokens_details?.cache_write_tokens || 0,
  };
}

/**
 * The reasoning text of a canonical message or delta: `reasoning_content` (DeepSeek, vLLM, the
 * translating providers) or `reasoning` (OpenRouter, Ollama's OpenAI mode); '' when there is none.
 */
export function reasoningOf(message: ChatMessage | ChatCompletionChunkChoice['delta']): string {
  const text = message.reasoning_content ?? message.reasoning;
  return typeof text === 'string' ? text : '';
}

/**
 * The texts of a canonical message's content (a string, or text parts) followed by its refusal's
 * text, empty ones left out: what a dialect without a refusal field shows as the answer's text.
 */
export function messageTexts(message: ChatMessage): string[] {
  const texts: string[] = [];
  if (typeof message.content === 'string') texts.push(message.content);
  else if (Array.isArray(message.content)) {
    for (const part of message.content) if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  if (typeof message.refusal === 'string') texts.push(message.refusal);
  return texts.filter((text) => text !== '');
}

/**
 * A chat request with its output limit lowered: `max_completion_tokens` when the client used it (the
 * field reasoning models need), and `max_tokens` when it used that or neither.
 */
export function withChatOutputCap<T extends Readonly<Record<string, unknown>>>(request: T, tokens: number): T {
  const capped: Record<string, unknown> = Object.assign({}, request);
  if (request.max_completion_tokens != null) capped.max_completion_tokens = tokens;
  if (request.max_tokens != null || request.max_completion_tokens == null) capped.max_tokens = tokens;
  return capped as T;
}
