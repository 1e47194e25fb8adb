/**
 * An exchange's cancellation: the client hanging up, or the shutdown cutting the exchange after its
 * drain timeout. A real `AbortSignal` is an EventTarget made per request (its construction was ~1 %
 * of a proxied request's CPU on Node 20), yet most exchanges never abort and the one listener that
 * matters, the upstream call, needs only `aborted`, `reason` and an `abort` listener. So the
 * exchange's `signal` is made on first use (a plugin's, a fallback's backoff), and the upstream call
 * listens here (`AbortSource`: an `AbortSignal` also fits it).
 */

/** What an upstream call needs of a cancellation: an `AbortSignal`, or an `ExchangeAbort`. */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: { handleEvent(): void }): void;
  removeEventListener(type: 'abort', listener: { handleEvent(): void }): void;
}

export class ExchangeAbort implements AbortSource {
  aborted = false;
  reason: unknown = undefined;
  /** The server's list of exchanges in flight (`running-exchanges.ts`) links through these. */
  previousRunning: ExchangeAbort | null = null;
  nextRunning: ExchangeAbort | null = null;
  #controller: AbortController | null = null;
  #listeners: Array<{ handleEvent(): void }> | null = null;

  /** An `AbortSignal` that follows this cancellation (aborted already if it is). */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }

  /** Aborts with `reason` (default: an `AbortError`, as `AbortController#abort()`); later calls do nothing. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.#controller?.abort(this.reason);
    const listeners = this.#listeners;
    this.#listeners = null;
    if (listeners) for (const listener of listeners) listener.handleEvent();
  }

  addEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    if (!this.aborted) (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    const listeners = this.#listeners;
    if (!listeners) return;
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }
}
