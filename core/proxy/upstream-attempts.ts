/**
 * Attempts of one client request (docs/architecture.md "Routing"): the router may hand the core, with
 * its first call, a `FallbackPlan` that names the next call after a failure (another deployment of a
 * model group, or the same one after a backoff). `proxyWithFallback` dispatches, and while nothing
 * was sent to the client (`res.headersSent` is false, the client is still there) asks the plan for the
 * next call. After the first byte no attempt is made: a stream that fails then ends with the
 * dialect's error event, as `proxy()` does.
 *
 * The core decides only *when* a retry is still possible; *whether* an error is worth one, which
 * deployment comes next and how long to wait are the plan's (the router's) business. The request
 * hooks (budget reservation, rate limits, the output cap) ran once before the first attempt and are
 * not run again: a later call is built from the exchange as they left it. Every attempt, served or
 * failed, is recorded on `ex.attempts` for the log and the metrics (a stream that failed after its
 * first byte with its error code, `stream-cut.ts`, not as served), and, when tracing is on, as a
 * child span of the request's whose context goes upstream in `traceparent` (`core/telemetry/`).
 */
import type { ServerResponse } from 'node:http';
import type { Exchange, Target, UpstreamAttempt } from '../exchange.ts';
import type { FallbackPlan, ModelCall } from '../upstream/upstream-call.ts';
import { toGatewayError } from '../errors.ts';
import { proxy, type ProxyDeps, type ResponseHooks } from './proxy.ts';
import type { AttemptTrace, RequestTrace } from '../telemetry/request-tracing.ts';

/**
 * `proxy()` with retries before the first byte. Throws `GatewayError` only before headers are sent,
 * like `proxy()`; the error thrown is the last attempt's. `trace`: the request's trace, null when
 * tracing is off.
 */
export async function proxyWithFallback(
  ex: Exchange, first: ModelCall, plan: FallbackPlan | null, res: ServerResponse, hooks: ResponseHooks, deps: ProxyDeps,
  trace: RequestTrace | null = null,
): Promise<void> {
  const attempts = (ex.attempts ??= []);
  let call = first;
  for (;;) {
    const startedPerfMs = performance.now();
    const target = ex.target ?? { provider: call.provider, model: '' };
    ex.upstreamStatus = null;
    const span = trace === null ? null : trace.attempt(target, call);
    try {
      await proxy(ex, span === null ? call : withTraceHeaders(call, span), res, hooks, deps);
      // A stream that failed after its head records its error (a cut, a timeout, an in-band error):
      // the attempt did not serve, and the router's breaker counts it (issue 42).
      attempts.push(attemptOf(target, ex.upstreamStatus, ex.errorCode, sinceMs(ex.firstByteAtPerfMs ?? performance.now(), startedPerfMs)));
      span?.end(ex.upstreamStatus, ex.errorCode);
      return;
    } catch (err) {
      const error = toGatewayError(err);
      // A client that hung up ended the attempt from our side: what the cut upstream call threw then
      // (an abort read as unreachable) says nothing about the upstream, and must not count against it.
      const errorCode = ex.clientAborted ? 'client_disconnected' : error.code;
      attempts.push(attemptOf(target, ex.upstreamStatus, errorCode, sinceMs(performance.now(), startedPerfMs)));
      span?.end(ex.upstreamStatus, errorCode);
      if (!plan || res.headersSent || ex.clientAborted) throw err;
      const next = await plan.next(ex, { error, upstreamStatus: ex.upstreamStatus, attempts: attempts.length });
      if (!next || res.headersSent || ex.clientAborted) throw err;
      call = next;
    }
  }
}

/**
 * One attempt's record. Its fields are named, not spread from the target: a target also carries its
 * prompt-token rules, which do not belong in the logged attempts.
 */
function attemptOf(target: Target, status: number | null, errorCode: string | null, latencyMs: number): UpstreamAttempt {
  return { provider: target.provider, model: target.model, status, errorCode, latencyMs };
}

/**
 * The call with the attempt span's context in its headers (`traceparent`, `tracestate`), replacing a
 * client's: the upstream's parent is the attempt. A copy: a retry of the same call gets its own span.
 */
function withTraceHeaders(call: ModelCall, span: AttemptTrace): ModelCall {
  return Object.assign({}, call, { headers: Object.assign({}, call.headers, span.headers) });
}

function sinceMs(nowPerfMs: number, startedPerfMs: number): number {
  return Math.max(0, Math.round(nowPerfMs - startedPerfMs));
}
