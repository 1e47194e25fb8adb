/**
 * Mistral stream decoding: `chat.completion.chunk` SSE events → canonical chunks, ending on `[DONE]`.
 * Sources: docs/provider-wire-formats.md §4.2 (usage always on the final chunk; tool
 * calls usually whole in one delta), mistralai/client-python#40.
 */
import type { ChatCompletionChunk, ChatCompletionChunkChoice, ChatToolCallDelta, Usage } from '../../../../core/canonical/chat-types.ts';
import type { DecodedChunk, FramedEvent, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { upstreamError } from '../../../../core/errors.ts';
import { completionId, malformedResponse, nowUnixSec, parseUpstreamJson, toolCallId, truncatedStream } from '../canonical.ts';
import { generationFailed, parseMistralError } from './errors.ts';
import { argumentsString, contentString, finishReason, usageFrom, type MistralContent, type MistralToolCall, type MistralUsage } from './response.ts';

interface MistralStreamChunk {
  id?: string;
  created?: number;
  model?: string;
  choices?: Array<{ index?: number; delta?: { role?: string; content?: MistralContent; tool_calls?: MistralToolCall[] | null }; finish_reason?: string | null }>;
  usage?: MistralUsage | null;
  object?: string;
  error?: unknown;
}

/** Tool-call bookkeeping of one choice: output indexes by Mistral id and by Mistral index. */
interface ChoiceState {
  byId: Map<string, number>;
  byIndex: Map<number, number>;
  next: number;
}

/**
 * Reads Mistral's `chat.completion.chunk` events into OpenAI's: `[DONE]` ends the stream; usage (on
 * the last chunk) becomes a separate `choices: []` chunk at the end; a tool call Mistral sends whole
 * becomes a header delta (index, id, type, name, `arguments: ""`) then an arguments delta; an in-band
 * error event or `finish_reason: "error"` throws (the core ends the SSE stream with an error event).
 */
export class MistralStreamDecoder implements StreamDecoder {
  private finished = false;
  private readonly choices = new Map<number, ChoiceState>();
  private readonly fallbackId = completionId();
  private readonly fallbackCreated = nowUnixSec();
  private usage: ChatCompletionChunk | null = null;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    if (event.data === '[DONE]') {
      this.flushUsage(out);
      return true;
    }
    const chunk = parseUpstreamJson<MistralStreamChunk | null>(this.provider, event.data, 'a stream event');
    if (event.event === 'error' || chunk?.object === 'error' || chunk?.error !== undefined) {
      const { message, type, code } = parseMistralError(event.data);
      throw upstreamError({ status: 502, code: type ?? code, message: `Provider "${this.provider}" failed mid-stream${message ? `: ${message}` : '.'}` });
    }
    if (!chunk || !Array.isArray(chunk.choices)) throw malformedResponse(this.provider, 'a stream event without "choices"');
    const make = (choices: ChatCompletionChunkChoice[], usage?: Usage): ChatCompletionChunk => ({
      id: chunk.id || this.fallbackId,
      object: 'chat.completion.chunk',
      created: chunk.created ?? this.fallbackCreated,
      model: chunk.model || this.model,
      choices,
      ...(usage ? { usage } : {}),
    });
    for (const [i, choice] of chunk.choices.entries()) {
      for (const choiceOut of this.choiceDeltas(choice, i)) out.push({ chunk: make([choiceOut]), raw: null });
      // The text decoded so far (already in `out`) still reaches the client before the error event.
      if (choice.finish_reason === 'error') throw generationFailed(this.provider);
    }
    // Held until the end, so a repeated (running-total) usage still yields one usage chunk, the last.
    const usage = usageFrom(chunk.usage);
    if (usage) this.usage = make([], usage);
    return false;
  }

  finish(out: DecodedChunk[]): void {
    if (!this.finished) throw truncatedStream(this.provider);
    this.flushUsage(out);
  }

  private flushUsage(out: DecodedChunk[]): void {
    if (this.usage) out.push({ chunk: this.usage, raw: null });
    this.usage = null;
  }

  /** One upstream choice delta as OpenAI choice deltas, the finish reason on the last one (`error` is the caller's). */
  private choiceDeltas(choice: NonNullable<MistralStreamChunk['choices']>[number], position: number): ChatCompletionChunkChoice[] {
    const index = choice.index ?? position;
    const deltas: ChatCompletionChunkChoice['delta'][] = [];
    const text = contentString(choice.delta?.content);
    if (choice.delta?.role !== undefined || text) {
      const delta: ChatCompletionChunkChoice['delta'] = {};
      if (choice.delta?.role !== undefined) delta.role = 'assistant';
      if (text !== null) delta.content = text;
      deltas.push(delta);
    }
    for (const call of choice.delta?.tool_calls ?? []) deltas.push(...this.toolCallDeltas(index, call));
    const out = deltas.map((delta) => ({ index, delta, finish_reason: null as string | null }));
    const reason = choice.finish_reason === 'error' ? null : finishReason(choice.finish_reason);
    if (reason) {
      this.finished = true;
      if (out.length === 0) out.push({ index, delta: {}, finish_reason: reason });
      else out[out.length - 1]!.finish_reason = reason;
    }
    return out;
  }

  private toolCallDeltas(choiceIndex: number, call: MistralToolCall): ChatCompletionChunkChoice['delta'][] {
    let state = this.choices.get(choiceIndex);
    if (!state) this.choices.set(choiceIndex, (state = { byId: new Map(), byIndex: new Map(), next: 0 }));
    const args = argumentsString(call.function?.arguments);
    let index = call.id ? state.byId.get(call.id) : state.byIndex.get(call.index ?? 0);
    const deltas: ChatToolCallDelta[] = [];
    if (index === undefined) {
      // A new call (Mistral may number every call 0, so the id decides, not `index`).
      index = state.next++;
      const id = call.id || toolCallId();
      state.byId.set(id, index);
      deltas.push({ index, id, type: 'function', function: { name: call.function?.name ?? '', arguments: '' } });
    }
    state.byIndex.set(call.index ?? 0, index);
    if (args) deltas.push({ index, function: { arguments: args } });
    return deltas.map((delta) => ({ tool_calls: [delta] }));
  }
}
