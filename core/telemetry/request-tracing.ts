/**
 * The telemetry room's contract: what the request path calls to trace an exchange. Types only, so the
 * pipeline and the proxy name them without importing the SDK. The gateway hands a `RequestTracing`
 * to the pipeline (`ProxyDeps.tracing`) only when tracing is on; off, the field is null and the
 * request path makes one null check per request and per attempt, nothing else.
 */
import type { Exchange, Target } from '../exchange.ts';
import type { UpstreamRequest } from '../upstream/upstream-call.ts';

/** The tracer of a running gateway (`otel-tracing.ts`). */
export interface RequestTracing {
  /**
   * Starts the request's span (kind SERVER), continuing the client's W3C `traceparent` / `tracestate`
   * when it sent a valid one. Call once, when the exchange enters the pipeline.
   */
  begin(ex: Exchange): RequestTrace;
  /** True when the answer's text is wanted (`capturePrompts`): the relay then keeps `ex.answer`. */
  readonly wantsAnswer: boolean;
  /** Exports what is buffered and stops; spans ended later are dropped. Never rejects. */
  close(): Promise<void>;
}

/** One exchange's trace. */
export interface RequestTrace {
  /**
   * Starts one upstream attempt's span (kind CLIENT), a child of the request's span: retries and
   * fallbacks are its siblings. Returns the headers that carry its context upstream (`traceparent`,
   * `tracestate`).
   */
  attempt(target: Target, call: UpstreamRequest): AttemptTrace;
  /**
   * Ends the request's span with what the exchange became (status, error code, model, usage, cost):
   * call once, after the response hooks ran (pricing set the cost, the logger took the row).
   */
  end(ex: Exchange): void;
}

/** One attempt's span. */
export interface AttemptTrace {
  /** Lowercase header names and their values, to add to the upstream call. */
  readonly headers: Readonly<Record<string, string>>;
  /** Ends the span: the upstream's status (null when none arrived) and the attempt's error code (null when it served). */
  end(upstreamStatus: number | null, errorCode: string | null): void;
}
