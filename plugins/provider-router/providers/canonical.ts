/**
 * Readers and builders of the canonical (OpenAI) shapes, shared by the providers that translate to a
 * native wire format. Nothing here knows a provider: each provider file decides what to call.
 */
import { randomBytes } from 'node:crypto';
import type {
  ChatCompletionChunk, ChatCompletionChunkChoice, ChatContentPart, ChatMessage, Usage,
} from '../../../core/canonical/chat-types.ts';
import { GatewayError, invalidRequest, upstreamError } from '../../../core/errors.ts';

/** Response headers as undici gives them. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** A header's (first) value, by lowercase name. */
export function headerValue(headers: UpstreamHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export { maxOutputTokens } from '../../../core/canonical/chat-types.ts';

/** `chatcmpl-` + 24 random hex characters, for providers whose answers carry no usable id. */
export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

/** `call_` + 24 random hex characters, for tool calls an upstream returns without an id. */
export function toolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** Unix seconds now, for `created`. */
export function nowUnixSec(): number {
  return Math.floor(Date.now() / 1000);
}

/** A message's content as parts: a string becomes one text part; null/undefined become none. */
export function contentParts(content: ChatMessage['content']): ChatContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content;
}

/**
 * A message's content as plain text (system prompts, tool results). Text parts are joined with a
 * newline; any other part is refused with a 400 naming it, since dropping it would change the prompt.
 */
export function contentText(content: ChatMessage['content'], param: string, provider: string): string {
  if (typeof content === 'string') return content;
  const parts = contentParts(content);
  return parts
    .map((part, i) => {
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      throw unsupportedParameter(`${param}[${i}]`, provider, `only text parts are allowed here, not "${part.type}"`);
    })
    .join('\n');
}

/** A data URL's media type and base64 payload, or null when `url` is not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const match = /^data:([^;,]+)(?:;[^;,=]+=[^;,]*)*;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!.toLowerCase(), data: match[2]! } : null;
}

/**
 * A tool call's `arguments` JSON string as an object (the shape native APIs want). Empty = `{}`.
 * Throws 400 naming `param` when it is not a JSON object.
 */
export function parseToolArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw invalidRequest(`"${param}" must be a JSON object encoded as a string; it is not valid JSON.`, param);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest(`"${param}" must be a JSON object encoded as a string.`, param);
  }
  return parsed as Record<string, unknown>;
}

/** 400 for a parameter this provider cannot honour (never forwarded to make the upstream fail). */
export function unsupportedParameter(param: string, provider: string, why: string): GatewayError {
  return invalidRequest(`Provider "${provider}" does not support "${param}": ${why}.`, param);
}

/** 502 for an upstream answer that is not what its API documents. */
export function malformedResponse(provider: string, what: string): GatewayError {
  return upstreamError({ status: 502, code: 'upstream_malformed_response', message: `Provider "${provider}" sent ${what}.` });
}

/** 502 for a stream that ended without its terminator or a finish reason. */
export function truncatedStream(provider: string): GatewayError {
  return upstreamError({ status: 502, code: 'upstream_stream_truncated', message: `Provider "${provider}" ended the stream before the answer was complete.` });
}

/** Parses an upstream JSON text, throwing `malformedResponse` (502) when it is not JSON. */
export function parseUpstreamJson<T>(provider: string, text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw malformedResponse(provider, `${what} that is not JSON`);
  }
}

/** A canonical `Usage` from counts; `cachedTokens`/`cacheWriteTokens` are subsets of `promptTokens`. */
export function usageOf(promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0, reasoningTokens?: number): Usage {
  const usage: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cachedTokens || cacheWriteTokens) {
    usage.prompt_tokens_details = { cached_tokens: cachedTokens };
    if (cacheWriteTokens) usage.prompt_tokens_details.cache_write_tokens = cacheWriteTokens;
  }
  if (reasoningTokens !== undefined) usage.completion_tokens_details = { reasoning_tokens: reasoningTokens };
  return usage;
}

/** Builds the chunks of one translated stream, all sharing `id`, `created` and `model`. */
export interface ChunkBuilder {
  /** A chunk with one choice (index 0). */
  delta(delta: ChatCompletionChunkChoice['delta'], finishReason?: string | null): ChatCompletionChunk;
  /** The usage-only chunk (`choices: []`) that ends an OpenAI stream when usage was asked for. */
  usage(usage: Usage): ChatCompletionChunk;
  /** Updates the model (a native stream may name it only after the first event). */
  setModel(model: string): void;
}

export function createChunkBuilder(id: string, model: string, created = nowUnixSec()): ChunkBuilder {
  let currentModel = model;
  return {
    delta(delta, finishReason = null) {
      return { id, object: 'chat.completion.chunk', created, model: currentModel, choices: [{ index: 0, delta, finish_reason: finishReason }] };
    },
    usage(usage) {
      return { id, object: 'chat.completion.chunk', created, model: currentModel, choices: [], usage };
    },
    setModel(next) {
      currentModel = next;
    },
  };
}
