/**
 * OpenTelemetry traces through the whole gateway (docs/tracing.md): a real OTLP/HTTP receiver on
 * 127.0.0.1 gets one trace per request, its SERVER span carrying the GenAI attributes that agree with
 * the log row (tokens, cost), one CLIENT child span per upstream attempt (a fallback's attempts are
 * siblings), a client's `traceparent` continued and the attempt's sent upstream; nothing when tracing
 * is off; no prompt or answer text unless `capturePrompts`; an unreachable collector never fails a request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { SIM_REPLY, SIM_USAGE, startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { SPAN_KIND, STATUS_CODE, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { eventually } from '../../helpers/eventually.ts';
import { freePort } from '../../helpers/free-port.ts';

const PROMPT = 'A secret prompt the traces must not carry';
const messages = [{ role: 'user' as const, content: PROMPT }];
const PRICES = [{ model: 'gpt-4o-mini', input: 0.15, output: 0.6 }];

let sim: OpenAISimulator;
let receiver: OtlpReceiver;

const fallbackGroup = { strategy: 'fallback', deployments: [{ provider: 'sim', model: 'sim-500' }, { provider: 'sim', model: 'gpt-4o-mini' }] };

async function gatewayWith(options: { tracing?: Record<string, unknown>; env?: Record<string, string> }): Promise<TestGateway> {
  return startTestGateway({
    providers: { sim: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-sim' } },
    router: { models: { 'with-fallback': fallbackGroup } },
    dataDir: await dataDirWithPrices(PRICES),
    ...options,
  });
}

/** The SERVER span of `requestId` and the spans of its trace, once the receiver has the request span and `attempts` children. */
async function traceOf(requestId: string, attempts = 1): Promise<{ server: ReceivedSpan; children: ReceivedSpan[] }> {
  let found: { server: ReceivedSpan; children: ReceivedSpan[] } | null = null;
  await eventually(async () => {
    const server = receiver.spans.find((s) => s.attributes['tollgate.request_id'] === requestId);
    assert.ok(server, `no span for ${requestId}`);
    const children = receiver.spans.filter((s) => s.traceId === server.traceId && s.parentSpanId === server.spanId);
    assert.equal(children.length, attempts);
    found = { server, children: children.sort((a, b) => Number(a.attributes['tollgate.attempt']) - Number(b.attributes['tollgate.attempt'])) };
  });
  return found!;
}

/** The `traceparent` the simulator received whose trace id is `traceId`: version, trace, parent span, flags. */
function upstreamTraceparents(traceId: string): string[][] {
  return sim.requests
    .map((r) => r.headers.traceparent)
    .filter((h): h is string => typeof h === 'string' && h.split('-')[1] === traceId)
    .map((h) => h.split('-'));
}

before(async () => {
  sim = await startOpenAISimulator();
  receiver = await startOtlpReceiver();
});

after(async () => {
  await Promise.all([sim.close(), receiver.close()]);
});

describe('tracing on', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await gatewayWith({ tracing: { otlpEndpoint: receiver.tracesUrl, exportDelayMs: 20, serviceName: 'tollgate-test' } });
  });
  after(() => tg.close());

  test('a chat completion gives one SERVER span with the GenAI attributes, its tokens and cost those of the log row', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const row = await tg.logRow(requestId);
    const { server, children } = await traceOf(requestId);
    assert.equal(server.kind, SPAN_KIND.SERVER);
    assert.equal(server.parentSpanId, '');
    assert.equal(server.name, 'chat sim/gpt-4o-mini');
    assert.equal(server.statusCode, STATUS_CODE.UNSET);
    assert.equal(server.resource['service.name'], 'tollgate-test');
    const a = server.attributes;
    assert.equal(a['gen_ai.operation.name'], 'chat');
    assert.equal(a['gen_ai.request.model'], 'sim/gpt-4o-mini');
    assert.equal(a['gen_ai.response.model'], row.model_served);
    assert.equal(a['gen_ai.provider.name'], 'sim');
    assert.equal(a['gen_ai.usage.input_tokens'], row.prompt_tokens);
    assert.equal(a['gen_ai.usage.output_tokens'], row.completion_tokens);
    assert.equal(row.prompt_tokens, SIM_USAGE.prompt_tokens);
    assert.equal(a['gen_ai.usage.cache_read.input_tokens'], row.cached_tokens);
    assert.ok(row.cost_nanos! > 0, 'the request was priced');
    assert.equal(a['tollgate.cost_nanos'], row.cost_nanos);
    assert.equal(a['tollgate.cost_usd'], row.cost_nanos! / 1e9);
    assert.equal(a['tollgate.user_id'], tg.userId);
    assert.equal(typeof a['tollgate.user'], 'string');
    assert.equal(a['tollgate.endpoint'], 'chat.completions');
    assert.equal(a['http.response.status_code'], 200);
    assert.equal(a['error.type'], undefined);
    // The one attempt, a CLIENT child.
    assert.equal(children[0]!.kind, SPAN_KIND.CLIENT);
    assert.equal(children[0]!.attributes['gen_ai.provider.name'], 'sim');
    assert.equal(children[0]!.attributes['gen_ai.request.model'], 'gpt-4o-mini');
    assert.equal(children[0]!.attributes['http.response.status_code'], 200);
  });

  test('a stream\'s span has the tokens of its log row', async () => {
    const { data: stream, response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages, stream: true }).withResponse();
    for await (const _chunk of stream) { /* drain */ }
    const requestId = response.headers.get('x-request-id')!;
    const row = await tg.logRow(requestId);
    const { server } = await traceOf(requestId);
    assert.equal(server.attributes['tollgate.stream'], true);
    assert.equal(server.attributes['gen_ai.usage.input_tokens'], row.prompt_tokens);
    assert.equal(server.attributes['gen_ai.usage.output_tokens'], row.completion_tokens);
    assert.equal(server.attributes['tollgate.cost_nanos'], row.cost_nanos);
  });

  test('the attempt span\'s context goes upstream as traceparent', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages }).withResponse();
    const { server, children } = await traceOf(response.headers.get('x-request-id')!);
    const sent = upstreamTraceparents(server.traceId);
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0], ['00', server.traceId, children[0]!.spanId, '01']);
  });

  test('a fallback shows each attempt as a sibling CLIENT span, the failed one in error', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'with-fallback', messages }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const row = await tg.logRow(requestId);
    const attempts = JSON.parse(row.attempts!) as { model: string; status: number | null }[];
    assert.deepEqual(attempts.map((x) => x.model), ['sim-500', 'gpt-4o-mini']);
    const { server, children } = await traceOf(requestId, 2);
    assert.equal(server.statusCode, STATUS_CODE.UNSET);
    assert.equal(server.attributes['gen_ai.request.model'], 'with-fallback');
    assert.equal(server.attributes['tollgate.attempts'], 2);
    const [failed, served] = children;
    assert.equal(failed!.attributes['gen_ai.request.model'], 'sim-500');
    assert.equal(failed!.attributes['http.response.status_code'], 500);
    assert.equal(failed!.statusCode, STATUS_CODE.ERROR);
    assert.equal(typeof failed!.attributes['error.type'], 'string');
    assert.equal(served!.attributes['gen_ai.request.model'], 'gpt-4o-mini');
    assert.equal(served!.statusCode, STATUS_CODE.UNSET);
    // Each attempt sent its own span as the upstream's parent.
    const sent = upstreamTraceparents(server.traceId).map((parts) => parts[2]);
    assert.deepEqual(sent, [failed!.spanId, served!.spanId]);
  });

  test('a request that fails is a span in error with its error code', async () => {
    const { status, requestId } = await tg.post('/chat/completions', { model: 'sim/sim-404', messages });
    assert.equal(status, 404);
    const { server, children } = await traceOf(requestId);
    assert.equal(server.statusCode, STATUS_CODE.ERROR);
    assert.equal(server.attributes['error.type'], 'model_not_found');
    assert.equal(server.attributes['http.response.status_code'], 404);
    assert.equal(children[0]!.statusCode, STATUS_CODE.ERROR);
  });

  test('a client\'s traceparent is continued: same trace id, its span the parent, the same trace sent upstream', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpanId = '00f067aa0ba902b7';
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${clientSpanId}-01`, tracestate: 'vendor=x1' },
      body: JSON.stringify({ model: 'sim/gpt-4o-mini', messages }),
    });
    assert.equal(res.status, 200);
    const { server, children } = await traceOf(res.headers.get('x-request-id')!);
    assert.equal(server.traceId, traceId);
    assert.equal(server.parentSpanId, clientSpanId);
    const upstream = sim.requests.filter((r) => typeof r.headers.traceparent === 'string' && r.headers.traceparent.includes(traceId));
    assert.equal(upstream.length, 1);
    assert.equal(upstream[0]!.headers.traceparent, `00-${traceId}-${children[0]!.spanId}-01`);
    assert.equal(upstream[0]!.headers.tracestate, 'vendor=x1');
  });

  test('without capturePrompts no span carries the prompt or the answer', async () => {
    const { response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages }).withResponse();
    await traceOf(response.headers.get('x-request-id')!);
    const values = receiver.spans.flatMap((s) => Object.values(s.attributes)).map(String);
    assert.ok(values.length > 0, 'spans were received');
    assert.equal(values.filter((v) => v.includes(PROMPT) || v.includes(SIM_REPLY)).length, 0);
    assert.equal(receiver.spans.filter((s) => 'gen_ai.input.messages' in s.attributes || 'gen_ai.output.messages' in s.attributes).length, 0);
  });
});

describe('capturePrompts', () => {
  test('puts the messages and the answer on the request span, bounded', async () => {
    const tg = await gatewayWith({ tracing: { otlpEndpoint: receiver.tracesUrl, exportDelayMs: 20, capturePrompts: true, captureMaxChars: 64 } });
    try {
      const long = 'x'.repeat(500);
      const { response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: long }] }).withResponse();
      const { server } = await traceOf(response.headers.get('x-request-id')!);
      const input = JSON.parse(String(server.attributes['gen_ai.input.messages'])) as { role: string; parts: { type: string; content: string }[] }[];
      assert.deepEqual(input[0], { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] });
      assert.equal(input[1]!.role, 'user');
      assert.equal(input[1]!.parts[0]!.content, `${'x'.repeat(64 - 'Be brief.'.length)}…[truncated]`);
      const output = JSON.parse(String(server.attributes['gen_ai.output.messages'])) as { role: string; parts: { content: string }[]; finish_reason: string }[];
      assert.equal(output[0]!.role, 'assistant');
      assert.equal(output[0]!.parts[0]!.content, SIM_REPLY);
      assert.equal(output[0]!.finish_reason, 'stop');
    } finally {
      await tg.close();
    }
  });
});

describe('where the endpoint comes from', () => {
  test('OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME turn tracing on without a manifest section', async () => {
    const tg = await gatewayWith({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.baseUrl, OTEL_SERVICE_NAME: 'from-env' } });
    let requestId: string;
    try {
      const { response } = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages }).withResponse();
      requestId = response.headers.get('x-request-id')!;
    } finally {
      // The default 5 s batch delay is not waited for: shutting down exports what is queued.
      await tg.close();
    }
    const { server } = await traceOf(requestId);
    assert.equal(server.resource['service.name'], 'from-env');
  });

  test('tracing off (the default) exports nothing, and sends no traceparent upstream', async () => {
    const postsBefore = receiver.posts;
    const upstreamBefore = sim.requests.length;
    const tg = await gatewayWith({});
    try {
      for (let i = 0; i < 5; i++) await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages });
      await tg.client.chat.completions.create({ model: 'with-fallback', messages });
    } finally {
      await tg.close();
    }
    const offGateway = await gatewayWith({ tracing: { enabled: false }, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl } });
    try {
      await offGateway.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages });
    } finally {
      await offGateway.close();
    }
    assert.equal(receiver.posts, postsBefore);
    const upstream = sim.requests.slice(upstreamBefore);
    assert.ok(upstream.length >= 7, `the upstream got ${upstream.length} requests`);
    assert.equal(upstream.filter((r) => r.headers.traceparent !== undefined).length, 0);
  });

  test('an unreachable collector fails no request, and is logged', async () => {
    const tg = await gatewayWith({ tracing: { otlpEndpoint: `http://127.0.0.1:${await freePort()}/v1/traces`, exportDelayMs: 20 } });
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await tg.client.chat.completions.create({ model: 'sim/gpt-4o-mini', messages });
        assert.equal(answer.choices[0]!.message.content, SIM_REPLY);
      }
      // With a message: without one, assert parses the test's source to write its own, every poll.
      await eventually(async () => assert.ok(tg.serverLog.some((line) => line.includes('trace export failed')), 'no export failure logged yet'));
      assert.equal(tg.serverLog.filter((line) => line.includes('trace export failed')).length, 1, 'logged once a minute at most');
    } finally {
      await tg.close();
    }
  });
});
