/**
 * Ollama response mapping: a non-streamed `/api/chat` answer → canonical `chat.completion`, plus the
 * finish-reason, usage, time and tool-call readers the stream decoder shares.
 *
 * Sources (docs/provider-wire-formats.md §5.2, §7): https://docs.ollama.com/api/chat ,
 * ollama-js `src/interfaces.ts` (`ChatResponse`).
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
import type { ChatCompletion, ChatMessage, ChatToolCall, Usage } from '../../../../core/canonical/chat-types.ts';
import { completionId, malformedResponse, nowUnixSec, parseUpstreamJson, toolCallId, usageOf } from '../canonical.ts';
import { inBandError } from './errors.ts';

// Ollama response shapes (ollama-js src/interfaces.ts)

/** A tool call as Ollama returns it; newer versions add `id` and `function.index`. */
export interface OllamaResponseToolCall {
  id?: unknown;
  function?: { index?: unknown; name?: unknown; arguments?: unknown };
}

/** A non-streamed answer, or one NDJSON line of a stream (the last has `done: true` and the counts). */
export interface OllamaChatResponse {
  model?: string;
  created_at?: string;
  message?: { role?: string; content?: string; thinking?: string; tool_calls?: OllamaResponseToolCall[] };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: unknown;
}

/** `done_reason` → `finish_reason` (reference §7): tool calls win over `stop`, `length` wins over both. */
export function finishReason(doneReason: string | undefined, hadToolCalls: boolean): string {
  if (doneReason === 'length') return 'length';
  return hadToolCalls ? 'tool_calls' : 'stop';
}

/** The counts of a final object as canonical usage, or null when Ollama reported neither. */
export function usageFrom(line: OllamaChatResponse): Usage | null {
  const prompt = typeof line.prompt_eval_count === 'number' ? line.prompt_eval_count : null;
  const completion = typeof line.eval_count === 'number' ? line.eval_count : null;
  if (prompt === null && completion === null) return null;
  return usageOf(prompt ?? 0, completion ?? 0);
}

/** `created_at` (RFC 3339, nanoseconds) as unix seconds; now when missing or unreadable. */
export function createdFrom(createdAt: unknown): number {
  const ms = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : nowUnixSec();
}

/** Ollama tool calls as OpenAI ones: an id generated unless Ollama sent one, arguments as a JSON string. */
export function toOpenAIToolCalls(calls: OllamaResponseToolCall[], provider: string): ChatToolCall[] {
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
