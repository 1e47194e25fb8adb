/**
 * An OTLP/HTTP traces receiver on 127.0.0.1 (what an OpenTelemetry Collector's `otlphttp` receiver
 * accepts): `POST /v1/traces` with an `ExportTraceServiceRequest` in the OTLP JSON encoding
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: ids as hex strings, enums as
 * numbers, 64-bit integers as strings or numbers), answered `200 {}`. Every span received is kept,
 * flattened with its attributes as plain values, for tests to read. `fail` makes it answer 503.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './sim-http.ts';

/** OTLP `Span.SpanKind` and `Status.StatusCode` values. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const STATUS_CODE = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  statusCode: number;
  attributes: Record<string, AttributeValue>;
  /** The resource's attributes (`service.name`). */
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>/v1/traces` */
  readonly tracesUrl: string;
  /** `http://127.0.0.1:<port>`, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly baseUrl: string;
  readonly spans: ReceivedSpan[];
  /** POSTs received, failed ones included. */
  readonly posts: number;
  /** Answers 503 to every export while true. */
  fail: boolean;
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes?: OtlpKeyValue[];
}

interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: OtlpAnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let posts = 0;
  const receiver = {
    tracesUrl: '',
    baseUrl: '',
    spans,
    get posts() {
      return posts;
    },
    fail: false,
    close: () => closeServer(server),
  };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      posts += 1;
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (receiver.fail) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as OtlpRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind,
              statusCode: span.status?.code ?? 0, attributes: attributesOf(span.attributes), resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.baseUrl = `http://127.0.0.1:${port}`;
  receiver.tracesUrl = `${receiver.baseUrl}/v1/traces`;
  return receiver;
}
