/**
 * Rendering canonical answers as OpenAI Responses: a `chat.completion` becomes a `response` object, a
 * stream of `chat.completion.chunk`s becomes the named SSE events of a Responses stream, an error the
 * `error` and `response.failed` events. Used when a translating provider answered; a native OpenAI
 * upstream's bytes are relayed unchanged and only `error` is used.
 *
 * Sources: openai-node `src/resources/responses/responses.ts` (`Response`, `ResponseStreamEvent` and
 * each event's fields) and `src/lib/responses/ResponseAccumulator.ts` (how the SDK rebuilds the
 * response from the events: it is the check these events are written against);
 * https://platform.openai.com/docs/api-reference/responses-streaming ; the Vercel AI SDK's recorded
 * OpenAI streams (`packages/openai/src/responses/__fixtures__/openai-error.1.chunks.txt`).
 *
 * - Output items: reasoning text (`reasoning_content` / `reasoning`) → a `reasoning` item whose one
 *   summary part holds it; text (and a refusal's text) → a `message` item with `output_text`; each
 *   tool call → a `function_call` item whose `call_id` is the canonical tool call id. Ids: `resp_`,
 *   `msg_`, `fc_`, `rs_` + 24 hex digits.
 * - Status: finish_reason length → `incomplete` with `incomplete_details.reason` "max_output_tokens",
 *   content_filter → `incomplete` ("content_filter"), anything else → `completed`.
 * - Usage: `ex.usage` (the upstream's count or the gateway's estimate), else the completion's own;
 *   reasoning tokens from the upstream's `completion_tokens_details` when it sent them.
 * - Stream: `response.created` and `response.in_progress` on the first chunk; then one item at a time
 *   in arrival order (the open item is closed before another opens, so reasoning, which upstreams send
 *   first, comes first): `output_item.added`, its part's `added`, the deltas, and on closing the
 *   `done` events with the full text and `output_item.done`. Tool calls are keyed by canonical
 *   `index`; a late fragment of a call already closed still goes out as a delta at that call's
 *   `output_index` (the SDK accumulates deltas by index) and counts in the final response. `end()`
 *   closes the open item and sends `response.completed`, or `response.incomplete` when the answer was
 *   cut (the event OpenAI sends; Codex reports it as an error instead of taking a truncated turn),
 *   with every item and the final usage. Every event carries `sequence_number`, 0, 1, 2, ...
 * - A stream that fails after its headers were sent ends as OpenAI's own streams do: an `error` event
 *   and then `response.failed` (status `failed`, `error: {code, message}`, the items so far). The
 *   `error` event carries the fields openai-node types (`code`, `message`, `param`) AND the nested
 *   `error` object OpenAI actually sends: openai-node's stream raises `APIError` on an event with an
 *   `error` field (nothing in it raises on `response.failed`), the Vercel AI SDK reads either form,
 *   and Codex fails the turn on `response.failed`. The codes are the gateway's own (e.g.
 *   `rate_limit_exceeded`, which Codex retries, `upstream_timeout`).
 */
import { declaredNamespaces, splitName } from './namespaces.ts';
import { messageTexts, reasoningOf, tokenCountsOf } from '../../canonical/chat-types.ts';
import type { GatewayError } from '../../errors.ts';
import type { Exchange } from '../../exchange.ts';
import type { DecodedChunk, DecodedResponse } from '../../upstream/upstream-call.ts';
import type { ResponseRenderer } from '../dialect.ts';
import {
  functionCallItem, messageItem, outcomeOf, outputText, reasoningItem, responseObject, responsesId, responseUsageOf,
} from './response-object.ts';
import type { OutputFunctionCall, OutputItem, OutputMessage, OutputReasoning, ResponseErrorEvent, ResponseObject, ResponseStatus } from './types.ts';

class OpenAIResponsesRenderer implements ResponseRenderer {
  private readonly responseId = responsesId('resp_');
  private sequence = 0;
  private started = false;
  private servedModel = '';
  /** The output items in order, as they stand (mutated as deltas arrive; serialized at each event). */
  private readonly output: OutputItem[] = [];
  /** The output index of the item still taking deltas, if any. */
  private open: number | null = null;
  /** Canonical tool-call index to the output index of its `function_call` item. */
  private readonly toolItems = new Map<number, number>();
  private finishReason: string | null = null;
  private reasoningTokens = 0;
  /** The `response` object `completion()` or `end()` rendered (`finalAnswer`). */
  private final: ResponseObject | undefined;

  /** The namespaces the request declared, to split flattened call names back (`namespaces.ts`). */
  private readonly namespaces: readonly string[];

  constructor(private readonly ex: Exchange) {
    this.namespaces = declaredNamespaces(ex.clientBody);
  }

  private model(fromUpstream?: string): string {
    return fromUpstream || this.ex.modelServed || this.ex.target?.model || this.ex.request?.model || '';
  }

  completion({ completion }: DecodedResponse): string {
    const choice = completion.choices[0];
    const outcome = outcomeOf(choice?.finish_reason);
    const output: OutputItem[] = [];
    if (choice) {
      const reasoning = reasoningOf(choice.message);
      if (reasoning) output.push(reasoningItem(responsesId('rs_'), reasoning));
      const texts = messageTexts(choice.message);
      const calls = choice.message.tool_calls ?? [];
      // An answer with neither text nor calls is still one (empty) message, as OpenAI sends it.
      if (texts.length > 0 || calls.length === 0) output.push(messageItem(responsesId('msg_'), texts.length > 0 ? texts : [''], outcome.status));
      for (const call of calls) {
        output.push(functionCallItem(responsesId('fc_'), call.id || responsesId('call_'), call.function.name, call.function.arguments ?? '', 'completed', this.namespaces));
      }
    }
    // ex.usage is the upstream's count (or the gateway's estimate when it sent none); see core/proxy/proxy.ts.
    const counts = this.ex.usage ?? (completion.usage ? tokenCountsOf(completion.usage) : null);
    const reasoningTokens = completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0;
    this.final = responseObject(this.ex, {
      id: this.responseId, model: this.model(completion.model), status: outcome.status, output,
      usage: responseUsageOf(counts, reasoningTokens), incomplete_details: outcome.incomplete_details,
    });
    return JSON.stringify(this.final);
  }

  chunk({ chunk }: DecodedChunk): string {
    const reasoningTokens = chunk.usage?.completion_tokens_details?.reasoning_tokens;
    if (typeof reasoningTokens === 'number') this.reasoningTokens = reasoningTokens;
    // A usage-only chunk: its counts are already in ex.usage and go out in response.completed.
    if (chunk.choices.length === 0) return '';
    let out = this.start(chunk.model);
    for (const choice of chunk.choices) {
      // The Responses API has one answer; choices beyond the first (n > 1) have nowhere to go.
      if (choice.index !== 0) continue;
      const { delta } = choice;
      const reasoning = reasoningOf(delta);
      if (reasoning) out += this.reasoningDelta(reasoning);
      if (typeof delta.content === 'string' && delta.content) out += this.textDelta(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal) out += this.textDelta(delta.refusal);
      for (const call of delta.tool_calls ?? []) out += this.toolCall(call.index, call.id, call.function?.name, call.function?.arguments);
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  end(): string {
    const outcome = outcomeOf(this.finishReason);
    let out = this.start() + this.close();
    const response = this.snapshot(outcome.status, { incomplete_details: outcome.incomplete_details });
    this.final = response;
    out += this.event(outcome.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    return out;
  }

  finalAnswer(): ResponseObject | undefined {
    return this.final;
  }

  error(err: GatewayError): string {
    let out = this.start();
    const open = this.open === null ? null : this.output[this.open];
    if (open && 'status' in open) open.status = 'incomplete';
    const error: Omit<ResponseErrorEvent, 'type'> = {
      code: err.code, message: err.message, param: err.param,
      error: { type: err.type, code: err.code, message: err.message, param: err.param },
    };
    out += this.event('error', error);
    out += this.event('response.failed', { response: this.snapshot('failed', { error: { code: err.code, message: err.message } }) });
    return out;
  }

  /** One SSE event: `event:` carries the same name as `data.type`, then the next sequence number. */
  private event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }

  /** The `response` object as it stands: no output and no usage while in progress. */
  private snapshot(status: ResponseStatus, extra: { incomplete_details?: ReturnType<typeof outcomeOf>['incomplete_details']; error?: { code: string; message: string } } = {}) {
    const inProgress = status === 'in_progress';
    return responseObject(this.ex, {
      id: this.responseId, model: this.model(this.servedModel), status, output: inProgress ? [] : this.output,
      usage: inProgress ? null : responseUsageOf(this.ex.usage, this.reasoningTokens), ...extra,
    });
  }

  /** `response.created` and `response.in_progress`, once. */
  private start(model?: string): string {
    if (this.started) return '';
    this.started = true;
    if (model) this.servedModel = model;
    const response = this.snapshot('in_progress');
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  /** Adds an item (closing the open one first) and announces it. */
  private add(item: OutputItem): string {
    const out = this.close();
    this.open = this.output.length;
    this.output.push(item);
    return out + this.event('response.output_item.added', { output_index: this.open, item });
  }

  /** The `done` events of the open item, if any. */
  private close(): string {
    if (this.open === null) return '';
    const index = this.open;
    this.open = null;
    const item = this.output[index]!;
    let out = '';
    const id = item.id;
    if (item.type === 'message') {
      item.status = outcomeOf(this.finishReason).status;
      const part = item.content[0]!;
      out += this.event('response.output_text.done', { item_id: id, output_index: index, content_index: 0, text: part.text, logprobs: [] });
      out += this.event('response.content_part.done', { item_id: id, output_index: index, content_index: 0, part });
    } else if (item.type === 'reasoning') {
      const part = item.summary[0]!;
      out += this.event('response.reasoning_summary_text.done', { item_id: id, output_index: index, summary_index: 0, text: part.text });
      out += this.event('response.reasoning_summary_part.done', { item_id: id, output_index: index, summary_index: 0, part });
    } else {
      item.status = 'completed';
      out += this.event('response.function_call_arguments.done', { item_id: id, output_index: index, name: item.name, arguments: item.arguments });
    }
    return out + this.event('response.output_item.done', { output_index: index, item });
  }

  /** A text delta, in the open message when there is one, else in a new message item. */
  private textDelta(delta: string): string {
    let out = '';
    let item = this.openItem('message');
    if (!item) {
      item = { id: responsesId('msg_'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      out += this.add(item);
      const part = outputText('');
      out += this.event('response.content_part.added', { item_id: item.id, output_index: this.open, content_index: 0, part });
      item.content.push(part);
    }
    item.content[0]!.text += delta;
    return out + this.event('response.output_text.delta', { item_id: item.id, output_index: this.open, content_index: 0, delta, logprobs: [] });
  }

  /** A reasoning delta, in the open reasoning item when there is one, else in a new one. */
  private reasoningDelta(delta: string): string {
    let out = '';
    let item = this.openItem('reasoning');
    if (!item) {
      item = reasoningItem(responsesId('rs_'), '');
      out += this.add(item);
      const part = { type: 'summary_text' as const, text: '' };
      out += this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index: this.open, summary_index: 0, part });
      item.summary.push(part);
    }
    item.summary[0]!.text += delta;
    return out + this.event('response.reasoning_summary_text.delta', { item_id: item.id, output_index: this.open, summary_index: 0, delta });
  }

  /** A tool-call fragment: the first of a call (by canonical `index`) adds its `function_call` item. */
  private toolCall(toolIndex: number, id: string | undefined, name: string | undefined, args: string | undefined): string {
    let out = '';
    let index = this.toolItems.get(toolIndex);
    if (index === undefined) {
      out += this.add(functionCallItem(responsesId('fc_'), id || responsesId('call_'), name ?? '', '', 'in_progress', this.namespaces));
      index = this.open!;
      this.toolItems.set(toolIndex, index);
    }
    const item = this.output[index] as OutputFunctionCall;
    if (name && !item.name) Object.assign(item, splitName(name, this.namespaces));
    if (!args) return out;
    item.arguments += args;
    return out + this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: args });
  }

  /** The open item when it is of `type`. */
  private openItem<T extends 'message' | 'reasoning'>(type: T): (T extends 'message' ? OutputMessage : OutputReasoning) | null {
    const item = this.open === null ? null : this.output[this.open];
    return item?.type === type ? (item as T extends 'message' ? OutputMessage : OutputReasoning) : null;
  }
}

/** A renderer for one exchange's answer in the Responses API's shapes. */
export function createOpenAIResponsesRenderer(ex: Exchange): ResponseRenderer {
  return new OpenAIResponsesRenderer(ex);
}
