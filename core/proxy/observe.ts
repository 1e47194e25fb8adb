/**
 * Observing an upstream answer: framing and decoding its events into canonical chunks, taking its
 * usage reports, collecting the generated text (for local counting), running the chunk hooks and
 * rendering the chunks in the client's dialect. `createObserver` decodes a natively relayed stream for
 * accounting only.
 */
import type { Exchange } from '../exchange.ts';
import type { ChatCompletionChunk, ChatCompletionChunkChoice, ChatMessage, ChatToolCall, ChatToolCallDelta, Usage } from '../canonical/chat-types.ts';
import { invalidUsageField, MAX_REPORTED_TOKENS, tokenCountsOf } from '../canonical/chat-types.ts';
import type { DecodedChunk, FramedEvent, StreamDecoder, UpstreamCall } from '../upstream/upstream-call.ts';
import { createNdjsonFramer, createSseFramer, type Framer } from './sse.ts';
import { GatewayError } from '../errors.ts';
import type { Log } from '../runtime/log.ts';
import { redactText } from './redact.ts';
import type { ResponseRenderer } from '../dialects/dialect.ts';
import { servedModelName } from '../dialects/model-field.ts';
import { createUtf8StreamDecoder } from './utf8-stream.ts';
import { truncatedTail } from './stream-cut.ts';
import type { AnswerRewrite, ObservingHooks } from './relay-types.ts';

/** Exchanges whose upstream already sent an insane usage report (it is logged once per exchange). */
const warnedOfUsage = new WeakSet<Exchange>();

/**
 * Takes upstream usage reports into `ex.usage`. A report with a field that is not a sane token count
 * (`invalidUsageField`: a negative, fractional or huge number, e.g. `completion_tokens: 1e22`) is
 * treated as missing, so `completeUsage` counts the exchange locally, and is logged once per exchange
 * with the provider, model and field (never the body). A later sane report replaces it.
 */
export function readUsage(ex: Exchange, report: Usage, provider: string, log: Log): void {
  const invalid = invalidUsageField(report);
  if (!invalid) {
    ex.usage = tokenCountsOf(report);
    ex.usageReport = report;
    return;
  }
  ex.usage = null;
  ex.usageReport = null;
  if (warnedOfUsage.has(ex)) return;
  warnedOfUsage.add(ex);
  log.warn('upstream usage report is not a sane token count; counting tokens locally', {
    requestId: ex.id, provider, model: ex.modelServed ?? ex.target?.model ?? null,
    field: invalid.field, value: String(invalid.value).slice(0, 40), maxTokens: MAX_REPORTED_TOKENS,
  });
}

export function framerFor(call: UpstreamCall): Framer {
  return call.codec.framing === 'sse' ? createSseFramer() : createNdjsonFramer();
}

/** Redacts the call's credentials from framed events before they are decoded (and rendered or thrown). */
export function redactEvents(events: FramedEvent[], secrets: readonly string[]): void {
  for (const event of events) event.data = redactText(event.data, secrets);
}

export interface StreamObserver {
  /** Observes one read; returns the final answer object when this read completed it (`DecodedChunk.final`). */
  feed(buf: Buffer): unknown;
  /**
   * The upstream closed the body; returns the final answer object if the last event (unframed until
   * now) completed it. Throws `GatewayError` when the stream was cut short.
   */
  end(): unknown;
  /** The error of an upstream event that was not what the API documents (not JSON), if one came. */
  unreadable(): GatewayError | null;
}

/** Decodes a relayed stream for accounting only. Its own failures never disturb the relay. */
export function createObserver(ex: Exchange, call: UpstreamCall, hooks: ObservingHooks, log: Log): StreamObserver {
  const framer = framerFor(call);
  const decoder = call.codec.createStreamDecoder();
  const utf8 = createUtf8StreamDecoder();
  const events: FramedEvent[] = [];
  const chunks: DecodedChunk[] = [];
  let state: 'observing' | 'done' | 'failed' = 'observing';
  let final: unknown;
  let unreadable: GatewayError | null = null;
  const observe = (step: () => void) => {
    try {
      step();
      for (const decoded of chunks) {
        observeChunk(ex, decoded.chunk, hooks);
        if (decoded.final !== undefined) final = decoded.final;
      }
    } catch (err) {
      state = 'failed';
      if (err instanceof GatewayError) {
        // The upstream's in-band error already reached the client in its own shape; the log records it.
        ex.status = err.status;
        ex.errorCode = err.code;
        if (err.code === 'upstream_malformed_response') unreadable = err;
      } else log.error('pass-through observer failed', { requestId: ex.id, err });
    } finally {
      chunks.length = 0;
      events.length = 0;
    }
  };
  return {
    feed(buf) {
      if (state !== 'observing') return undefined;
      final = undefined;
      observe(() => {
        framer.feed(utf8.decode(buf), events);
        for (const event of events) {
          if (decoder.decode(event, chunks)) {
            state = 'done';
            break;
          }
        }
      });
      return final;
    },
    end() {
      if (state !== 'observing') return undefined;
      final = undefined;
      // A flag beside the error: TypeScript does not see the callback assign it.
      let truncated = false;
      let truncation: unknown;
      observe(() => {
        framer.feed(utf8.end(), events);
        framer.end(events);
        try {
          for (const event of events) if (decoder.decode(event, chunks)) return;
        } catch (err) {
          // A last event that does not parse was cut off mid-way: thrown as the truncation it is.
          const cut = truncatedTail(call.provider, err);
          if (cut === err) throw err;
          truncated = true;
          truncation = cut;
          return;
        }
        try {
          decoder.finish(chunks);
        } catch (err) {
          truncated = true;
          truncation = err;
        }
      });
      if (truncated) throw truncation;
      return final;
    },
    unreadable: () => unreadable,
  };
}

/**
 * Decodes every pending event and writes the resulting chunks (one write per upstream read).
 * Returns true once the upstream signalled the end. When an event is an error, the chunks decoded
 * before it are still written, then the error is thrown.
 */
export function decodeAll(
  decoder: StreamDecoder, events: FramedEvent[], chunks: DecodedChunk[],
  write: (out: string) => void, ex: Exchange, hooks: ObservingHooks, renderer: ResponseRenderer,
): boolean {
  let done = false;
  try {
    for (const event of events) {
      if (decoder.decode(event, chunks)) {
        done = true;
        break;
      }
      // The first token leaves as soon as it is decoded, not after the rest of its read: an upstream
      // often sends its first events in one packet. Later events of a read go out together.
      if (ex.firstByteAtPerfMs === null && chunks.length > 0) {
        const first = renderChunks(ex, chunks, hooks, renderer);
        if (first) write(first);
      }
    }
  } finally {
    events.length = 0;
    const out = renderChunks(ex, chunks, hooks, renderer);
    if (out) write(out);
  }
  return done;
}

/** Observes one canonical chunk as the upstream sent it: the served model, generated text (as generated, for counting), usage. */
function observeUpstream(ex: Exchange, chunk: ChatCompletionChunk, hooks: ObservingHooks): void {
  if (ex.modelServed === null && chunk.model) ex.modelServed = servedModelName(chunk.model);
  for (const choice of chunk.choices) collectGenerated(ex.generated, choice.delta);
  if (chunk.usage) hooks.usage(ex, chunk.usage);
}

/** Hands one canonical chunk, as the client gets it, to the answer's assembler and the chunk hooks. */
function deliver(ex: Exchange, chunk: ChatCompletionChunk, hooks: ObservingHooks): void {
  hooks.assembler?.add(chunk);
  hooks.chunk(ex, chunk);
}

function observeChunk(ex: Exchange, chunk: ChatCompletionChunk, hooks: ObservingHooks): void {
  observeUpstream(ex, chunk, hooks);
  deliver(ex, chunk, hooks);
}

/**
 * Rewrites a decoded chunk's text with the plugins' `rewriteAnswerText` (`ObservingHooks.rewrite`):
 * each choice's `delta.content`, and what they release when the choice finishes, sent before its
 * `finish_reason`. The chunk is then serialized anew (`raw` dropped).
 */
function rewriteChunk(ex: Exchange, decoded: DecodedChunk, rewrite: AnswerRewrite): void {
  for (const choice of decoded.chunk.choices) {
    const { delta } = choice;
    let content = typeof delta.content === 'string' && delta.content !== '' ? rewrite(ex, delta.content, false, choice.index) : delta.content;
    if (choice.finish_reason) {
      const released = rewrite(ex, '', true, choice.index);
      if (released) content = (content ?? '') + released;
    }
    if (content !== delta.content) {
      delta.content = content;
      decoded.raw = null;
    }
  }
}

/** Observes decoded chunks and renders them in the exchange's dialect (one string per upstream read). */
export function renderChunks(ex: Exchange, chunks: DecodedChunk[], hooks: ObservingHooks, renderer: ResponseRenderer): string {
  let out = '';
  for (const decoded of chunks) {
    observeUpstream(ex, decoded.chunk, hooks);
    if (hooks.rewrite) rewriteChunk(ex, decoded, hooks.rewrite);
    deliver(ex, decoded.chunk, hooks);
    out += renderer.chunk(decoded);
  }
  chunks.length = 0;
  if (out && ex.firstByteAtPerfMs === null) ex.firstByteAtPerfMs = performance.now();
  return out;
}

/** Appends the generated text of a message or delta (content, refusal, tool-call arguments). */
export function collectGenerated(into: string[], message: ChatCompletionChunkChoice['delta'] | ChatMessage | undefined): void {
  if (!message) return;
  if (typeof message.content === 'string' && message.content) into.push(message.content);
  if (typeof message.refusal === 'string' && message.refusal) into.push(message.refusal);
  const calls = message.tool_calls as Array<ChatToolCallDelta | ChatToolCall> | undefined;
  if (calls) for (const call of calls) if (call.function?.arguments) into.push(call.function.arguments);
}
