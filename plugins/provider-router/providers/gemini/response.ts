/**
 * Gemini response mapping: a non-streamed `GenerateContentResponse` → canonical `chat.completion`,
 * plus the finish-reason, usage and part readers the stream decoder shares.
 *
 * Sources (docs/provider-wire-formats.md §3.3, §7): https://ai.google.dev/api/generate-content
 * (candidates, `finishReason`, `promptFeedback`, `usageMetadata`).
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
import type { ChatCompletion, ChatCompletionChoice, ChatMessage, ChatToolCall, Usage } from '../../../../core/canonical/chat-types.ts';
import { completionId, malformedResponse, nowUnixSec, usageOf } from '../canonical.ts';
import type { GeminiErrorStatus } from './errors.ts';
import type { GeminiPart } from './request.ts';
import { encodeToolCallId } from './tool-call-id.ts';

// Gemini response shapes (only the fields the gateway reads)

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
}


/** A `GenerateContentResponse` (also each stream event), or an in-band error. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: GeminiErrorStatus;
}

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
export function finishReasonOf(reason: string, hasToolCalls: boolean): string {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** Canonical usage: thinking counts as completion, tool-use prompt as prompt, cached is a subset. */
export function usageFromMetadata(m: GeminiUsageMetadata): Usage {
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
export function visibleParts(candidate: GeminiCandidate): GeminiPart[] {
  const parts = candidate.content?.parts;
  return Array.isArray(parts) ? parts.filter((p) => p && p.thought !== true) : [];
}

export function toolCallOf(part: GeminiPart & { functionCall: NonNullable<GeminiPart['functionCall']> }): ChatToolCall {
  return {
    id: encodeToolCallId(part.thoughtSignature),
    type: 'function',
    function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
  };
}

export function hasFunctionCall(part: GeminiPart): part is GeminiPart & { functionCall: NonNullable<GeminiPart['functionCall']> } {
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
