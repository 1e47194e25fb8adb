/**
 * The pieces of a Responses API answer shared by the JSON answer and the stream: ids, output items,
 * usage, the status a finish reason gives, and the `response` object itself (the answer, and the
 * snapshot every lifecycle event carries).
 *
 * Sources: openai-node `src/resources/responses/responses.ts` (`Response`, `ResponseOutputMessage`,
 * `ResponseFunctionToolCall`, `ResponseReasoningItem`, `ResponseUsage`, `Response.IncompleteDetails`),
 * https://platform.openai.com/docs/api-reference/responses/object .
 */
import { splitName } from './namespaces.ts';
import { randomBytes } from 'node:crypto';
import type { TokenCounts } from '../../canonical/chat-types.ts';
import type { Exchange } from '../../exchange.ts';
import type { OutputFunctionCall, OutputItem, OutputMessage, OutputReasoning, OutputText, ResponseCreateParams, ResponseObject, ResponseStatus, ResponseUsage } from './types.ts';

/** `prefix` + 24 hex digits, the form of OpenAI's `resp_…`, `msg_…`, `fc_…`, `rs_…` (and `call_…`) ids. */
export function responsesId(prefix: 'resp_' | 'msg_' | 'fc_' | 'rs_' | 'call_'): string {
  return prefix + randomBytes(12).toString('hex');
}

/** How an answer ended, as `status` and `incomplete_details`. */
export interface Outcome {
  status: 'completed' | 'incomplete';
  incomplete_details: ResponseObject['incomplete_details'];
}

/** Canonical `finish_reason` → outcome: length → incomplete (max_output_tokens), content_filter → incomplete (content_filter). */
export function outcomeOf(finishReason: string | null | undefined): Outcome {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/**
 * Canonical counts → Responses usage. Like OpenAI's chat usage (and unlike Anthropic's),
 * `input_tokens` includes the cached tokens, which `input_tokens_details.cached_tokens` repeats.
 * Zeros when nothing was counted: the SDKs read `usage` from every finished response.
 */
export function responseUsageOf(counts: TokenCounts | null, reasoningTokens: number): ResponseUsage {
  const input = counts?.promptTokens ?? 0;
  const output = counts?.completionTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: counts?.cachedTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: input + output,
  };
}

export const outputText = (text: string): OutputText => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export function messageItem(id: string, texts: string[], status: OutputMessage['status']): OutputMessage {
  return { id, type: 'message', status, role: 'assistant', content: texts.map(outputText) };
}

export function functionCallItem(
  id: string, callId: string, name: string, args: string, status: OutputFunctionCall['status'], namespaces: readonly string[] = [],
): OutputFunctionCall {
  const split = splitName(name, namespaces);
  const item: OutputFunctionCall = { id, type: 'function_call', status, arguments: args, call_id: callId, name: split.name };
  if (split.namespace) item.namespace = split.namespace;
  return item;
}

export function reasoningItem(id: string, text: string): OutputReasoning {
  return { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] };
}

/** Every `output_text` of the message items, joined (the SDKs' `output_text`). */
function outputTextOf(output: readonly OutputItem[]): string {
  let text = '';
  for (const item of output) if (item.type === 'message') for (const part of item.content) text += part.text;
  return text;
}

/** What a `response` object says beyond the request's echo. */
export interface ResponseFields {
  id: string;
  model: string;
  status: ResponseStatus;
  output: OutputItem[];
  usage: ResponseUsage | null;
  incomplete_details?: ResponseObject['incomplete_details'];
  error?: ResponseObject['error'];
}

/**
 * A `response` object: the answer's fields, and the request's settings echoed from the client's body
 * as OpenAI echoes them (`instructions`, `tools`, `tool_choice`, `temperature`, ...), with OpenAI's
 * defaults where the body has none.
 */
export function responseObject(ex: Exchange, fields: ResponseFields): ResponseObject {
  const body = (ex.clientBody ?? {}) as Partial<ResponseCreateParams>;
  const finished = fields.status !== 'in_progress';
  const response: ResponseObject = {
    id: fields.id,
    object: 'response',
    created_at: Math.floor(ex.startedAtMs / 1000),
    status: fields.status,
    error: fields.error ?? null,
    incomplete_details: fields.incomplete_details ?? null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: fields.model,
    output: fields.output,
    output_text: outputTextOf(fields.output),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    // Whether the gateway keeps the response (OpenAI's default: true); see plugins/response-store.
    store: body.store !== false,
    temperature: body.temperature ?? null,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    usage: fields.usage,
    metadata: body.metadata ?? {},
  };
  if (finished) response.completed_at = fields.status === 'completed' ? Math.floor(Date.now() / 1000) : null;
  return response;
}
