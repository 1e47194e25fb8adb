/**
 * One upstream call as an undici dispatch handler (undici's `Dispatcher.DispatchHandler`:
 * `onRequestStart`, `onResponseStart`, `onResponseData`, `onResponseEnd`, `onResponseError`, with
 * `pause()`/`resume()` on its controller for flow control). The handler is also the call's answer:
 * its status and headers, and its body, read whole (`text`) or chunk by chunk (async iteration).
 *
 * Why not undici's `request()`: it wraps every call in a request handler, a body stream
 * (`BodyReadable`, a Node Readable) and an abort-signal listener, and the gateway added an
 * interceptor, an `AbortController`, a timer and a promise race per call on top (the queue timeout
 * and the deadline). Together that was the largest single cost of a proxied request in the
 * benchmark's profile. Here one object per call does all of it; the timeouts sit on shared
 * `DeadlineList`s.
 *
 * Abort rules (as before): a call aborted while its head is awaited rejects at once with the abort's
 * reason mapped by `transportError` (undici applies an abort to a queued request only once it gets a
 * connection; then `onRequestStart` aborts it at once). After the head, an abort errors the body.
 */
import type { Dispatcher } from 'undici';
import type { AbortSource } from '../http/exchange-abort.ts';
import type { DeadlineEntry, DeadlineList } from './deadline-list.ts';
import { gatewayError, type GatewayError } from '../errors.ts';

type Controller = Dispatcher.DispatchController;
type Headers = Record<string, string | string[] | undefined>;

/** Body bytes queued unread before the upstream read is paused (undici's own body stream uses 64 KiB). */
const HIGH_WATER_BYTES = 64 * 1024;

/** 502: a non-streamed upstream body larger than `maxBytes` (`upstream.maxResponseBytes`); not relayed. */
export function responseTooLarge(provider: string, maxBytes: number): GatewayError {
  return gatewayError('upstream_response_too_large', {
    message: `Upstream "${provider}" sent a response larger than ${maxBytes} bytes (upstream.maxResponseBytes); it was not relayed.`,
  });
}

/** The body of an upstream answer: iterate it (streams) or read it whole (`text`). */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /**
   * The whole body as UTF-8. Rejects with 502 `upstream_response_too_large` beyond `maxBytes` (the
   * call is aborted then), or with the transport error (`transportError`) of a failed read.
   */
  text(maxBytes: number): Promise<string>;
  /** Drops the rest of the body: a call still running is aborted (its connection is not reused). */
  destroy(): void;
}

/** What the handler needs from the client that sent it. */
export interface CallScope {
  provider: string;
  /** Where queued calls wait for a connection (503 `upstream_busy` on expiry); null = no queue timeout. */
  queue: DeadlineList<UpstreamCallHandler> | null;
  /** A non-streamed call's whole-answer deadline (504); null = none. */
  deadline: DeadlineList<UpstreamCallHandler> | null;
  /** Maps an undici or abort error to the contract's (`transportError`). */
  mapError(provider: string, err: unknown): GatewayError;
}

interface Waiter {
  resolve(result: IteratorResult<Buffer>): void;
  reject(err: unknown): void;
}

interface TextRequest {
  maxBytes: number;
  resolve(text: string): void;
  reject(err: unknown): void;
}

export class UpstreamCallHandler implements Dispatcher.DispatchHandler, UpstreamBody {
  statusCode = 0;
  headers: Headers = {};
  readonly #scope: CallScope;
  readonly #signal: AbortSource | undefined;
  #resolveHead: ((handler: UpstreamCallHandler) => void) | null;
  #rejectHead: ((err: unknown) => void) | null;
  #controller: Controller | null = null;
  /** An abort that came before undici handed over the controller. */
  #pendingAbort: unknown = undefined;
  #queueEntry: DeadlineEntry<UpstreamCallHandler> | null = null;
  #deadlineEntry: DeadlineEntry<UpstreamCallHandler> | null = null;
  #finished = false;
  // Body state.
  #chunks: Buffer[] = [];
  #queuedBytes = 0;
  #ended = false;
  #error: unknown = undefined;
  #waiter: Waiter | null = null;
  #textRequest: TextRequest | null = null;

  constructor(scope: CallScope, signal: AbortSource | undefined, withDeadline: boolean,
    resolve: (handler: UpstreamCallHandler) => void, reject: (err: unknown) => void) {
    this.#scope = scope;
    this.#signal = signal;
    this.#resolveHead = resolve;
    this.#rejectHead = reject;
    if (scope.queue) this.#queueEntry = scope.queue.add(this);
    if (withDeadline && scope.deadline) this.#deadlineEntry = scope.deadline.add(this);
    signal?.addEventListener('abort', this);
  }

  /** The client's abort signal fired (this object is its listener: no closure per call). */
  handleEvent(): void {
    this.abort(this.#signal!.reason);
  }

  /** Ends the call with `reason` (an error or a `GatewayError`); idempotent once finished. */
  abort(reason: unknown): void {
    if (this.#finished) return;
    if (this.#rejectHead) {
      this.#failHead(this.#scope.mapError(this.#scope.provider, reason));
      // Still queued in undici: it is aborted the moment it gets a connection.
      if (this.#controller) this.#controller.abort(reason as Error);
      else this.#pendingAbort = reason;
      return;
    }
    if (this.#controller) this.#controller.abort(reason as Error);
    else this.#failBody(reason);
  }

  // --- undici's handler interface ---

  onRequestStart(controller: Controller): void {
    this.#controller = controller;
    if (this.#queueEntry) this.#scope.queue!.remove(this.#queueEntry);
    if (this.#pendingAbort !== undefined) controller.abort(this.#pendingAbort as Error);
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Headers): void {
    this.#controller = controller;
    this.statusCode = statusCode;
    this.headers = headers;
    const resolve = this.#resolveHead;
    this.#resolveHead = this.#rejectHead = null;
    resolve?.(this);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#finished) return;
    const text = this.#textRequest;
    if (text) {
      this.#queuedBytes += chunk.length;
      if (this.#queuedBytes > text.maxBytes) this.#tooLarge(text);
      else this.#chunks.push(chunk);
      return;
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = null;
      waiter.resolve({ value: chunk, done: false });
      return;
    }
    this.#chunks.push(chunk);
    this.#queuedBytes += chunk.length;
    if (this.#queuedBytes >= HIGH_WATER_BYTES) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#finish();
    const text = this.#textRequest;
    if (text) {
      this.#textRequest = null;
      text.resolve(this.#joined());
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = null;
      waiter.resolve({ value: undefined, done: true });
    }
  }

  onResponseError(_controller: Controller, err: Error): void {
    if (this.#rejectHead) this.#failHead(this.#scope.mapError(this.#scope.provider, err));
    else this.#failBody(err);
  }

  // --- the body ---

  /** The answer's body is this call itself (one object per call). */
  get body(): UpstreamBody {
    return this;
  }

  text(maxBytes: number): Promise<string> {
    if (this.#error !== undefined) return Promise.reject(this.#scope.mapError(this.#scope.provider, this.#error));
    if (this.#queuedBytes > maxBytes) {
      return new Promise((resolve, reject) => this.#tooLarge({ maxBytes, resolve, reject }));
    }
    if (this.#ended) return Promise.resolve(this.#joined());
    return new Promise((resolve, reject) => {
      this.#textRequest = { maxBytes, resolve, reject };
      this.#controller?.resume();
    });
  }

  destroy(): void {
    if (this.#ended || this.#error !== undefined) return;
    this.abort(Object.assign(new Error('The upstream body was dropped before its end.'), { code: 'UND_ERR_ABORTED' }));
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.#next(),
      return: () => {
        this.destroy();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #next(): Promise<IteratorResult<Buffer>> {
    if (this.#chunks.length > 0) {
      const value = this.#chunks.shift()!;
      this.#queuedBytes -= value.length;
      if (this.#queuedBytes < HIGH_WATER_BYTES && this.#controller?.paused) this.#controller.resume();
      return Promise.resolve({ value, done: false });
    }
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the body's failure passed on as undici or the abort gave it
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  #joined(): string {
    const chunks = this.#chunks;
    this.#chunks = [];
    const size = this.#queuedBytes;
    this.#queuedBytes = 0;
    if (chunks.length === 1) return chunks[0]!.toString('utf8');
    return Buffer.concat(chunks, size).toString('utf8');
  }

  #tooLarge(text: TextRequest): void {
    this.#textRequest = null;
    this.#chunks = [];
    const error = responseTooLarge(this.#scope.provider, text.maxBytes);
    this.abort(error);
    text.reject(error);
  }

  #failHead(error: GatewayError): void {
    const reject = this.#rejectHead!;
    this.#resolveHead = this.#rejectHead = null;
    this.#error = error;
    this.#finish();
    reject(error);
  }

  #failBody(err: unknown): void {
    if (this.#ended || this.#error !== undefined) return;
    this.#error = err;
    this.#finish();
    const text = this.#textRequest;
    if (text) {
      this.#textRequest = null;
      text.reject(this.#scope.mapError(this.#scope.provider, err));
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = null;
      waiter.reject(err);
    }
  }

  /** The call is over: its timeouts and the client listener go. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#queueEntry) this.#scope.queue!.remove(this.#queueEntry);
    if (this.#deadlineEntry) this.#scope.deadline!.remove(this.#deadlineEntry);
    this.#signal?.removeEventListener('abort', this);
  }
}
