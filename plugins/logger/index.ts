/**
 * logger: records one `llm_requests` row per model call that got past authentication, denials and
 * errors included, a body the gateway refused too (it is the outermost plugin after auth-guard, so it
 * sees the final outcome); and one per metered operation (`isMeteredOperation`: token counts,
 * `models.retrieve`), at cost 0, since they are limited like model calls and may call an upstream.
 * Writing happens in the background, never on the response path: the plugin owns the write-behind
 * queue (`core/request-log/write-behind.ts`) and offers it as the `writeBehind` service, so the budget's spend
 * of a request commits in the same transaction as its log row. Durability window: `flushIntervalMs`
 * (50 ms by default) of acknowledged requests on a crash; nothing on a graceful stop.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isMeteredOperation, isModelOperation } from '../../core/dialects/index.ts';
import { servedModelName } from '../../core/dialects/model-field.ts';
import { UNKNOWN_ENDPOINT } from '../../core/routes.ts';

import { definePlugin } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { nowIso } from '../../core/store/store.ts';
import { loggerSchema, type LoggerConfig } from './schema.ts';
import type { RequestLogRow } from '../../core/request-log/request-log-row.ts';
import { createWriteBehind } from '../../core/request-log/write-behind.ts';
import { createWriteTarget } from '../../core/request-log/write-target.ts';
import { Counter, Gauge } from 'prom-client';

/** A usage report longer than this (an upstream padding it with junk) is not kept: its counts are. */
const MAX_USAGE_REPORT_CHARS = 4_096;

/** The upstream's usage report as JSON, when there is one of a sane size. */
function reportedUsageJson(ex: Exchange): string | null {
  if (!ex.usageReport) return null;
  const json = JSON.stringify(ex.usageReport);
  return json.length <= MAX_USAGE_REPORT_CHARS ? json : null;
}

// A price is one frozen object per model, shared by its requests: its JSON is made once.
const priceJson = new WeakMap<object, string>();

/** The price a request was billed at, as JSON (`billed_price`). */
function billedPriceJson(price: object): string {
  let json = priceJson.get(price);
  if (json === undefined) priceJson.set(price, (json = JSON.stringify(price)));
  return json;
}

/**
 * The log row for a finished exchange. Latencies are whole ms from arrival. A metered operation costs
 * 0 (never null: it was not left unpriced, it is free); `models.retrieve` names its model by the path.
 */
export function rowFor(ex: Exchange, nowPerfMs: number): RequestLogRow {
  return {
    request_id: ex.id,
    gateway_user_id: ex.principal?.gatewayUserId ?? null,
    api_key_id: ex.principal?.apiKeyId ?? null,
    provider: ex.target?.provider ?? null,
    // The path's model is not checked against the body's MAX_MODEL_CHARS (no schema): cut the same
    // way, or any length would be kept in the row and in the usage rollup's key.
    model_requested: ex.request?.model ?? servedModelName(ex.params.model),
    model_served: ex.modelServed,
    status: ex.status,
    error_code: ex.errorCode,
    prompt_tokens: ex.usage?.promptTokens ?? null,
    completion_tokens: ex.usage?.completionTokens ?? null,
    cached_tokens: ex.usage?.cachedTokens ?? null,
    cache_write_tokens: ex.usage?.cacheWriteTokens ?? null,
    cost_nanos: ex.cost?.totalNanos ?? (isMeteredOperation(ex.operation) ? 0 : null),
    usage_estimated: ex.usageEstimated ? 1 : 0,
    unpriced: ex.cost?.unpriced ? 1 : 0,
    latency_ms: Math.round(nowPerfMs - ex.startedAtPerfMs),
    ttft_ms: ex.firstByteAtPerfMs === null ? null : Math.round(ex.firstByteAtPerfMs - ex.startedAtPerfMs),
    stream: ex.stream ? 1 : 0,
    created_at: nowIso(ex.startedAtMs),
    endpoint: ex.operation,
    attempts: ex.attempts && ex.attempts.length > 0 ? JSON.stringify(ex.attempts) : null,
    usage_reported: reportedUsageJson(ex),
    billed_price: ex.cost?.price ? billedPriceJson(ex.cost.price) : null,
    error_plugin: ex.errorPlugin ?? null,
    plugin_fields: ex.logFields === null ? null : JSON.stringify(ex.logFields),
    tags: ex.principal?.keyTags ?? null,
    team_id: ex.principal?.team?.id ?? null,
    upstream_key: ex.target?.upstreamKey ?? null,
  };
}

function createLogger(config: LoggerConfig, ctx: PluginContext): Plugin {
  // Every request the budget settles is a model call, which gets a row here: its spend waits for it.
  const writer = createWriteBehind(createWriteTarget(ctx.store), config, ctx.log, { joinRequests: true });
  ctx.services.provide('writeBehind', writer);
  ctx.services.provide('requestLog', { flush: () => writer.flush(), depth: () => writer.depth(), status: () => writer.status() });
  new Gauge({
    name: 'tollgate_log_queue_depth',
    help: 'Request-log rows waiting in memory to be written to the database.',
    registers: [ctx.metrics],
    collect() {
      this.set(writer.depth());
    },
  });
  new Gauge({
    name: 'tollgate_log_writes_failing',
    help: '1 while the database refuses the request log\'s writes for now (down, restarting, locked, full, read-only): they are kept in memory, up to maxQueueSize, and retried.',
    registers: [ctx.metrics],
    collect() {
      this.set(writer.status().failing ? 1 : 0);
    },
  });
  new Counter({
    name: 'tollgate_log_writes_dropped_total',
    help: 'Request-log rows and spends dropped because the queue was full while the database was unavailable.',
    registers: [ctx.metrics],
    collect() {
      this.reset();
      this.inc(writer.status().dropped);
    },
  });
  return {
    name: 'logger',
    // Reads nothing of the body: the body is parsed after it, so a request whose body fails (malformed
    // JSON, a wrong type, too large) is logged too, with its 400 or 413.
    headersOnly: true,
    onResponseEnd(ex) {
      // Model calls, metered operations, and a user's requests to endpoints that do not exist (a wrong
      // base URL shows in their log); anonymous probes of unknown paths write nothing, so strangers
      // cannot fill the table.
      const logged = isModelOperation(ex.operation) || isMeteredOperation(ex.operation) || (ex.operation === UNKNOWN_ENDPOINT && ex.principal);
      // A spend settled for a request that gets no row is queued on its own.
      if (!logged) return writer.release(ex.id);
      writer.enqueue({ kind: 'request', group: ex.id, row: rowFor(ex, performance.now()) });
    },
    // On PostgreSQL the final flush is asynchronous: the gateway awaits it before closing the store.
    close() {
      return writer.close();
    },
  };
}

export const logger = definePlugin<LoggerConfig>({
  name: 'logger',
  description: 'Writes one llm_requests row per model call (every dialect\'s) and per metered operation (token counts, models.retrieve), in background batches.',
  configSchema: loggerSchema,
  order: [
    { relation: 'before', plugin: 'rate-limit', why: 'it records rate-limit refusals, which only plugins listed before the refusing one see' },
    { relation: 'before', plugin: 'budget', why: 'it records budget refusals, which only plugins listed before the refusing one see' },
    { relation: 'before', plugin: 'pricing', why: 'on the way back (reverse order) it must write the row after pricing set the cost' },
  ],
  create: createLogger,
});
