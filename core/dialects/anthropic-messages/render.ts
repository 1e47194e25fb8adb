/**
 * Rendering canonical answers as Anthropic Messages: a `chat.completion` becomes a `message`, a
 * stream of `chat.completion.chunk`s becomes the named SSE events of a Messages stream, an error the
 * `error` event. Used when a translating provider answered; a native Anthropic upstream's bytes are
 * relayed unchanged and only `error` is used.
 *
 * Sources: https://platform.claude.com/docs/en/api/messages (the `message` object, `stop_reason`,
 * usage), https://platform.claude.com/docs/en/build-with-claude/streaming (event order and shapes);
 * docs/provider-wire-formats.md §2.3, §2.4 (read right to left).
 *
 * - Content: reasoning text (`reasoning_content`, or `reasoning` as some providers name it) → a
 *   leading `thinking` block with an empty `signature` (no upstream signed it; clients replaying it to
 *   Anthropic would be refused, to any other upstream it is dropped); text (and a refusal's text) →
 *   `text`; tool calls → `tool_use` with `input` parsed from the arguments (`{}` when empty or invalid).
 * - `stop_reason`: stop → end_turn (canonical does not say whether a stop sequence matched),
 *   length → max_tokens, tool_calls / function_call → tool_use, content_filter → refusal, none → end_turn.
 * - Usage: Anthropic's `input_tokens` excludes cache reads and writes, so
 *   input = prompt − cached − cache_write; cache reads → `cache_read_input_tokens`, writes →
 *   `cache_creation_input_tokens`.
 * - Stream: `message_start` on the first chunk (input tokens 0 unless already known), one content
 *   block per kind in arrival order (the open block is closed before another opens), each tool call
 *   (by canonical `index`) its own `tool_use` block fed `input_json_delta`s; `end()` closes the open
 *   block and sends `message_delta` with the stop reason and the final usage (`ex.usage`), then
 *   `message_stop`. Usage-only chunks send nothing: their counts reach `ex.usage` before `end()`.
 */
import { randomBytes } from 'node:crypto';
import type { TokenCounts } from '../../canonical/chat-types.ts';
import { messageTexts, reasoningOf, tokenCountsOf } from '../../canonical/chat-types.ts';
import type { GatewayError } from '../../errors.ts';
import type { Exchange } from '../../exchange.ts';
import type { DecodedChunk, DecodedResponse } from '../../upstream/upstream-call.ts';
import type { ResponseRenderer } from '../dialect.ts';
import { anthropicErrorBody } from './errors.ts';
import type { ContentBlock, ContentBlockDelta, Message, MessageStreamEvent, MessageUsage, StartedContentBlock, StopReason } from './types.ts';

/** `prefix` + 24 hex digits, the form of Anthropic's `msg_…` and `toolu_…` ids. */
export function anthropicId(prefix: 'msg_' | 'toolu_'): string {
  return prefix + randomBytes(12).toString('hex');
}

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** Canonical `finish_reason` → Anthropic `stop_reason`; none or unknown → `end_turn`. */
export function stopReasonOf(finishReason: string | null | undefined): StopReason {
  return (finishReason && STOP_REASONS[finishReason]) || 'end_turn';
}

/** Canonical counts → Anthropic usage (`input_tokens` without the cached and cache-written tokens). */
export function messageUsageOf(counts: TokenCounts | null): MessageUsage {
  if (!counts) return { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  return {
    input_tokens: Math.max(0, counts.promptTokens - counts.cachedTokens - counts.cacheWriteTokens),
    output_tokens: counts.completionTokens,
    cache_read_input_tokens: counts.cachedTokens,
    cache_creation_input_tokens: counts.cacheWriteTokens,
  };
}

/** A tool call's arguments as the `input` object; `{}` when empty or not a JSON object. */
export function toolInputOf(args: string | undefined): unknown {
  if (!args || args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    return typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  } catch {
    return {};
  }
}

/** One SSE event: `event:` carries the same name as `data.type`, as Anthropic sends it. */
function sseEvent(event: MessageStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The block open in a stream: its Anthropic index, its kind, and for tool_use the canonical call index. */
interface OpenBlock {
  index: number;
  kind: 'text' | 'thinking' | 'tool_use';
  toolIndex?: number;
}

class AnthropicMessagesRenderer implements ResponseRenderer {
  private readonly messageId = anthropicId('msg_');
  private started = false;
  private nextIndex = 0;
  private open: OpenBlock | null = null;
  /** Canonical tool-call index to the Anthropic block index of its `tool_use`. */
  private readonly toolBlocks = new Map<number, number>();
  private finishReason: string | null = null;

  constructor(private readonly ex: Exchange) {}

  private model(fromChunk?: string): string {
    return fromChunk || this.ex.modelServed || this.ex.target?.model || this.ex.request?.model || '';
  }

  completion({ completion }: DecodedResponse): string {
    const choice = completion.choices[0];
    const content: ContentBlock[] = [];
    if (choice) {
      const reasoning = reasoningOf(choice.message);
      if (reasoning) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
      for (const text of messageTexts(choice.message)) content.push({ type: 'text', text });
      for (const call of choice.message.tool_calls ?? []) {
        content.push({ type: 'tool_use', id: call.id || anthropicId('toolu_'), name: call.function.name, input: toolInputOf(call.function.arguments) });
      }
    }
    // ex.usage is the upstream's count (or the gateway's estimate when it sent none); see core/proxy/proxy.ts.
    const counts = this.ex.usage ?? (completion.usage ? tokenCountsOf(completion.usage) : null);
    const message: Message = {
      id: this.messageId,
      type: 'message',
      role: 'assistant',
      model: this.model(completion.model),
      content,
      stop_reason: stopReasonOf(choice?.finish_reason),
      stop_sequence: null,
      usage: messageUsageOf(counts),
    };
    return JSON.stringify(message);
  }

  chunk({ chunk }: DecodedChunk): string {
    // A usage-only chunk: its counts are already in ex.usage and go out in message_delta.
    if (chunk.choices.length === 0) return '';
    let out = this.start(chunk.model);
    for (const choice of chunk.choices) {
      // The Messages API has one answer; choices beyond the first (n > 1) have nowhere to go.
      if (choice.index !== 0) continue;
      const { delta } = choice;
      const reasoning = reasoningOf(delta);
      if (reasoning) out += this.delta('thinking', { type: 'thinking_delta', thinking: reasoning });
      if (typeof delta.content === 'string' && delta.content) out += this.delta('text', { type: 'text_delta', text: delta.content });
      if (typeof delta.refusal === 'string' && delta.refusal) out += this.delta('text', { type: 'text_delta', text: delta.refusal });
      for (const call of delta.tool_calls ?? []) {
        out += this.toolCall(call.index, call.id, call.function?.name, call.function?.arguments);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  end(): string {
    let out = this.start() + this.close();
    out += sseEvent({
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(this.finishReason), stop_sequence: null },
      usage: messageUsageOf(this.ex.usage),
    });
    return out + sseEvent({ type: 'message_stop' });
  }

  error(err: GatewayError): string {
    return sseEvent(anthropicErrorBody(err));
  }

  /** `message_start`, once. */
  private start(model?: string): string {
    if (this.started) return '';
    this.started = true;
    const usage = messageUsageOf(this.ex.usage);
    return sseEvent({
      type: 'message_start',
      message: {
        id: this.messageId, type: 'message', role: 'assistant', model: this.model(model), content: [],
        stop_reason: null, stop_sequence: null, usage: Object.assign({}, usage, { output_tokens: 0 }),
      },
    });
  }

  /** `content_block_stop` for the open block, if any. */
  private close(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = null;
    return sseEvent({ type: 'content_block_stop', index });
  }

  /** Opens a new block (closing the open one first). */
  private openBlock(kind: OpenBlock['kind'], block: StartedContentBlock, toolIndex?: number): string {
    const out = this.close();
    const index = this.nextIndex++;
    this.open = toolIndex === undefined ? { index, kind } : { index, kind, toolIndex };
    return out + sseEvent({ type: 'content_block_start', index, content_block: block });
  }

  /** A text or thinking delta, in the open block when it is of that kind, else in a new one. */
  private delta(kind: 'text' | 'thinking', delta: ContentBlockDelta): string {
    let out = '';
    if (this.open?.kind !== kind) {
      out += this.openBlock(kind, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' });
    }
    return out + sseEvent({ type: 'content_block_delta', index: this.open!.index, delta });
  }

  /**
   * A tool-call fragment. The first fragment of a call (by canonical `index`) opens its `tool_use`
   * block with the id and name; argument text goes out as `input_json_delta`. Canonical streams send
   * each call's fragments together; a late fragment of an earlier call goes to that call's block
   * index (the SDK accumulates deltas by index), since a closed block cannot be reopened.
   */
  private toolCall(toolIndex: number, id: string | undefined, name: string | undefined, args: string | undefined): string {
    let out = '';
    let index = this.toolBlocks.get(toolIndex);
    if (index === undefined) {
      out += this.openBlock('tool_use', { type: 'tool_use', id: id || anthropicId('toolu_'), name: name ?? '', input: {} }, toolIndex);
      index = this.open!.index;
      this.toolBlocks.set(toolIndex, index);
    }
    if (args) out += sseEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } });
    return out;
  }
}

/** A renderer for one exchange's answer in the Messages API's shapes. */
export function createAnthropicMessagesRenderer(ex: Exchange): ResponseRenderer {
  return new AnthropicMessagesRenderer(ex);
}
