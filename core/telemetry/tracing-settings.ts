/**
 * Where traces go, from the manifest's `tracing` section and the standard OpenTelemetry environment
 * variables (https://opentelemetry.io/docs/specs/otel/protocol/exporter/,
 * https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 *
 * Precedence: what the manifest sets wins; the environment fills what it leaves out. Tracing is on
 * when an endpoint is known (`tracing.otlpEndpoint`, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` used
 * as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`), unless `tracing.enabled` is false or
 * `OTEL_SDK_DISABLED` is `true`. Off, nothing of the SDK is even built.
 */

/** The manifest's `tracing` section, defaults filled in by the schema (`core/manifest-schema.ts`). */
export interface TracingSection {
  /** false: off whatever the environment says; absent or true: on when an endpoint is known. */
  enabled?: boolean;
  /** OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`; absent = from the environment. */
  otlpEndpoint?: string;
  /** Headers sent with every export (an API key of a hosted backend). */
  headers?: Record<string, string>;
  /** `service.name` of the resource; absent = `OTEL_SERVICE_NAME`, else `tollgate`. */
  serviceName?: string;
  /** Share of new traces kept, 0..1 (a client's `traceparent` decides for the traces it continues). */
  sampleRatio: number;
  /** Puts the request's messages and the answer on the request span (`gen_ai.input.messages` / `gen_ai.output.messages`). */
  capturePrompts: boolean;
  /** Most characters of message text kept per attribute when `capturePrompts` is on. */
  captureMaxChars: number;
  /** Longest a finished span waits in the batch before it is sent, ms. */
  exportDelayMs: number;
}

/** What the tracer is built from, once resolved. */
export interface TracingSettings {
  /** The full OTLP/HTTP traces URL. */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
  capturePrompts: boolean;
  captureMaxChars: number;
  exportDelayMs: number;
}

/** The OTLP/HTTP path of traces under a base endpoint (the spec's signal path). */
const TRACES_PATH = '/v1/traces';

/**
 * The resolved settings, or null when tracing is off (the default: no section and no endpoint in
 * the environment). `env` is the process's environment (`StartGatewayOptions.env`).
 */
export function resolveTracing(section: TracingSection | undefined, env: NodeJS.ProcessEnv): TracingSettings | null {
  if (section?.enabled === false || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const url = section?.otlpEndpoint || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || tracesUrlOf(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!url) return null;
  return {
    url,
    headers: section?.headers ?? {},
    serviceName: section?.serviceName || env.OTEL_SERVICE_NAME || 'tollgate',
    sampleRatio: section?.sampleRatio ?? 1,
    capturePrompts: section?.capturePrompts ?? false,
    captureMaxChars: section?.captureMaxChars ?? 8_192,
    exportDelayMs: section?.exportDelayMs ?? 5_000,
  };
}

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is a base for every signal: traces are under `/v1/traces`. */
function tracesUrlOf(base: string | undefined): string | null {
  if (!base) return null;
  return base.replace(/\/+$/, '') + TRACES_PATH;
}
