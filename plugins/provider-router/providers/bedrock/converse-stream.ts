/**
 * ConverseStream events (rewritten into SSE by `event-stream.ts`, the event's name as `event`) →
 * canonical chunks: `messageStart` → the role chunk; `contentBlockStart` with `start.toolUse` → a
 * tool call (one OpenAI index per tool block); `contentBlockDelta` `delta.text` → content,
 * `delta.toolUse.input` → arguments (reasoning deltas are dropped); `messageStop.stopReason` → the
 * finish reason; `metadata.usage` → the usage chunk, and the end of the stream. An exception (`error`
 * here) fails the stream by the shared policy.
 *
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html
 */
import type { DecodedChunk, FramedEvent, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { completionId, createChunkBuilder, parseUpstreamJson, truncatedStream, type ChunkBuilder } from '../canonical.ts';
import { converseFinishReason, usageFromConverse, type ConverseUsage } from './converse-answer.ts';
import { bedrockStreamError } from './errors.ts';

interface ConverseEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string } };
  stopReason?: string;
  usage?: ConverseUsage;
  exception?: string;
  message?: string;
}

export class ConverseStreamDecoder implements StreamDecoder {
  private readonly builder: ChunkBuilder;
  private readonly toolIndexByBlock = new Map<number, number>();
  private stopped = false;

  constructor(private readonly provider: string, private readonly model: string) {
    this.builder = createChunkBuilder(completionId(), model);
  }

  decode(framed: FramedEvent, out: DecodedChunk[]): boolean {
    const event = parseUpstreamJson<ConverseEvent>(this.provider, framed.data, 'a stream event') ?? {};
    switch (framed.event) {
      case 'messageStart':
        out.push({ chunk: this.builder.delta({ role: 'assistant', content: '' }), raw: null });
        return false;
      case 'contentBlockStart':
        this.onBlockStart(event, out);
        return false;
      case 'contentBlockDelta':
        this.onBlockDelta(event, out);
        return false;
      case 'messageStop':
        this.stopped = true;
        out.push({ chunk: this.builder.delta({}, converseFinishReason(event.stopReason)), raw: null });
        return false;
      case 'metadata':
        if (event.usage) out.push({ chunk: this.builder.usage(usageFromConverse(event.usage)), raw: null });
        return true;
      case 'error':
        throw bedrockStreamError(this.provider, this.model, event.exception ?? '', event.message ?? null);
      default:
        return false;
    }
  }

  finish(_out: DecodedChunk[]): void {
    if (!this.stopped) throw truncatedStream(this.provider);
  }

  private onBlockStart(event: ConverseEvent, out: DecodedChunk[]): void {
    const use = event.start?.toolUse;
    if (!use || typeof event.contentBlockIndex !== 'number') return;
    const index = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(event.contentBlockIndex, index);
    out.push({ chunk: this.builder.delta({ tool_calls: [{ index, id: use.toolUseId ?? '', type: 'function', function: { name: use.name ?? '', arguments: '' } }] }), raw: null });
  }

  private onBlockDelta(event: ConverseEvent, out: DecodedChunk[]): void {
    const delta = event.delta;
    if (typeof delta?.text === 'string' && delta.text !== '') {
      out.push({ chunk: this.builder.delta({ content: delta.text }), raw: null });
      return;
    }
    const index = typeof event.contentBlockIndex === 'number' ? this.toolIndexByBlock.get(event.contentBlockIndex) : undefined;
    if (index !== undefined && typeof delta?.toolUse?.input === 'string' && delta.toolUse.input !== '') {
      out.push({ chunk: this.builder.delta({ tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] }), raw: null });
    }
  }
}
