/**
 * Mistral response mapping: a non-streamed `chat.completion` body → the canonical completion, plus
 * the finish-reason, content, tool-call and usage readers the stream decoder shares.
 *
 * Sources (docs/provider-wire-formats.md §4.2, §7): `@mistralai/mistralai`
 * `src/models/components/{chatcompletionchoice,completionresponsestreamchoice,usageinfo}.ts`;
 * prompt caching https://docs.mistral.ai/studio-api/conversations/advanced/prompt-caching (cached
 * reads in `usage.prompt_tokens_details.cached_tokens`).
 *
 * Answers: `finish_reason` `model_length` → `length`, `error` → a 502 `upstream_error` (in a stream:
 * the final SSE error event), since the answer is cut short and `stop` would pass it off as complete.
 * Content given as chunks keeps its text chunks; `thinking` chunks are dropped (OpenAI's shape has no
 * place for them; their tokens are still in `completion_tokens`).
 */
import type { ChatCompletion, ChatCompletionChoice, ChatMessage, ChatToolCall, Usage } from '../../../../core/canonical/chat-types.ts';
import { completionId, malformedResponse, nowUnixSec, parseUpstreamJson, toolCallId, usageOf } from '../canonical.ts';
import { generationFailed } from './errors.ts';

// Mistral response shapes (only the fields Tollgate reads)

export interface MistralToolCall {
  id?: string;
  type?: string;
  index?: number;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

export type MistralContent = string | Array<{ type?: string; text?: string }> | null | undefined;

export interface MistralUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export interface MistralCompletion {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; message?: { content?: MistralContent; tool_calls?: MistralToolCall[] | null }; finish_reason?: string | null }>;
  usage?: MistralUsage | null;
}

/** Mistral `finish_reason` → OpenAI (§7). `error` is handled by the callers; unknown values → `stop`. */
export function finishReason(reason: string | null | undefined): string | null {
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
/** Text of a Mistral content: a string, or the text chunks of a chunk array (thinking dropped). */
export function contentString(content: MistralContent): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  return content.map((chunk) => (chunk?.type === 'text' && typeof chunk.text === 'string' ? chunk.text : '')).join('');
}

/** Mistral sends `arguments` as a JSON string, or (some models) as an object. */
export function argumentsString(args: string | Record<string, unknown> | null | undefined): string {
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
export function usageFrom(usage: MistralUsage | null | undefined): Usage | undefined {
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
