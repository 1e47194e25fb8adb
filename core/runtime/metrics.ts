/**
 * The Prometheus registry every part of the gateway registers its metrics in (prom-client), and the
 * `GET /metrics` handler that serves it in the text exposition format. Process metrics (CPU, memory,
 * event-loop lag, GC) are collected with the `tollgate_` prefix. Metric names follow Prometheus
 * conventions: `_total` for counters, base units (`_seconds`, `_usd`) in the name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';

export type MetricsRegistry = Registry;

/** A fresh registry with the process metrics registered. One per gateway (tests run several). */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tollgate_' });
  return registry;
}

/** `GET /metrics`: the registry in Prometheus text format. */
export function metricsRoute(registry: MetricsRegistry) {
  return async function serveMetrics(_req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text), 'x-request-id': requestId });
    res.end(text);
  };
}
