/**
 * `RequestTracing` on the OpenTelemetry JS SDK: a `BasicTracerProvider` of its own (nothing is
 * registered globally, so the gateway neither reads nor disturbs another tracer in the process), a
 * `BatchSpanProcessor` and the OTLP/HTTP exporter (JSON). Contexts are passed explicitly, never
 * through a context manager: the request span is the parent of its attempts by construction, and no
 * `AsyncLocalStorage` work is added to the request path.
 *
 * An export never touches a request: spans are queued in memory (bounded, `maxQueueSize`; beyond it
 * they are dropped) and sent in the background. A failing export is logged at most once a minute,
 * with how many batches failed meanwhile.
 *
 * The SDK's packages are imported when tracing is configured, not with this module: loading them
 * costs every gateway and CLI process ~0.2-0.3 s of CPU at start, and most run without tracing.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { ExportResult, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { BasicTracerProvider, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Exchange, Target } from '../exchange.ts';
import type { UpstreamRequest } from '../upstream/upstream-call.ts';
import type { Log } from '../runtime/log.ts';
import { chatRequestOf } from '../canonical/canonical-request.ts';
import type { AttemptTrace, RequestTrace, RequestTracing } from './request-tracing.ts';
import type { TracingSettings } from './tracing-settings.ts';
import {
  attemptStartAttributes, ERROR_TYPE, GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES, genAiOperationOf, HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE, requestEndAttributes, URL_PATH,
} from './gen-ai-attributes.ts';
import { inputMessagesJson, outputMessagesJson } from './message-capture.ts';

/** How often a failing exporter is logged at most, ms. */
const EXPORT_FAILURE_LOG_EVERY_MS = 60_000;

/** How long the last export may take on shutdown before its spans are given up, ms. */
const SHUTDOWN_EXPORT_MS = 5_000;

/** What the tracer is built with besides its settings. */
export interface OtelTracingDeps {
  log: Log;
  /** Gateway version, the resource's `service.version`. */
  version: string;
}

/** `@opentelemetry/api`'s exports (module doc: imported when tracing is configured). */
type Api = typeof OtelApi;

/** Builds the tracer of `settings`. Nothing is sent until the first span ends. */
export async function createOtelTracing(settings: TracingSettings, deps: OtelTracingDeps): Promise<RequestTracing> {
  const [api, { ExportResultCode, W3CTraceContextPropagator }, { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'), import('@opentelemetry/core'), import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/resources'),
  ]);
  const exporter = loggingFailures(new OTLPTraceExporter({ url: settings.url, headers: settings.headers }), deps.log, settings.url, ExportResultCode.SUCCESS);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': deps.version }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.exportDelayMs })],
    // A backstop under message capture's own bound: no attribute value longer than this.
    spanLimits: { attributeValueLengthLimit: Math.max(settings.captureMaxChars * 2, 4_096) },
  });
  const tracer = provider.getTracer('tollgate', deps.version);
  const propagator = new W3CTraceContextPropagator();
  let closing: Promise<void> | null = null;
  return {
    begin: (ex) => beginRequest(api, tracer, propagator, settings, deps.log, ex),
    wantsAnswer: settings.capturePrompts,
    close() {
      closing ??= boundedShutdown(provider, deps.log);
      return closing;
    },
  };
}

/** The request span, started from the client's trace context when it sent one. */
function beginRequest(api: Api, tracer: Tracer, propagator: W3CTraceContextPropagator, settings: TracingSettings, log: Log, ex: Exchange): RequestTrace {
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace } = api;
  const parent = ex.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, ex.headers, defaultTextMapGetter);
  const span = tracer.startSpan(ex.operation, {
    kind: SpanKind.SERVER,
    attributes: { [HTTP_REQUEST_METHOD]: ex.method, [URL_PATH]: ex.path, 'tollgate.endpoint': ex.operation, 'tollgate.request_id': ex.id },
  }, parent);
  const spanContext = trace.setSpan(ROOT_CONTEXT, span);
  let attempts = 0;
  return {
    attempt(target: Target, call: UpstreamRequest): AttemptTrace {
      attempts += 1;
      return beginAttempt(api, tracer, propagator, spanContext, genAiOperationOf(ex), target, call, attempts);
    },
    end(done: Exchange) {
      // Called from the pipeline's `finally`: a surprise here must not become the request's failure.
      try {
        const operation = genAiOperationOf(done);
        span.setAttributes(requestEndAttributes(done, operation));
        if (settings.capturePrompts && span.isRecording()) captureMessages(span, done, settings.captureMaxChars);
        if (operation !== null && done.request) span.updateName(`${operation} ${done.request.model}`);
        if (done.errorCode !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: done.errorCode });
      } catch (err) {
        log.warn('request span attributes failed', { requestId: done.id, err });
      }
      span.end();
    },
  };
}

function beginAttempt(
  api: Api, tracer: Tracer, propagator: W3CTraceContextPropagator, parent: Context, operation: string | null,
  target: Target, call: UpstreamRequest, index: number,
): AttemptTrace {
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapSetter, trace } = api;
  const span = tracer.startSpan(`${operation ?? 'call'} ${target.model}`, { kind: SpanKind.CLIENT, attributes: attemptStartAttributes(target, call.origin, operation, index) }, parent);
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
  return {
    headers,
    end(upstreamStatus, errorCode) {
      if (upstreamStatus !== null) span.setAttribute(HTTP_RESPONSE_STATUS_CODE, upstreamStatus);
      if (errorCode !== null) {
        span.setAttribute(ERROR_TYPE, errorCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
      }
      span.end();
    },
  };
}

function captureMessages(span: Span, ex: Exchange, maxChars: number): void {
  const chat = chatRequestOf(ex.request);
  if (chat) span.setAttribute(GEN_AI_INPUT_MESSAGES, inputMessagesJson(chat.messages, maxChars));
  if (ex.answer) span.setAttribute(GEN_AI_OUTPUT_MESSAGES, outputMessagesJson(ex.answer, maxChars));
}

/** The exporter, its failures logged (rate-limited): the SDK itself reports them only to its silent diag logger. */
function loggingFailures(exporter: SpanExporter, log: Log, url: string, successCode: ExportResult['code']): SpanExporter {
  let lastLoggedAtMs = -Infinity;
  let failedSinceLog = 0;
  const report = (result: ExportResult) => {
    failedSinceLog += 1;
    const nowMs = Date.now();
    if (nowMs - lastLoggedAtMs < EXPORT_FAILURE_LOG_EVERY_MS) return;
    lastLoggedAtMs = nowMs;
    log.warn('trace export failed; spans dropped', { url, failedBatches: failedSinceLog, cause: result.error?.message ?? 'unknown' });
    failedSinceLog = 0;
  };
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code !== successCode) report(result);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** Flushes and stops the provider, waiting at most `SHUTDOWN_EXPORT_MS` for an unreachable collector. */
async function boundedShutdown(provider: BasicTracerProvider, log: Log): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_EXPORT_MS, 'timeout')));
  try {
    const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), timeout]);
    if (outcome === 'timeout') log.warn('trace export did not finish on shutdown; the last spans may be lost', { waitedMs: SHUTDOWN_EXPORT_MS });
  } catch (err) {
    log.warn('trace shutdown failed', { err });
  } finally {
    clearTimeout(timer);
  }
}
