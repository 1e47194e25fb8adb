/**
 * The queue timeout of the upstream pools (issue 14, item 9): undici queues a request while every
 * connection of its origin's pool (`upstream.connectionsPerOrigin`) is busy, with no limit on the
 * wait. A request still queued after `upstream.queueTimeoutMs` is aborted with 503 `upstream_busy`
 * (retry shortly) instead of waiting behind other users' long streams. The wait ends when undici
 * starts the request on a connection (`onRequestStart`), which an interceptor reports.
 *
 * undici applies an abort signal to a queued request only once it is dispatched (`onConnect` then
 * aborts it at once), so the caller's promise is raced against the timer (`raceQueue`): the caller
 * gets its 503 on time, and the request, aborted, leaves the queue when a connection frees.
 */
import { DecoratorHandler, type Dispatcher } from 'undici';
import { gatewayError, type GatewayError } from './errors.ts';

/** Dispatch-option key of the callback told when the request leaves the queue. */
const ON_DISPATCHED = Symbol('tollgate.onDispatched');

type StartHandler = Dispatcher.DispatchHandler & { onRequestStart?(controller: unknown, context: unknown): void };

class DispatchNotifier extends DecoratorHandler {
  readonly #onDispatched: () => void;
  constructor(handler: Dispatcher.DispatchHandler, onDispatched: () => void) {
    super(handler);
    this.#onDispatched = onDispatched;
  }
  onRequestStart(controller: unknown, context: unknown): void {
    this.#onDispatched();
    (DecoratorHandler.prototype as StartHandler).onRequestStart?.call(this, controller, context);
  }
}

/** The interceptor to compose onto the upstream Agent: it reports when a request gets a connection. */
export const reportDispatch: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const onDispatched = (opts as { [ON_DISPATCHED]?: () => void })[ON_DISPATCHED];
  return dispatch(opts, onDispatched ? new DispatchNotifier(handler, onDispatched) : handler);
};

/** 503: a request waited longer than `queueTimeoutMs` for a connection to `provider`. */
export function upstreamBusy(provider: string, queueTimeoutMs: number): GatewayError {
  return gatewayError('upstream_busy', {
    message: `Every connection to upstream "${provider}" stayed busy for ${queueTimeoutMs} ms (upstream.queueTimeoutMs). Retry shortly.`,
  });
}

/**
 * `pending` (a request sent with `timer.signal` among its signals), or the timer's `upstream_busy` if
 * it fires first; a request that still answers after that has its body discarded.
 */
export function raceQueue<T extends { body: { destroy(): unknown } }>(pending: Promise<T>, signal: AbortSignal | null): Promise<T> {
  if (!signal) return pending;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      pending.then((late) => late.body.destroy(), () => {});
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * A queue timer for one request: `signal` aborts (reason: `upstream_busy`) unless `options` (spread into
 * the request's dispatch options) report the dispatch within `queueTimeoutMs`. No-op for 0.
 */
export function queueTimer(provider: string, queueTimeoutMs: number): { signal: AbortSignal | null; options: Record<symbol, () => void> } {
  if (queueTimeoutMs <= 0) return { signal: null, options: {} };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(upstreamBusy(provider, queueTimeoutMs)), queueTimeoutMs);
  timer.unref();
  return { signal: controller.signal, options: { [ON_DISPATCHED]: () => clearTimeout(timer) } };
}
