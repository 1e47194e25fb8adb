/**
 * Anthropic response mapping: a non-streamed Messages API `message` → canonical `chat.completion`,
 * plus the stop-reason and usage mappings the stream decoder shares.
 *
 * Sources (docs/provider-wire-formats.md §2.3, §7): https://platform.claude.com/docs/en/api/messages
 * (content blocks, `stop_reason`, usage with `cache_read_input_tokens` / `cache_creation_input_tokens`).
 *
 * Response: text blocks are concatenated; `tool_use` → `tool_calls`; `thinking` and
 * `redacted_thinking` blocks are dropped (thinking cannot be requested through this API, and their
 * signatures could not be sent back anyway); server-tool blocks are dropped likewise. Usage:
 * `prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens` (Anthropic's
 * `input_tokens` excludes both), `cached_tokens` = cache reads, `cache_write_tokens` = cache writes.
 */
import type { ChatCompletion, ChatMessage, ChatToolCall, Usage } from '../../../../core/canonical/chat-types.ts';
import { malformedResponse, nowUnixSec, usageOf } from '../canonical.ts';

// Anthropic response shapes (only what the gateway reads)

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export type ResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: string; [field: string]: unknown };

export interface AnthropicMessage {
  id: string;
  type: 'message';
  model: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  usage?: AnthropicUsage;
}

/** Anthropic `stop_reason` → OpenAI `finish_reason` (reference §7); unknown future reasons → `stop`. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop', stop_sequence: 'stop', pause_turn: 'stop',
  max_tokens: 'length', model_context_window_exceeded: 'length',
  tool_use: 'tool_calls', refusal: 'content_filter',
};

export function finishReasonOf(stopReason: string): string {
  return FINISH_REASONS[stopReason] ?? 'stop';
}

const count = (value: number | null | undefined) => (typeof value === 'number' && value > 0 ? value : 0);

/** Anthropic usage → canonical usage; cache reads and writes are added back into `prompt_tokens`. */
export function usageFromAnthropic(usage: AnthropicUsage): Usage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  return usageOf(count(usage.input_tokens) + cacheRead + cacheWrite, count(usage.output_tokens), cacheRead, cacheWrite);
}

/** A Messages API `message` → `chat.completion`. Throws 502 when it is not one. */
export function toCompletion(message: AnthropicMessage, provider: string): ChatCompletion {
  if (!message || message.type !== 'message' || !Array.isArray(message.content)) {
    throw malformedResponse(provider, 'a response that is not a message');
  }
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += (block as { text: string }).text;
    else if (block.type === 'tool_use') {
      const use = block as { id: string; name: string; input: unknown };
      toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    }
  }
  const reply: ChatMessage = { role: 'assistant', content: toolCalls.length > 0 && text === '' ? null : text };
  if (toolCalls.length > 0) reply.tool_calls = toolCalls;
  return {
    id: message.id,
    object: 'chat.completion',
    created: nowUnixSec(),
    model: message.model,
    choices: [{ index: 0, message: reply, finish_reason: finishReasonOf(message.stop_reason ?? 'end_turn') }],
    usage: usageFromAnthropic(message.usage ?? {}),
  };
}
