/**
 * The proxy step: dispatch an `UpstreamCall`, then relay the answer to the client in canonical
 * OpenAI shape. Streams flow chunk by chunk with backpressure (a full client socket pauses the
 * upstream read until `drain`); nothing is buffered whole except a bounded non-streamed body.
 *
 * Errors before the response headers are thrown (the pipeline renders them as JSON). After the SSE
 * headers are sent, an error ends the stream with one `data: {"error":...}` event (what openai-node
 * raises as `APIError`), and `ex.status` / `ex.errorCode` record it for the log.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from './exchange.ts';
import type {
  ChatCompletionChunk, ChatCompletionChunkChoice, ChatMessage, ChatToolCall, ChatToolCallDelta, TokenCounts,
} from './chat-types.ts';
import { tokenCountsOf } from './chat-types.ts';
import type { DecodedChunk, FramedEvent, StreamDecoder, UpstreamCall } from './upstream-call.ts';
import type { UpstreamClient } from './upstream.ts';
import { readBodyText, transportError } from './upstream.ts';
import { createNdjsonFramer, createSseFramer, sseData, sseError, SSE_DONE } from './sse.ts';
import { toGatewayError } from './errors.ts';
import type { Log } from './log.ts';
import { completeUsage, type TokenEstimator } from './token-estimate.ts';

/** Response-phase callbacks, already bound to the plugins entered for this exchange. */
export interface ResponseHooks {
  start(ex: Exchange): void;
  chunk(ex: Exchange, chunk: ChatCompletionChunk): void;
}

export interface ProxyDeps {
  upstream: UpstreamClient;
  maxResponseBytes: number;
  log: Log;
  tokens: TokenEstimator;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** Dispatches `call` and writes the answer to `res`. Throws `GatewayError` only before headers are sent. */
export async function proxy(ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ResponseHooks, deps: ProxyDeps): Promise<void> {
  const upstream = await deps.upstream.send(call, ex.signal);
  ex.upstreamStatus = upstream.statusCode;
  if (upstream.statusCode < 200 || upstream.statusCode > 299) {
    const text = await readBodyText(upstream.body, deps.maxResponseBytes, call.provider).catch(() => '');
    throw call.codec.decodeError(upstream.statusCode, text, upstream.headers);
  }
  try {
    if (!call.stream) await relayCompletion(ex, call, res, hooks, upstream.body, deps);
    else await relayStream(ex, call, res, hooks, upstream.body, deps);
  } finally {
    // The upstream accepted the request, so it bills it: a client that left is billed for what was
    // generated so far, counted locally.
    if (ex.clientAborted) completeUsage(ex, deps.tokens);
  }
}

async function relayCompletion(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ResponseHooks,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  const text = await readBodyText(body, deps.maxResponseBytes, call.provider);
  const { completion, raw } = call.codec.decodeResponse(text);
  ex.modelServed = completion.model || null;
  if (completion.usage) ex.usage = tokenCountsOf(completion.usage);
  if (ex.usage === null || ex.usage.completionTokens === 0) {
    for (const choice of completion.choices) collectGenerated(ex.generated, choice.message);
    completeUsage(ex, deps.tokens);
  }
  ex.status = 200;
  hooks.start(ex);
  const payload = raw ?? JSON.stringify(completion);
  res.writeHead(200, {
    ...ex.responseHeaders,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': ex.id,
  });
  ex.firstByteAtPerfMs = performance.now();
  res.end(payload);
}

async function relayStream(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ResponseHooks,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  ex.status = 200;
  hooks.start(ex);
  res.writeHead(200, { ...ex.responseHeaders, ...SSE_HEADERS, 'x-request-id': ex.id });
  res.flushHeaders();

  const framer = call.codec.framing === 'sse' ? createSseFramer() : createNdjsonFramer();
  const decoder = call.codec.createStreamDecoder();
  const utf8 = new TextDecoder('utf-8');
  const events: FramedEvent[] = [];
  const chunks: DecodedChunk[] = [];
  let done = false;
  const finish = () => {
    completeUsage(ex, deps.tokens);
    // The contract: a client that asked for include_usage gets a usage chunk, estimated if need be.
    if (ex.usageEstimated && ex.clientWantsUsage && ex.usage) res.write(sseData(JSON.stringify(usageChunk(ex, ex.usage))));
    res.end(SSE_DONE);
  };
  try {
    for await (const buf of body) {
      // After the upstream's end marker the client's stream is complete; the rest of the upstream body
      // is drained, not cut: breaking out would destroy it (an AbortError with a stack trace per
      // request) and lose the keep-alive connection.
      if (done) continue;
      framer.feed(utf8.decode(buf, { stream: true }), events);
      done = decodeAll(decoder, events, chunks, (out) => res.write(out), ex, hooks);
      if (done) finish();
      else if (res.writableNeedDrain) await drained(res);
    }
    if (!done) {
      framer.feed(utf8.decode(), events);
      framer.end(events);
      if (!decodeAll(decoder, events, chunks, (out) => res.write(out), ex, hooks)) {
        decoder.finish(chunks);
        const out = renderChunks(ex, chunks, hooks);
        if (out) res.write(out);
      }
      done = true;
      finish();
    }
  } catch (err) {
    if (ex.clientAborted || res.destroyed || res.writableEnded) return;
    const gatewayError = toGatewayError(transportError(call.provider, err));
    if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') deps.log.error('stream relay failed', { requestId: ex.id, err });
    ex.status = gatewayError.status;
    ex.errorCode = gatewayError.code;
    res.end(sseError(gatewayError.toBody()));
  }
}

/**
 * Decodes every pending event and writes the resulting chunks (one write per upstream read).
 * Returns true once the upstream signalled the end. When an event is an error, the chunks decoded
 * before it are still written, then the error is thrown.
 */
function decodeAll(
  decoder: StreamDecoder, events: FramedEvent[], chunks: DecodedChunk[],
  write: (out: string) => void, ex: Exchange, hooks: ResponseHooks,
): boolean {
  let done = false;
  try {
    for (const event of events) {
      if (decoder.decode(event, chunks)) {
        done = true;
        break;
      }
    }
  } finally {
    events.length = 0;
    const out = renderChunks(ex, chunks, hooks);
    if (out) write(out);
  }
  return done;
}

/**
 * Turns decoded chunks into SSE text, capturing usage and the served model, and running the chunk
 * hooks. Usage the gateway asked for on the client's behalf is removed unless the client asked too:
 * a usage-only chunk (`choices: []`) is dropped, usage on a content chunk is nulled.
 */
function renderChunks(ex: Exchange, chunks: DecodedChunk[], hooks: ResponseHooks): string {
  let out = '';
  for (const { chunk, raw } of chunks) {
    if (ex.modelServed === null && chunk.model) ex.modelServed = chunk.model;
    for (const choice of chunk.choices) collectGenerated(ex.generated, choice.delta);
    if (chunk.usage) ex.usage = tokenCountsOf(chunk.usage);
    hooks.chunk(ex, chunk);
    if (chunk.usage && !ex.clientWantsUsage) {
      if (chunk.choices.length === 0) continue;
      out += sseData(JSON.stringify({ ...chunk, usage: null }));
    } else {
      out += sseData(raw ?? JSON.stringify(chunk));
    }
  }
  chunks.length = 0;
  if (out && ex.firstByteAtPerfMs === null) ex.firstByteAtPerfMs = performance.now();
  return out;
}

/** Appends the generated text of a message or delta (content, refusal, tool-call arguments). */
function collectGenerated(into: string[], message: ChatCompletionChunkChoice['delta'] | ChatMessage | undefined): void {
  if (!message) return;
  if (typeof message.content === 'string' && message.content) into.push(message.content);
  if (typeof message.refusal === 'string' && message.refusal) into.push(message.refusal);
  const calls = message.tool_calls as Array<ChatToolCallDelta | ChatToolCall> | undefined;
  if (calls) for (const call of calls) if (call.function?.arguments) into.push(call.function.arguments);
}

/** The usage-only chunk (`choices: []`) OpenAI sends last when `include_usage` is set. */
function usageChunk(ex: Exchange, counts: TokenCounts): ChatCompletionChunk {
  return {
    id: `chatcmpl-${ex.id.slice(4)}`,
    object: 'chat.completion.chunk',
    created: Math.floor(ex.startedAtMs / 1000),
    model: ex.modelServed ?? ex.target?.model ?? '',
    choices: [],
    usage: {
      prompt_tokens: counts.promptTokens,
      completion_tokens: counts.completionTokens,
      total_tokens: counts.promptTokens + counts.completionTokens,
      prompt_tokens_details: { cached_tokens: counts.cachedTokens },
    },
  };
}

/** Resolves when the client socket drains or closes (a closed socket never drains). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
