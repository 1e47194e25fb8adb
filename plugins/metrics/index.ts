/**
 * metrics: Prometheus metrics of every authenticated request (`GET /metrics`, registered in
 * `ctx.metrics`). Listed right after the logger, so its `onResponseEnd` runs after pricing, budget
 * and rate-limit have settled and sees the final outcome, refusals included. The metric list is in
 * `request-metrics.ts`; this file turns a finished exchange into tally updates.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import type { GatewayError } from '../../core/errors.ts';
import { metricsSchema, type MetricsConfig } from './schema.ts';
import { createRequestMetrics, type RequestMetrics, type TargetTally } from './request-metrics.ts';

interface MetricsState {
  /** The error `onError` saw (errors before the response started); null when none. */
  error: GatewayError | null;
}

const served = (ex: Exchange) => ex.upstreamStatus !== null && ex.upstreamStatus >= 200 && ex.upstreamStatus < 300;

/**
 * The upstream error code of a finished exchange, or null. Errors before the response started reach
 * `onError`: an upstream failure (`upstream_error`: unreachable, timeout, 5xx) or any error answer of
 * the upstream (also those mapped to a gateway code, e.g. its "no such model" → `model_not_found`).
 * An error after the upstream accepted and the stream began never reaches `onError`; it is the
 * upstream's, unless the client left.
 */
function upstreamErrorCode(ex: Exchange, error: GatewayError | null): string | null {
  if (error) return error.type === 'upstream_error' || (ex.upstreamStatus !== null && !served(ex)) ? error.code : null;
  if (ex.errorCode === null || ex.clientAborted || ex.errorCode === 'client_disconnected') return null;
  return served(ex) ? ex.errorCode : null;
}

function count(tally: TargetTally, ex: Exchange): void {
  let byStatus = tally.requests.get(ex.operation);
  if (!byStatus) tally.requests.set(ex.operation, (byStatus = new Map<number, number>()));
  byStatus.set(ex.status, (byStatus.get(ex.status) ?? 0) + 1);
}

function countBilling(tally: TargetTally, ex: Exchange): void {
  const usage = ex.usage;
  if (usage) {
    tally.billed = true;
    tally.promptTokens += usage.promptTokens;
    tally.completionTokens += usage.completionTokens;
    tally.cachedTokens += usage.cachedTokens;
    tally.cacheWriteTokens += usage.cacheWriteTokens;
    if (ex.usageEstimated) tally.estimated++;
  }
  if (ex.cost) {
    tally.billed = true;
    if (ex.cost.unpriced) tally.unpriced++;
    else tally.costNanos += ex.cost.totalNanos;
  }
}

/** Records one finished exchange; `nowPerfMs` is `performance.now()` at its end. */
function recordExchange(metrics: RequestMetrics, ex: Exchange, error: GatewayError | null, nowPerfMs: number): void {
  const target = ex.target;
  const tally = metrics.tally(target?.provider ?? '', target?.model ?? '', served(ex));
  count(tally, ex);
  countBilling(tally, ex);
  if (ex.clientAborted) tally.disconnects++;
  if (target) {
    tally.observeDuration(ex.stream, (nowPerfMs - ex.startedAtPerfMs) / 1000);
    if (ex.stream && ex.firstByteAtPerfMs !== null) tally.observeTtft((ex.firstByteAtPerfMs - ex.startedAtPerfMs) / 1000);
  }
  const upstreamCode = upstreamErrorCode(ex, error);
  if (upstreamCode !== null) metrics.upstreamError(target?.provider ?? '', upstreamCode);
  // A refusal happens before forwarding; an upstream's own 429 has an upstream status.
  if (ex.upstreamStatus === null) {
    if (ex.errorCode === 'budget_exceeded') metrics.totals.budgetRefusals++;
    else if (ex.errorCode === 'rate_limit_exceeded') metrics.totals.rateLimitRefusals++;
  }
}

function createMetricsPlugin(config: MetricsConfig, ctx: PluginContext): Plugin<MetricsState> {
  const metrics = createRequestMetrics(ctx.metrics, config, ctx.log);
  return {
    name: 'metrics',
    createState: () => ({ error: null }),
    // Reads nothing of the body: a request refused for its body (400, 413) is counted too.
    headersOnly: true,
    // Never denies, so this plugin is entered, and its onResponseEnd runs, for every request counted here.
    onRequest() {
      metrics.totals.inFlight++;
    },
    onError(_ex, state, error) {
      state.error = error;
    },
    onResponseEnd(ex, state) {
      metrics.totals.inFlight--;
      recordExchange(metrics, ex, state.error, performance.now());
      for (const attempt of ex.attempts ?? []) metrics.upstreamAttempt(attempt.provider, attempt.errorCode === null);
    },
  };
}

export const metrics = definePlugin<MetricsConfig>({
  name: 'metrics',
  description: 'Counts requests, tokens, cost, latencies, upstream errors and refusals for GET /metrics (Prometheus).',
  configSchema: metricsSchema,
  order: [
    { relation: 'before', plugin: 'rate-limit', why: 'it counts rate-limit refusals, which only plugins listed before the refusing one see' },
    { relation: 'before', plugin: 'budget', why: 'it counts budget refusals, which only plugins listed before the refusing one see' },
    { relation: 'before', plugin: 'pricing', why: 'on the way back (reverse order) it must run after pricing set the cost it counts' },
  ],
  create: createMetricsPlugin,
});
