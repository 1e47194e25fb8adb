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
 * `pending` (a request sent with `signal`), or `signal`'s reason if it aborts first: undici applies an
 * abort to a request only once it left the queue, so a queued request's caller is answered here (the
 * queue timeout's `upstream_busy`, a client that left); a request that still answers after that has its
 * body discarded.
 */
export function raceQueue<T extends { body: { destroy(): unknown } }>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
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

/** What aborts a non-streamed call that ran past `upstream.requestDeadlineMs` (`transportError` maps it to 504). */
function deadlineReason(deadlineMs: number): DOMException {
  return new DOMException(`The upstream call ran past its ${deadlineMs} ms deadline.`, 'TimeoutError');
}

/** The abort signal of one upstream call and the hooks that move it through its phases. */
export interface CallGuard {
  signal: AbortSignal;
  /** Spread into the request's dispatch options: reports when the request gets a connection. */
  options: Record<symbol, () => void>;
  /** The call is over (its body ended, or it failed): clears the timer and the client listener. */
  done(): void;
}

/**
 * One upstream call's abort signal: the client leaving (`client`), the pool's queue timeout
 * (`queueTimeoutMs`, 503 `upstream_busy`) and, for a non-streamed call, the overall deadline
 * (`deadlineMs`, 504; 0 = none). Why one controller and one timer, re-armed when the request leaves
 * the queue: `AbortSignal.any` and `AbortSignal.timeout` cost a signal per source and kept a
 * five-minute timer alive per request, which showed in the benchmark's CPU and memory.
 */
export function guardCall(provider: string, queueTimeoutMs: number, deadlineMs: number, client?: AbortSignal): CallGuard {
  const controller = new AbortController();
  const startedMs = performance.now();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const clearTimer = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  const onClientAbort = () => abort(client!.reason);
  const done = () => {
    clearTimer();
    client?.removeEventListener('abort', onClientAbort);
  };
  const abort = (reason: unknown) => {
    done();
    controller.abort(reason);
  };
  const arm = (ms: number, reason: () => unknown) => {
    timer = setTimeout(() => abort(reason()), Math.max(0, ms));
    timer.unref();
  };
  if (client?.aborted) controller.abort(client.reason);
  else client?.addEventListener('abort', onClientAbort, { once: true });
  // While queued the nearer of the two limits runs; once dispatched, what is left of the deadline.
  if (queueTimeoutMs > 0 && (deadlineMs <= 0 || queueTimeoutMs < deadlineMs)) arm(queueTimeoutMs, () => upstreamBusy(provider, queueTimeoutMs));
  else if (deadlineMs > 0) arm(deadlineMs, () => deadlineReason(deadlineMs));
  const dispatched = () => {
    if (controller.signal.aborted) return;
    clearTimer();
    if (deadlineMs > 0) arm(deadlineMs - (performance.now() - startedMs), () => deadlineReason(deadlineMs));
  };
  return { signal: controller.signal, options: { [ON_DISPATCHED]: dispatched }, done };
}
