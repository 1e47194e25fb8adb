/**
 * The metrics plugin: through the whole gateway (OpenAI simulator upstream) for what the gateway can
 * produce today, and by calling the plugin's hooks with hand-made exchanges for outcomes other
 * plugins produce (cost, refusals, estimated usage, mid-stream errors).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { startOpenAISimulator, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../../core/runtime/metrics.ts';
import { createLog } from '../../core/runtime/log.ts';
import { budgetExceeded, modelNotFound, rateLimitExceeded, upstreamError } from '../../core/errors.ts';
import type { GatewayError } from '../../core/errors.ts';
import type { Exchange } from '../../core/exchange.ts';
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { metrics as metricsFactory } from '../../plugins/metrics/index.ts';
import { metricsSchema, type MetricsConfig } from '../../plugins/metrics/schema.ts';

/** Sample lines of a Prometheus text exposition, `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const req = (provider: string, model: string, status: number, operation = 'chat.completions') =>
  `tollgate_requests_total{operation="${operation}",provider="${provider}",model="${model}",status="${status}"}`;
const tokens = (provider: string, model: string, kind: string) =>
  `tollgate_tokens_total{provider="${provider}",model="${model}",kind="${kind}"}`;

describe('GET /metrics through the gateway', () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let scrape: Response;
  let text: string;
  let values: Map<string, number>;

  before(async () => {
    sim = await startOpenAISimulator();
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } } });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await tg.client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const stream = await tg.client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
    for await (const _chunk of stream);
    await assert.rejects(tg.client.chat.completions.create({ model: 'sim-500', messages }), { status: 502 });
    await assert.rejects(tg.client.chat.completions.create({ model: 'no-such-model', messages }), { status: 404 });
    // A provider-prefixed model is forwarded even when unlisted; this one the upstream does not know.
    await assert.rejects(tg.client.chat.completions.create({ model: 'openai/sim-404', messages }), { status: 404 });
    await tg.client.models.list();
    // A body refused after authentication (malformed JSON) is counted too.
    const refused = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' }, body: '{"model":' });
    assert.equal(refused.status, 400);
    // Response-end hooks run after the client has its answer: wait until every request was recorded
    // (up to 30 s, a liveness bound for a busy machine).
    for (const deadline = Date.now() + 30_000; ;) {
      scrape = await fetch(`${tg.gateway.origin}/metrics`);
      text = await scrape.text();
      values = samples(text);
      if (values.get('tollgate_in_flight_requests') === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  after(async () => {
    await tg?.close();
    await sim?.close();
  });

  test('answers without authentication in the Prometheus text format', () => {
    assert.equal(scrape.status, 200);
    assert.equal(scrape.headers.get('content-type'), Registry.PROMETHEUS_CONTENT_TYPE);
    assert.match(text, /^# HELP tollgate_requests_total /m);
    assert.match(text, /^# TYPE tollgate_request_duration_seconds histogram$/m);
    assert.equal(values.get('tollgate_in_flight_requests'), 0);
  });

  test('counts requests by operation, provider, model and status', () => {
    assert.equal(values.get(req('', '', 400)), 1, 'the request refused for its body');
    assert.equal(values.get(req('openai', 'gpt-4o-mini', 200)), 2);
    assert.equal(values.get(req('openai', '', 502)), 1);
    assert.equal(values.get(req('', '', 404)), 1);
    assert.equal(values.get(req('openai', '', 404)), 1);
    assert.equal(values.get(req('', '', 200, 'models.list')), 1);
  });

  test('gives no label value to a model the provider never served', () => {
    assert.doesNotMatch(text, /model="(sim-404|sim-500|no-such-model)"/);
  });

  test('counts the tokens the upstream reported, cached as a part of prompt', () => {
    assert.equal(values.get(tokens('openai', 'gpt-4o-mini', 'prompt')), 2 * SIM_USAGE.prompt_tokens);
    assert.equal(values.get(tokens('openai', 'gpt-4o-mini', 'completion')), 2 * SIM_USAGE.completion_tokens);
    assert.equal(values.get(tokens('openai', 'gpt-4o-mini', 'cached')), 2 * (SIM_USAGE.prompt_tokens_details?.cached_tokens ?? 0));
    assert.equal(values.get(tokens('openai', 'gpt-4o-mini', 'cache_write')), 0);
    assert.equal(values.get('tollgate_estimated_usage_requests_total{provider="openai",model="gpt-4o-mini"}'), undefined);
  });

  test('counts upstream errors by provider and code', () => {
    const errors = [...values].filter(([name]) => name.startsWith('tollgate_upstream_errors_total{provider="openai",'));
    assert.equal(errors.reduce((sum, [, n]) => sum + n, 0), 2, JSON.stringify(errors));
    assert.equal(values.get('tollgate_upstream_errors_total{provider="openai",code="model_not_found"}'), 1);
  });

  test('observes durations of routed requests and the time to first token of streams', () => {
    assert.equal(values.get('tollgate_request_duration_seconds_count{provider="openai",model="gpt-4o-mini",stream="false"}'), 1);
    assert.equal(values.get('tollgate_request_duration_seconds_count{provider="openai",model="gpt-4o-mini",stream="true"}'), 1);
    assert.equal(values.get('tollgate_time_to_first_token_seconds_count{provider="openai",model="gpt-4o-mini"}'), 1);
    assert.equal(values.get('tollgate_time_to_first_token_seconds_count{provider="openai",model=""}'), undefined);
    // The unknown model was refused before routing: no latency recorded for it.
    assert.doesNotMatch(text, /^tollgate_request_duration_seconds_count\{provider="",/m);
  });

  test('counts no refusals when there were none', () => {
    assert.equal(values.get('tollgate_budget_refusals_total'), 0);
    assert.equal(values.get('tollgate_rate_limit_refusals_total'), 0);
  });
});

// ---- hooks called directly -------------------------------------------------------------------

const defaults: MetricsConfig = Object.fromEntries(
  Object.entries(metricsSchema.properties!).map(([key, schema]) => [key, schema.default]),
) as unknown as MetricsConfig;

interface Harness {
  registry: MetricsRegistry;
  plugin: Plugin<unknown>;
  logLines: string[];
  /** Runs the hooks a pipeline would: onRequest, onError (when given), onResponseEnd. */
  run(ex: Exchange, error?: GatewayError): Promise<void>;
  values(): Promise<Map<string, number>>;
}

async function harness(config: Partial<MetricsConfig> = {}): Promise<Harness> {
  const registry = createMetricsRegistry();
  const logLines: string[] = [];
  const ctx = { metrics: registry, log: createLog('warn', (line) => logLines.push(line)) } as unknown as PluginContext;
  const plugin = await metricsFactory.create({ ...defaults, ...config }, ctx);
  return {
    registry, plugin, logLines,
    async run(ex, error) {
      const state = plugin.createState!(ex);
      await plugin.onRequest!(ex, state);
      if (error) {
        ex.status = error.status;
        ex.errorCode = error.code;
        plugin.onError!(ex, state, error);
      }
      await plugin.onResponseEnd!(ex, state);
    },
    values: async () => samples(await registry.metrics()),
  };
}

let ids = 0;
function exchange(fields: Partial<Exchange> = {}): Exchange {
  const startedAtPerfMs = performance.now();
  return {
    id: `req_${++ids}`, operation: 'chat.completions', method: 'POST', path: '/api/v1/chat/completions',
    headers: {}, params: {}, query: {}, startedAtMs: 0, startedAtPerfMs, signal: new AbortController().signal,
    dialect: null, request: null, clientBody: null, untranslatable: null, refusal: null, stream: false, clientWantsUsage: false, principal: null, target: null, modelServed: null,
    usage: null, usageEstimated: false, usageReport: null, promptTokensEstimate: null, generated: [], upstreamStatus: null,
    cost: null, status: 200, errorCode: null, firstByteAtPerfMs: null, clientAborted: false,
    responseHeaders: {}, logFields: null, states: [],
    ...fields,
  };
}

const target = { provider: 'anthropic', model: 'claude-sonnet-4-5' };
const usage = { promptTokens: 1_000, completionTokens: 200, cachedTokens: 600, cacheWriteTokens: 100 };
const cost = (totalNanos: number, unpriced = false) =>
  ({ totalNanos, inputNanos: totalNanos, cachedInputNanos: 0, cacheWriteNanos: 0, outputNanos: 0, unpriced, price: null });

describe('metrics plugin hooks', () => {
  test('sums cost in USD and tokens by kind for a served model', async () => {
    const h = await harness();
    await h.run(exchange({ target, upstreamStatus: 200, usage, cost: cost(1_500_000) }));
    await h.run(exchange({ target, upstreamStatus: 200, usage, cost: cost(2_500_000), stream: true }));
    const v = await h.values();
    assert.equal(v.get('tollgate_cost_usd_total{provider="anthropic",model="claude-sonnet-4-5"}'), 0.004);
    assert.equal(v.get(tokens('anthropic', 'claude-sonnet-4-5', 'prompt')), 2_000);
    assert.equal(v.get(tokens('anthropic', 'claude-sonnet-4-5', 'completion')), 400);
    assert.equal(v.get(tokens('anthropic', 'claude-sonnet-4-5', 'cached')), 1_200);
    assert.equal(v.get(tokens('anthropic', 'claude-sonnet-4-5', 'cache_write')), 200);
    assert.equal(v.get(req('anthropic', 'claude-sonnet-4-5', 200)), 2);
  });

  test('counts an unpriced request without adding cost', async () => {
    const h = await harness();
    await h.run(exchange({ target, upstreamStatus: 200, usage, cost: cost(0, true) }));
    const v = await h.values();
    assert.equal(v.get('tollgate_unpriced_requests_total{provider="anthropic",model="claude-sonnet-4-5"}'), 1);
    assert.equal(v.get('tollgate_cost_usd_total{provider="anthropic",model="claude-sonnet-4-5"}'), 0);
  });

  test('counts a disconnected stream billed from an estimate', async () => {
    const h = await harness();
    const startedAtPerfMs = performance.now();
    await h.run(exchange({
      target, upstreamStatus: 200, stream: true, usage, usageEstimated: true, clientAborted: true,
      status: 499, errorCode: 'client_disconnected', startedAtPerfMs, firstByteAtPerfMs: startedAtPerfMs + 1,
    }));
    const v = await h.values();
    assert.equal(v.get('tollgate_estimated_usage_requests_total{provider="anthropic",model="claude-sonnet-4-5"}'), 1);
    assert.equal(v.get('tollgate_client_disconnects_total{provider="anthropic",model="claude-sonnet-4-5"}'), 1);
    assert.equal(v.get(req('anthropic', 'claude-sonnet-4-5', 499)), 1);
    assert.equal(v.get('tollgate_time_to_first_token_seconds_count{provider="anthropic",model="claude-sonnet-4-5"}'), 1);
    assert.equal(v.get('tollgate_time_to_first_token_seconds_bucket{le="0.05",provider="anthropic",model="claude-sonnet-4-5"}'), 1);
    // A client leaving is not an upstream failure.
    assert.doesNotMatch(await h.registry.metrics(), /^tollgate_upstream_errors_total\{/m);
  });

  test('counts budget and rate-limit refusals, and an upstream 429 as an upstream error instead', async () => {
    const h = await harness();
    await h.run(exchange(), budgetExceeded('Budget spent; it resets at 2025-01-01T00:00:00Z.'));
    await h.run(exchange(), rateLimitExceeded('Too many requests.', 1_000));
    await h.run(exchange(), rateLimitExceeded('Too many requests.', 1_000));
    const upstream429 = upstreamError({ status: 429, code: 'rate_limit_exceeded', message: 'slow down' });
    await h.run(exchange({ target, upstreamStatus: 429 }), upstream429);
    const v = await h.values();
    assert.equal(v.get('tollgate_budget_refusals_total'), 1);
    assert.equal(v.get('tollgate_rate_limit_refusals_total'), 2);
    assert.equal(v.get('tollgate_upstream_errors_total{provider="anthropic",code="rate_limit_exceeded"}'), 1);
    assert.equal(v.get(req('', '', 402)), 1);
    assert.equal(v.get(req('', '', 429)), 2);
    assert.equal(v.get(req('anthropic', '', 429)), 1);
  });

  test('counts an error after the stream started as an upstream error', async () => {
    const h = await harness();
    await h.run(exchange({ target, upstreamStatus: 200, stream: true, status: 502, errorCode: 'overloaded' }));
    const v = await h.values();
    assert.equal(v.get('tollgate_upstream_errors_total{provider="anthropic",code="overloaded"}'), 1);
  });

  test('does not count a gateway error after a 2xx upstream answer as an upstream error', async () => {
    const h = await harness();
    await h.run(exchange({ target, upstreamStatus: 200 }), modelNotFound('x'));
    assert.doesNotMatch(await h.registry.metrics(), /^tollgate_upstream_errors_total\{/m);
  });

  test('keeps a served model label for its later failures, but never labels a model the provider refused', async () => {
    const h = await harness();
    const invented = { provider: 'anthropic', model: 'made-up' };
    await h.run(exchange({ target: invented, upstreamStatus: 404 }), upstreamError({ status: 404, code: 'not_found_error', message: 'no' }));
    await h.run(exchange({ target, upstreamStatus: 200 }));
    await h.run(exchange({ target, upstreamStatus: 500 }), upstreamError({ status: 502, message: 'boom' }));
    const v = await h.values();
    assert.equal(v.get(req('anthropic', '', 404)), 1);
    assert.equal(v.get(req('anthropic', 'claude-sonnet-4-5', 502)), 1);
    assert.doesNotMatch(await h.registry.metrics(), /made-up/);
  });

  test('counts models past maxModels under model "" and warns once', async () => {
    const h = await harness({ maxModels: 1 });
    await h.run(exchange({ target: { provider: 'openai', model: 'a' }, upstreamStatus: 200 }));
    await h.run(exchange({ target: { provider: 'openai', model: 'b' }, upstreamStatus: 200 }));
    await h.run(exchange({ target: { provider: 'openai', model: 'c' }, upstreamStatus: 200 }));
    const v = await h.values();
    assert.equal(v.get(req('openai', 'a', 200)), 1);
    assert.equal(v.get(req('openai', '', 200)), 2);
    assert.equal(h.logLines.filter((line) => line.includes('maxModels')).length, 1);
  });

  test('caps distinct upstream error codes per provider', async () => {
    const h = await harness();
    for (let i = 0; i < 52; i++) {
      await h.run(exchange({ target, upstreamStatus: 400 }), upstreamError({ status: 400, code: `code_${i}`, message: 'bad' }));
    }
    const v = await h.values();
    assert.equal(v.get('tollgate_upstream_errors_total{provider="anthropic",code="code_49"}'), 1);
    assert.equal(v.get('tollgate_upstream_errors_total{provider="anthropic",code="other"}'), 2);
  });

  test('tracks requests in flight between onRequest and onResponseEnd', async () => {
    const h = await harness();
    const ex = exchange();
    const state = h.plugin.createState!(ex);
    await h.plugin.onRequest!(ex, state);
    assert.equal((await h.values()).get('tollgate_in_flight_requests'), 1);
    await h.plugin.onResponseEnd!(ex, state);
    assert.equal((await h.values()).get('tollgate_in_flight_requests'), 0);
  });

  test('durations observed between scrapes all reach the histogram, also past what waits in memory', async () => {
    // One bucket at 60 s, and half the exchanges started 120 s before they end: a busy machine cannot
    // stretch an exchange that starts now past the bucket (one at 1 s it could).
    const h = await harness({ durationBuckets: [60] });
    // Several times the 1,024 observations a series holds before handing them over without a scrape.
    const n = 5_000;
    for (let i = 0; i < n; i++) {
      await h.run(exchange({ target, upstreamStatus: 200, startedAtPerfMs: performance.now() - (i % 2 === 0 ? 0 : 120_000) }));
    }
    const v = await h.values();
    const series = 'provider="anthropic",model="claude-sonnet-4-5",stream="false"';
    assert.equal(v.get(`tollgate_request_duration_seconds_count{${series}}`), n);
    assert.equal(v.get(`tollgate_request_duration_seconds_bucket{le="60",${series}}`), n / 2, 'half took under 60 s');
    assert.ok(v.get(`tollgate_request_duration_seconds_sum{${series}}`)! >= (n / 2) * 120, 'the 120 s half is in the sum');
    await h.run(exchange({ target, upstreamStatus: 200 }));
    assert.equal((await h.values()).get(`tollgate_request_duration_seconds_count{${series}}`), n + 1, 'a scrape takes only what came since');
  });

  test('uses the configured duration buckets, sorted', async () => {
    const h = await harness({ durationBuckets: [3, 1] });
    await h.run(exchange({ target, upstreamStatus: 200 }));
    const v = await h.values();
    const buckets = [...v.keys()].filter((k) => k.startsWith('tollgate_request_duration_seconds_bucket'));
    assert.deepEqual(buckets.map((k) => /le="([^"]+)"/.exec(k)![1]), ['1', '3', '+Inf']);
  });
});
