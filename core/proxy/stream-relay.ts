/**
 * Relaying a streamed answer: translated (`relayStream`: decoded, observed and rendered in the client's
 * dialect, writes batched after the first token) or native (`relayNativeStream`: the upstream's bytes
 * unchanged, observed on the side). Backpressure: a full client socket pauses the upstream read until
 * `drain`. After the headers are sent an error ends the stream with the dialect's error event.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../exchange.ts';
import type { AbortSource } from '../http/exchange-abort.ts';
import type { DecodedChunk, FramedEvent, UpstreamCall } from '../upstream/upstream-call.ts';
import { GatewayError, internalError, toGatewayError } from '../errors.ts';
import type { Log } from '../runtime/log.ts';
import { settleUsage } from '../tokens/token-estimate.ts';
import { createByteRedactor, redactError } from './redact.ts';
import type { Dialect, ResponseRenderer } from '../dialects/dialect.ts';
import { createStreamCap, logOversized } from './stream-cap.ts';
import { cutError, truncatedTail } from './stream-cut.ts';
import { createUtf8StreamDecoder } from './utf8-stream.ts';
import { createObserver, decodeAll, framerFor, redactEvents, renderChunks } from './observe.ts';
import type { ObservingHooks, ProxyDeps } from './relay-types.ts';

/** The exchange's dialect. Every model call has one (the server sets it from the route); a hand-built exchange must too. */
export function dialectOf(ex: Exchange): Dialect {
  if (ex.dialect === null) throw internalError('a model call needs the dialect its answer is rendered in');
  return ex.dialect;
}

function streamHeaders(ex: Exchange): Record<string, string> {
  return { 'content-type': dialectOf(ex).streamContentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': ex.id };
}

/** The exchange's cancellation: the server's `ExchangeAbort`, else (an exchange built by hand) its signal. */
export function cancellationOf(ex: Exchange): AbortSource {
  return ex.cancellation ?? ex.signal;
}

/** The `gateway_shutdown` error the server aborted this exchange with (drain timeout), or null. */
export function shutdownCut(ex: Exchange): GatewayError | null {
  const cancellation = cancellationOf(ex);
  const reason: unknown = cancellation.aborted ? cancellation.reason : null;
  return reason instanceof GatewayError && reason.code === 'gateway_shutdown' ? reason : null;
}

/**
 * Ends a stream that failed after its headers were sent with the dialect's error event, and records
 * the error for the log and the attempt (`stream-cut.ts`: whose side ended it). A client that left
 * gets nothing more; the pipeline records it as `client_disconnected`.
 */
function failStream(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, renderer: ResponseRenderer, err: unknown, log: Log, secrets: readonly string[],
): void {
  // An answer already ended whole (a reset while the rest of the body drains) stays served.
  if (ex.clientAborted || res.writableEnded) return;
  const gatewayError = shutdownCut(ex) ?? redactError(toGatewayError(cutError(call.provider, err)), secrets);
  if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') log.error('stream relay failed', { requestId: ex.id, err });
  ex.status = gatewayError.status;
  ex.errorCode = gatewayError.code;
  if (!res.destroyed) res.end(renderer.error(gatewayError));
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
  res.writeHead(200, Object.assign({}, ex.responseHeaders, streamHeaders(ex)));
  setImmediate(flushHeadersIfUnsent, res);
}

function flushHeadersIfUnsent(res: ServerResponse): void {
  // `_headerSent`: Node's own flag that the head reached the socket (`headersSent` is true from writeHead on).
  if ((res as { _headerSent?: boolean })._headerSent !== true && !res.writableEnded && !res.destroyed) res.flushHeaders();
}

export async function relayStream(
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
    if (hooks.assembler) ex.answer = hooks.assembler.completion();
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
      if (!decodeTail(call, () => decodeAll(decoder, events, chunks, write, ex, hooks, renderer))) {
        decoder.finish(chunks);
        const out = renderChunks(ex, chunks, hooks, renderer);
        if (out) write(out);
      }
      done = true;
      await finish();
    }
  } catch (err) {
    writer.flush();
    logOversized(ex, err, deps.log);
    failStream(ex, call, res, renderer, err, deps.log, hooks.secrets);
  }
}

/** Decodes the events flushed when the upstream closed: one that does not parse was cut off mid-way (`truncatedTail`). */
function decodeTail(call: UpstreamCall, decode: () => boolean): boolean {
  try {
    return decode();
  } catch (err) {
    throw truncatedTail(call.provider, err);
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
function batchedWriter(res: ServerResponse, sendFirstToken: () => boolean): { write(this: void, out: string): void; take(): string; flush(): void } {
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
export async function relayNativeStream(
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
    logOversized(ex, err, deps.log);
    failStream(ex, call, res, renderer, err, deps.log, hooks.secrets);
    return;
  }
  await settleUsage(ex, deps.tokens);
  // An event the decoder could not read reached the client as it came; without an error event after
  // it the client would take the stream for whole (or wait for an end marker that never comes).
  const unreadable = observer.unreadable();
  if (unreadable) failStream(ex, call, res, renderer, unreadable, deps.log, hooks.secrets);
  else {
    if (hooks.assembler && ex.errorCode === null) ex.answer = hooks.assembler.completion();
    res.end();
  }
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
