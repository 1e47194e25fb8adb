/**
 * Gemini stream decoding: `streamGenerateContent?alt=sse` events → canonical `chat.completion.chunk`s.
 * Source: https://ai.google.dev/api/generate-content (streamed responses), docs/provider-wire-formats.md §3.4.
 */
import type { Usage } from '../../../../core/canonical/chat-types.ts';
import type { DecodedChunk, FramedEvent, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { completionId, createChunkBuilder, malformedResponse, parseUpstreamJson, truncatedStream, type ChunkBuilder } from '../canonical.ts';
import { streamError } from './errors.ts';
import {
  finishReasonOf, hasFunctionCall, toolCallOf, usageFromMetadata, visibleParts, type GeminiCandidate, type GeminiResponse,
} from './response.ts';

interface ChoiceState {
  started: boolean;
  toolCalls: number;
  finished: boolean;
}

/**
 * Reads `streamGenerateContent?alt=sse` events: each is a whole `GenerateContentResponse` with the
 * text delta since the previous one; function calls arrive whole; `usageMetadata` is a running total
 * (the last one wins, a chunk without it keeps the previous); there is no terminator, so `decode`
 * never ends the stream and `finish` emits the usage chunk, or throws 502 when no candidate finished.
 */
export class GeminiStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkBuilder;
  private readonly choices = new Map<number, ChoiceState>();
  private usage: Usage | null = null;
  private blocked = false;

  constructor(private readonly provider: string, private readonly model: string) {
    this.chunks = createChunkBuilder(completionId(), model);
  }

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const body = parseUpstreamJson<GeminiResponse | null>(this.provider, event.data, 'a stream event');
    if (!body || typeof body !== 'object') throw malformedResponse(this.provider, 'a stream event that is not an object');
    if (body.error) throw streamError(this.provider, this.model, body.error);
    if (body.modelVersion) this.chunks.setModel(body.modelVersion);
    if (body.usageMetadata) this.usage = usageFromMetadata(body.usageMetadata);
    if (Array.isArray(body.candidates) && body.candidates.length > 0) {
      body.candidates.forEach((candidate, position) => this.decodeCandidate(candidate, position, out));
    } else if (body.promptFeedback?.blockReason && !this.blocked) {
      this.blocked = true;
      this.push(out, 0, { role: 'assistant', content: '' }, 'content_filter');
    }
    return false;
  }

  finish(out: DecodedChunk[]): void {
    const states = [...this.choices.values()];
    const complete = this.blocked || (states.length > 0 && states.every((s) => s.finished));
    if (!complete) throw truncatedStream(this.provider);
    if (this.usage) out.push({ chunk: this.chunks.usage(this.usage), raw: null });
  }

  private decodeCandidate(candidate: GeminiCandidate, position: number, out: DecodedChunk[]): void {
    const index = typeof candidate.index === 'number' ? candidate.index : position;
    const state = this.stateOf(index);
    for (const part of visibleParts(candidate)) {
      if (hasFunctionCall(part)) {
        const call = toolCallOf(part);
        const callIndex = state.toolCalls++;
        this.push(out, index, { tool_calls: [{ index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
        this.push(out, index, { tool_calls: [{ index: callIndex, function: { arguments: call.function.arguments } }] });
      } else if (typeof part.text === 'string' && part.text !== '') {
        this.push(out, index, { content: part.text });
      }
    }
    if (candidate.finishReason && !state.finished) {
      state.finished = true;
      this.push(out, index, {}, finishReasonOf(candidate.finishReason, state.toolCalls > 0));
    }
  }

  private stateOf(index: number): ChoiceState {
    let state = this.choices.get(index);
    if (!state) this.choices.set(index, (state = { started: false, toolCalls: 0, finished: false }));
    return state;
  }

  /** One chunk for choice `index`; the first delta of each choice carries the role, as OpenAI's does. */
  private push(out: DecodedChunk[], index: number, delta: Record<string, unknown>, finishReason: string | null = null): void {
    const state = this.stateOf(index);
    const fullDelta = state.started ? delta : { role: 'assistant', ...delta };
    state.started = true;
    const chunk = this.chunks.delta(fullDelta, finishReason);
    chunk.choices[0]!.index = index;
    out.push({ chunk, raw: null });
  }
}
