/**
 * Anthropic stream decoding: named SSE events → canonical `chat.completion.chunk`s.
 *
 * Source: https://platform.claude.com/docs/en/build-with-claude/streaming (`message_start`,
 * `content_block_*`, `message_delta` with cumulative usage, `message_stop`, `ping`, in-band `error`;
 * unknown event types may appear and are ignored), docs/provider-wire-formats.md §2.4.
 */
import type { DecodedChunk, FramedEvent, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { createChunkBuilder, malformedResponse, parseUpstreamJson, truncatedStream, type ChunkBuilder } from '../canonical.ts';
import { anthropicStreamError, type AnthropicErrorBody } from './errors.ts';
import { finishReasonOf, usageFromAnthropic, type AnthropicMessage, type AnthropicUsage, type ResponseBlock } from './response.ts';

interface StreamEvent {
  type?: string;
  message?: AnthropicMessage;
  index?: number;
  content_block?: ResponseBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: AnthropicErrorBody['error'];
}

/**
 * Reads Anthropic's named SSE events into `chat.completion.chunk`s: a role chunk on `message_start`,
 * content from `text_delta`, one OpenAI tool-call index per `tool_use` block (Anthropic's block
 * `index` also counts text and thinking blocks), `finish_reason` on `message_delta`, and the usage
 * chunk on `message_stop` (the terminator). Usage counts are cumulative: the last value of each wins.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  private builder: ChunkBuilder | null = null;
  private readonly usage: AnthropicUsage = {};
  private readonly toolIndexByBlock = new Map<number, number>();
  private stopped = false;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(framed: FramedEvent, out: DecodedChunk[]): boolean {
    const event = parseUpstreamJson<StreamEvent>(this.provider, framed.data, 'a stream event');
    const type = event?.type ?? framed.event;
    switch (type) {
      case 'ping':
        return false;
      case 'error':
        throw anthropicStreamError(this.provider, this.model, event);
      case 'message_start':
        this.onMessageStart(event, out);
        return false;
      case 'content_block_start':
        this.onBlockStart(event, out);
        return false;
      case 'content_block_delta':
        this.onBlockDelta(event, out);
        return false;
      case 'message_delta':
        this.onMessageDelta(event, out);
        return false;
      case 'message_stop':
        this.emitUsage(out);
        return true;
      default:
        // content_block_stop, and event types Anthropic may add without a version bump.
        return false;
    }
  }

  finish(out: DecodedChunk[]): void {
    // A stream cut after its stop reason lost only the terminator: the answer is complete.
    if (!this.stopped) throw truncatedStream(this.provider);
    this.emitUsage(out);
  }

  private started(): ChunkBuilder {
    if (!this.builder) throw malformedResponse(this.provider, 'a stream event before "message_start"');
    return this.builder;
  }

  private onMessageStart(event: StreamEvent, out: DecodedChunk[]): void {
    const message = event.message;
    if (!message || typeof message.id !== 'string') throw malformedResponse(this.provider, 'a "message_start" without a message');
    this.builder = createChunkBuilder(message.id, message.model || this.model);
    this.mergeUsage(message.usage);
    out.push({ chunk: this.builder.delta({ role: 'assistant', content: '' }), raw: null });
  }

  private onBlockStart(event: StreamEvent, out: DecodedChunk[]): void {
    const builder = this.started();
    const block = event.content_block;
    if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') {
      out.push({ chunk: builder.delta({ content: block.text }), raw: null });
    } else if (block?.type === 'tool_use' && typeof event.index === 'number') {
      const use = block as { id: string; name: string };
      const index = this.toolIndexByBlock.size;
      this.toolIndexByBlock.set(event.index, index);
      out.push({
        chunk: builder.delta({ tool_calls: [{ index, id: use.id, type: 'function', function: { name: use.name, arguments: '' } }] }),
        raw: null,
      });
    }
    // thinking, redacted_thinking and server-tool blocks are dropped (module doc).
  }

  private onBlockDelta(event: StreamEvent, out: DecodedChunk[]): void {
    const builder = this.started();
    const delta = event.delta;
    if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
      out.push({ chunk: builder.delta({ content: delta.text }), raw: null });
      return;
    }
    const index = typeof event.index === 'number' ? this.toolIndexByBlock.get(event.index) : undefined;
    if (delta?.type === 'input_json_delta' && index !== undefined && delta.partial_json) {
      out.push({ chunk: builder.delta({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] }), raw: null });
    }
  }

  private onMessageDelta(event: StreamEvent, out: DecodedChunk[]): void {
    const builder = this.started();
    this.mergeUsage(event.usage);
    const stopReason = event.delta?.stop_reason;
    if (typeof stopReason === 'string') {
      this.stopped = true;
      out.push({ chunk: builder.delta({}, finishReasonOf(stopReason)), raw: null });
    }
  }

  private mergeUsage(usage: AnthropicUsage | undefined): void {
    if (!usage) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      if (typeof usage[key] === 'number') this.usage[key] = usage[key];
    }
  }

  private emitUsage(out: DecodedChunk[]): void {
    const builder = this.started();
    if (this.usage.input_tokens === undefined && this.usage.output_tokens === undefined) return;
    out.push({ chunk: builder.usage(usageFromAnthropic(this.usage)), raw: null });
  }
}
