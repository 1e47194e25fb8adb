/**
 * Ollama stream decoding: NDJSON lines (last one `"done": true`) → canonical `chat.completion.chunk`s.
 * Source: https://docs.ollama.com/api/streaming , docs/provider-wire-formats.md §5.2.
 */
import type { ChatToolCallDelta } from '../../../../core/canonical/chat-types.ts';
import type { DecodedChunk, FramedEvent, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { completionId, createChunkBuilder, malformedResponse, parseUpstreamJson, truncatedStream, type ChunkBuilder } from '../canonical.ts';
import { inBandError } from './errors.ts';
import { createdFrom, finishReason, toOpenAIToolCalls, usageFrom, type OllamaChatResponse } from './response.ts';

/**
 * Reads Ollama's NDJSON lines (one `event.data` each). Content and thinking become deltas; tool calls,
 * which Ollama sends whole in one line, become complete deltas (id, type, name and all the arguments
 * at once, which the OpenAI SDK assembles like any first fragment); the `done: true` line becomes the
 * finish chunk plus the usage-only chunk, and ends the stream. A `{"error": ...}` line is a 502.
 */
export class OllamaStreamDecoder implements StreamDecoder {
  private builder: ChunkBuilder | null = null;
  private toolCalls = 0;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const line = parseUpstreamJson<OllamaChatResponse>(this.provider, event.data, 'a stream line');
    if (!line || typeof line !== 'object') throw malformedResponse(this.provider, 'a stream line that is not an object');
    if (line.error !== undefined) throw inBandError(this.provider, line.error, 'mid-stream');
    const builder = this.start(line, out);
    const delta = this.deltaOf(line);
    if (delta) out.push({ chunk: builder.delta(delta), raw: null });
    if (line.done !== true) return false;
    out.push({ chunk: builder.delta({}, finishReason(line.done_reason, this.toolCalls > 0)), raw: null });
    const usage = usageFrom(line);
    if (usage) out.push({ chunk: builder.usage(usage), raw: null });
    return true;
  }

  /** The upstream closed without a `done: true` line: the answer is incomplete. */
  finish(): void {
    throw truncatedStream(this.provider);
  }

  /** On the first line: the builder (id, `created`, model from the line) and the role chunk. */
  private start(line: OllamaChatResponse, out: DecodedChunk[]): ChunkBuilder {
    if (this.builder) return this.builder;
    const model = typeof line.model === 'string' && line.model ? line.model : this.model;
    this.builder = createChunkBuilder(completionId(), model, createdFrom(line.created_at));
    out.push({ chunk: this.builder.delta({ role: 'assistant', content: '' }), raw: null });
    return this.builder;
  }

  private deltaOf(line: OllamaChatResponse): Record<string, unknown> | null {
    const message = line.message;
    if (!message || typeof message !== 'object') return null;
    const delta: Record<string, unknown> = {};
    if (typeof message.thinking === 'string' && message.thinking) delta.reasoning_content = message.thinking;
    if (typeof message.content === 'string' && message.content) delta.content = message.content;
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      delta.tool_calls = toOpenAIToolCalls(message.tool_calls, this.provider).map(
        (call): ChatToolCallDelta => ({ index: this.toolCalls++, ...call }),
      );
    }
    return Object.keys(delta).length > 0 ? delta : null;
  }
}
