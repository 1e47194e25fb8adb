/**
 * The proxy step: dispatch an `UpstreamCall`, then relay the answer to the client in its dialect.
 * The upstream's answer is decoded into canonical chunks, observed (usage, served model, generated
 * text, the chunk hooks) and rendered by the exchange's dialect (`core/dialects/`); on a native
 * pass-through (`call.passthrough`) the upstream's bytes are relayed unchanged and only observed.
 * Streams flow chunk by chunk with backpressure (a full client socket pauses the upstream read until
 * `drain`); nothing is buffered whole except a bounded non-streamed body.
 *
 * An embeddings call (`call.kind === 'embeddings'`) shares the dispatch and the error mapping, then
 * is answered by its own small relay (`embeddings-relay.ts`).
 *
 * When the dialect's answer is one object (`ResponseRenderer.finalAnswer`, `DecodedChunk.final`), the
 * `onResponseComplete` hooks get it and are awaited before the answer's last bytes are written: a
 * client that acts on the final event finds what they recorded (the Responses state store).
 *
 * Errors before the response headers are thrown (the pipeline renders them in the dialect's shape).
 * After the stream's headers are sent, an error ends the stream with the dialect's error event, and
 * `ex.status` / `ex.errorCode` record it for the log.
 */
import { sendJson } from './respond.ts';
import type { ServerResponse } from 'node:http';
import type { Exchange } from './exchange.ts';
import type { AbortSource } from './exchange-abort.ts';
import type { ChatCompletionChunk, ChatCompletionChunkChoice, ChatMessage, ChatToolCall, ChatToolCallDelta, Usage } from './chat-types.ts';
import { invalidUsageField, MAX_REPORTED_TOKENS, tokenCountsOf } from './chat-types.ts';
import type { DecodedChunk, FramedEvent, ModelCall, StreamDecoder, UpstreamCall } from './upstream-call.ts';
import type { UpstreamClient } from './upstream.ts';
import { readBodyText, transportError } from './upstream.ts';
import { createNdjsonFramer, createSseFramer, type Framer } from './sse.ts';
import { GatewayError, toGatewayError } from './errors.ts';
import type { Log } from './log.ts';
import { settleUsage, type TokenEstimator } from './token-estimate.ts';
import { createByteRedactor, credentialsOf, redactError, redactText } from './redact.ts';
import type { Dialect, ResponseRenderer } from './dialects/dialect.ts';
import { servedModelName } from './dialects/model-field.ts';
import { openAIChat } from './dialects/openai-chat/index.ts';
import { relayEmbeddings } from './embeddings-relay.ts';
import { createStreamCap, settleOversized } from './stream-cap.ts';
import { createUtf8StreamDecoder } from './utf8-stream.ts';

/** Response-phase callbacks, already bound to the plugins entered for this exchange. */
export interface ResponseHooks {
  start(ex: Exchange): void;
  chunk(ex: Exchange, chunk: ChatCompletionChunk): void;
  /** The `onResponseComplete` hooks with the final answer object; never rejects (failures are logged). */
  complete(ex: Exchange, final: unknown): Promise<void>;
}

export interface ProxyDeps {
  upstream: UpstreamClient;
  maxResponseBytes: number;
  /** Most bytes relayed from one upstream stream (default `DEFAULT_MAX_STREAM_BYTES`). */
  maxStreamBytes?: number;
  log: Log;
  tokens: TokenEstimator;
}

/** An upstream error body that may reach a native client as it is: a JSON object, not about the credential. */
function relayable(status: number, text: string): boolean {
  return status !== 401 && status !== 403 && text.startsWith('{') && isJson(text);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The exchange's dialect; a model call without one (a hand-built exchange) speaks OpenAI Chat. */
function dialectOf(ex: Exchange): Dialect {
  return ex.dialect ?? openAIChat;
}

function streamHeaders(ex: Exchange): Record<string, string> {
  return { 'content-type': dialectOf(ex).streamContentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': ex.id };
}

/** The response hooks plus where the upstream's usage reports go (`createUsageReader`). */
interface ObservingHooks extends ResponseHooks {
  usage(ex: Exchange, report: Usage): void;
  /** The call's credentials (`credentialsOf`), redacted from every upstream text. */
  secrets: readonly string[];
}

/** Exchanges whose upstream already sent an insane usage report (it is logged once per exchange). */
const warnedOfUsage = new WeakSet<Exchange>();

/**
 * Takes upstream usage reports into `ex.usage`. A report with a field that is not a sane token count
 * (`invalidUsageField`: a negative, fractional or huge number, e.g. `completion_tokens: 1e22`) is
 * treated as missing, so `completeUsage` counts the exchange locally, and is logged once per exchange
 * with the provider, model and field (never the body). A later sane report replaces it.
 */
function readUsage(ex: Exchange, report: Usage, provider: string, log: Log): void {
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

/** Dispatches `call` and writes the answer to `res`. Throws `GatewayError` only before headers are sent. */
export async function proxy(ex: Exchange, call: ModelCall, res: ServerResponse, responseHooks: ResponseHooks, deps: ProxyDeps): Promise<void> {
  const upstream = await deps.upstream.send(call, cancellationOf(ex));
  ex.upstreamStatus = upstream.statusCode;
  // An upstream may quote the key it was sent; no upstream text reaches the client or the log with it.
  const secrets = credentialsOf(call);
  if (upstream.statusCode < 200 || upstream.statusCode > 299) {
    const text = redactText(await readBodyText(upstream.body, deps.maxResponseBytes, call.provider).catch(() => ''), secrets);
    const error = redactError(call.codec.decodeError(upstream.statusCode, text, upstream.headers), secrets);
    // The client speaks the upstream's dialect: its own words and status go back unchanged, except
    // where they could quote the credential (401, 403) or are not the upstream's error body.
    if (call.passthrough && relayable(upstream.statusCode, text)) throw error.relayed(upstream.statusCode, text);
    throw error;
  }
  const renderer = dialectOf(ex).createRenderer(ex);
  const provider = call.provider;
  const hooks: ObservingHooks = {
    start: responseHooks.start, chunk: responseHooks.chunk, complete: responseHooks.complete,
    usage: (into, report) => readUsage(into, report, provider, deps.log), secrets,
  };
  try {
    if (call.kind === 'embeddings') await relayEmbeddings(ex, call, res, hooks, renderer, upstream.body, deps);
    else if (!call.stream) await relayCompletion(ex, call, res, hooks, renderer, upstream.body, deps);
    else if (call.passthrough) await relayNativeStream(ex, call, res, hooks, renderer, upstream.body, deps);
    else await relayStream(ex, call, res, hooks, renderer, upstream.body, deps);
  } finally {
    // The upstream accepted the request, so it bills it: a client that left, or a stream the shutdown
    // cut, is billed for what was generated so far, counted locally.
    if (ex.clientAborted || shutdownCut(ex) !== null) await settleUsage(ex, deps.tokens);
  }
}

async function relayCompletion(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ObservingHooks, renderer: ResponseRenderer,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  const text = redactText(await readBodyText(body, deps.maxResponseBytes, call.provider), hooks.secrets);
  const decoded = call.codec.decodeResponse(text);
  const { completion } = decoded;
  ex.modelServed = servedModelName(completion.model);
  if (completion.usage) hooks.usage(ex, completion.usage);
  if (ex.usage === null || ex.usage.completionTokens === 0) {
    for (const choice of completion.choices) collectGenerated(ex.generated, choice.message);
    await settleUsage(ex, deps.tokens);
  }
  ex.status = 200;
  hooks.start(ex);
  const payload = call.passthrough ? text : renderer.completion(decoded);
  const final = call.passthrough ? decoded.final : renderer.finalAnswer?.();
  if (final !== undefined) await hooks.complete(ex, final);
  ex.firstByteAtPerfMs = performance.now();
  sendJson(res, 200, payload, ex.id, ex.responseHeaders);
}

function framerFor(call: UpstreamCall): Framer {
  return call.codec.framing === 'sse' ? createSseFramer() : createNdjsonFramer();
}

/** The exchange's cancellation: the server's `ExchangeAbort`, else (an exchange built by hand) its signal. */
function cancellationOf(ex: Exchange): AbortSource {
  return ex.cancellation ?? ex.signal;
}

/** The `gateway_shutdown` error the server aborted this exchange with (drain timeout), or null. */
function shutdownCut(ex: Exchange): GatewayError | null {
  const cancellation = cancellationOf(ex);
  const reason: unknown = cancellation.aborted ? cancellation.reason : null;
  return reason instanceof GatewayError && reason.code === 'gateway_shutdown' ? reason : null;
}

/** Redacts the call's credentials from framed events before they are decoded (and rendered or thrown). */
function redactEvents(events: FramedEvent[], secrets: readonly string[]): void {
  for (const event of events) event.data = redactText(event.data, secrets);
}

/** Ends a stream that failed after its headers were sent with the dialect's error event. */
function failStream(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, renderer: ResponseRenderer, err: unknown, log: Log, secrets: readonly string[],
): void {
  if (ex.clientAborted || res.destroyed || res.writableEnded) return;
  const gatewayError = shutdownCut(ex) ?? redactError(toGatewayError(transportError(call.provider, err)), secrets);
  if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') log.error('stream relay failed', { requestId: ex.id, err });
  ex.status = gatewayError.status;
  ex.errorCode = gatewayError.code;
  res.end(renderer.error(gatewayError));
}

/**
 * Starts a stream: status 200 known to the response hooks, the headers written. They leave with the
 * first event when it is already here (one write instead of two: the upstream's first event usually
 * comes with its headers); otherwise they are flushed alone on the next turn of the event loop, so a
 * client waiting on a slow first token still sees its stream start at once.
 */
function startStream(ex: Exchange, res: ServerResponse, hooks: ObservingHooks): void {
  ex.status = 200;
  hooks.start(ex);
  res.writeHead(200, Object.assign({}, ex.responseHeaders, streamHeaders(ex))); // not a spread: see core/live-exchange.ts
  setImmediate(flushHeadersIfUnsent, res);
}

function flushHeadersIfUnsent(res: ServerResponse): void {
  // `_headerSent`: Node's own flag that the head reached the socket (`headersSent` is true from writeHead on).
  if ((res as { _headerSent?: boolean })._headerSent !== true && !res.writableEnded && !res.destroyed) res.flushHeaders();
}

async function relayStream(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ObservingHooks, renderer: ResponseRenderer,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  startStream(ex, res, hooks);

  const framer = framerFor(call);
  const decoder = call.codec.createStreamDecoder();
  const utf8 = createUtf8StreamDecoder();
  const events: FramedEvent[] = [];
  const chunks: DecodedChunk[] = [];
  const writer = batchedWriter(res, firstTokenSender(ex, res));
  const write = writer.write;
  let done = false;
  const finish = async () => {
    await settleUsage(ex, deps.tokens);
    const out = renderer.end();
    const final = renderer.finalAnswer?.();
    if (final !== undefined) await hooks.complete(ex, final);
    res.end(writer.take() + out);
  };
  const cap = createStreamCap(call.provider, deps.maxStreamBytes);
  try {
    for await (const buf of body) {
      // After the upstream's end marker the client's stream is complete; the rest of the upstream body
      // is drained, not cut: breaking out would destroy it (an AbortError with a stack trace per
      // request) and lose the keep-alive connection.
      if (done) continue;
      cap.add(buf.length);
      framer.feed(utf8.decode(buf), events);
      redactEvents(events, hooks.secrets);
      done = decodeAll(decoder, events, chunks, write, ex, hooks, renderer);
      if (done) await finish();
      else if (res.writableNeedDrain) await drained(res);
    }
    if (!done) {
      framer.feed(utf8.end(), events);
      framer.end(events);
      redactEvents(events, hooks.secrets);
      if (!decodeAll(decoder, events, chunks, write, ex, hooks, renderer)) {
        decoder.finish(chunks);
        const out = renderChunks(ex, chunks, hooks, renderer);
        if (out) write(out);
      }
      done = true;
      await finish();
    }
  } catch (err) {
    writer.flush();
    await settleOversized(ex, err, deps.tokens, deps.log);
    failStream(ex, call, res, renderer, err, deps.log, hooks.secrets);
  }
}

/**
 * The writes of a translated stream. Up to the one that carries the first token, each is written at
 * once, and that one is sent at once (`sendFirstToken`); after it, what is rendered during one run of
 * the microtask queue (the upstream reads that arrived together) is joined and written when the run
 * ends (`process.nextTick`), when Node would send it anyway: one HTTP chunk and one pass through
 * Node's HTTP layer instead of one per event. `take()` hands over (and `flush()` writes) what waits,
 * for the stream's last write or error event.
 */
function batchedWriter(res: ServerResponse, sendFirstToken: () => boolean): { write(out: string): void; take(): string; flush(): void } {
  let pending = '';
  let firstTokenSent = false;
  const take = (): string => {
    const out = pending;
    pending = '';
    return out;
  };
  const flush = (): void => {
    const out = take();
    if (out && !res.destroyed && !res.writableEnded) res.write(out);
  };
  return {
    write(out) {
      if (!firstTokenSent) {
        res.write(out);
        firstTokenSent = sendFirstToken();
        return;
      }
      if (pending === '') process.nextTick(flush);
      pending += out;
    },
    take,
    flush,
  };
}

/**
 * Native pass-through of a stream: every upstream byte goes to the client as it came, and a copy is
 * decoded only to observe usage, the served model and the generated text (the chunk hooks run on the
 * canonical chunks). Each read is observed before it is written, so the event that completes the
 * answer reaches `onResponseComplete` before the client. An in-band error event reaches the client in
 * the upstream's own words and is recorded for the log; a stream cut short ends with the dialect's
 * error event.
 */
async function relayNativeStream(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ObservingHooks, renderer: ResponseRenderer,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  startStream(ex, res, hooks);
  const observer = createObserver(ex, call, hooks, deps.log);
  // The upstream's bytes go out unchanged except for the call's credentials, were it to quote them.
  const redactor = createByteRedactor(hooks.secrets);
  const sendFirstToken = firstTokenSender(ex, res);
  // Each buffer is observed before it is written: when it holds the final event, the completion
  // hooks (the response store) run first, so a client that acts on that event finds it stored.
  const relay = async (buf: Buffer) => {
    if (buf.length === 0) return;
    if (ex.firstByteAtPerfMs === null) ex.firstByteAtPerfMs = performance.now();
    const final = observer.feed(buf);
    if (final !== undefined) await hooks.complete(ex, final);
    const flowing = res.write(buf);
    sendFirstToken();
    if (!flowing && res.writableNeedDrain) await drained(res);
  };
  const cap = createStreamCap(call.provider, deps.maxStreamBytes);
  try {
    for await (const buf of body) {
      cap.add(buf.length);
      await relay(redactor.push(buf));
    }
    await relay(redactor.end());
    const final = observer.end();
    if (final !== undefined) await hooks.complete(ex, final);
  } catch (err) {
    await settleOversized(ex, err, deps.tokens, deps.log);
    failStream(ex, call, res, renderer, err, deps.log, hooks.secrets);
    return;
  }
  await settleUsage(ex, deps.tokens);
  // An event the decoder could not read reached the client as it came; without an error event after
  // it the client would take the stream for whole (or wait for an end marker that never comes).
  const unreadable = observer.unreadable();
  if (unreadable) failStream(ex, call, res, renderer, unreadable, deps.log, hooks.secrets);
  else res.end();
}

/**
 * Returns a function to call after each write of a stream: the first time the exchange has generated
 * text (the first token is in what was written), it sends what the response holds at once; it returns
 * true from then on. Node holds a response's writes until the microtask queue runs out
 * (`socket.cork()` until `process.nextTick`), and upstream reads that arrived together are relayed in
 * one run of it, so the first token would otherwise wait for the whole batch to be decoded and
 * checked. The rest of the batch still leaves in one write.
 */
function firstTokenSender(ex: Exchange, res: ServerResponse): () => boolean {
  let sent = false;
  return () => {
    if (sent || ex.generated.length === 0) return sent;
    sent = true;
    res.socket?.uncork();
    return true;
  };
}

interface StreamObserver {
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
function createObserver(ex: Exchange, call: UpstreamCall, hooks: ObservingHooks, log: Log): StreamObserver {
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
      let truncated: unknown = null;
      observe(() => {
        framer.feed(utf8.end(), events);
        framer.end(events);
        for (const event of events) if (decoder.decode(event, chunks)) return;
        try {
          decoder.finish(chunks);
        } catch (err) {
          truncated = err;
        }
      });
      if (truncated) throw truncated;
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
function decodeAll(
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

/** Observes one canonical chunk: the served model, generated text, usage, then the chunk hooks. */
function observeChunk(ex: Exchange, chunk: ChatCompletionChunk, hooks: ObservingHooks): void {
  if (ex.modelServed === null && chunk.model) ex.modelServed = servedModelName(chunk.model);
  for (const choice of chunk.choices) collectGenerated(ex.generated, choice.delta);
  if (chunk.usage) hooks.usage(ex, chunk.usage);
  hooks.chunk(ex, chunk);
}

/** Observes decoded chunks and renders them in the exchange's dialect (one string per upstream read). */
function renderChunks(ex: Exchange, chunks: DecodedChunk[], hooks: ObservingHooks, renderer: ResponseRenderer): string {
  let out = '';
  for (const decoded of chunks) {
    observeChunk(ex, decoded.chunk, hooks);
    out += renderer.chunk(decoded);
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
