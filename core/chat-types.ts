/**
 * The canonical format every provider translates to and from: OpenAI's Chat Completions
 * (request, `chat.completion`, `chat.completion.chunk`). Field names follow openai-node
 * `src/resources/chat/completions/completions.ts` (see shared/reference/provider-wire-formats.md §1).
 * Only the fields the gateway reads are typed; everything else passes through untouched.
 */

export type ChatRole = 'developer' | 'system' | 'user' | 'assistant' | 'tool' | 'function';

export interface ChatMessage {
  role: ChatRole;
  content?: unknown;
  name?: string;
  tool_calls?: unknown[];
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

/** OpenAI `CompletionUsage`. `cached_tokens` is a subset of `prompt_tokens`. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [field: string]: unknown } | null;
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
  delta: { role?: ChatRole; content?: string | null; tool_calls?: unknown[]; [field: string]: unknown };
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

/** The token counts the gateway bills and logs, taken from an upstream `Usage`. */
export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** Reads `TokenCounts` from an OpenAI-shaped usage object, tolerating missing fields. */
export function tokenCountsOf(usage: Usage): TokenCounts {
  return {
    promptTokens: usage.prompt_tokens || 0,
    completionTokens: usage.completion_tokens || 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens || 0,
  };
}
