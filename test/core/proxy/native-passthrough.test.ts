/**
 * The native pass-through seam (docs/architecture.md "Dialects"): a provider that declares the client's
 * dialect native gets the client's own body with only the model and credential replaced plus the
 * dialect's allow-listed headers, and its answer's bytes are relayed unchanged while the gateway
 * observes them for usage and text. Driven over real HTTP: the real server, pipeline and proxy, the
 * router's own call builder (`upstreamCallFor`), a fake native provider and the OpenAI simulator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createPipeline } from '../../../core/pipeline.ts';
import { createGatewayServer, pipelineRoutes, type GatewayServer } from '../../../core/server.ts';
import { createUpstreamClient } from '../../../core/upstream/upstream-client.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { loadTokenEstimator } from '../../../core/tokens/token-estimate.ts';
import type { Exchange } from '../../../core/exchange.ts';
import type { ChatCompletionChunk } from '../../../core/canonical/chat-types.ts';
import type { Plugin } from '../../../core/plugin.ts';
import type { UpstreamCall } from '../../../core/upstream/upstream-call.ts';
import { OpenAIProvider } from '../../../plugins/provider-router/providers/openai/index.ts';
import type { NativeCallOptions } from '../../../plugins/provider-router/providers/base.ts';
import { splitBaseUrl } from '../../../plugins/provider-router/providers/base.ts';
import { upstreamCallFor } from '../../../plugins/provider-router/routing/upstream-call-for.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';

/** A provider that speaks `openai-chat` natively: its codec only observes the relayed answer. */
class FakeNativeProvider extends OpenAIProvider {
  override readonly name = 'Fake native';
  static readonly DIALECTS: ReadonlySet<string> = new Set(['openai-chat']);

  override get nativeDialects(): ReadonlySet<string> {
    return FakeNativeProvider.DIALECTS;
  }

  override buildNativeCall(_dialect: string, options: NativeCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(options.credential.baseUrl);
    return this.postNative(options, origin, `${basePath}/chat/completions`, this.codec(options.model));
  }
}

interface Observed {
  usage: Exchange['usage'];
  usageEstimated: boolean;
  status: number;
  errorCode: string | null;
  modelServed: string | null;
  chunks: number;
}

let sim: OpenAISimulator;
let server: GatewayServer;
let url: string;
const observed: Observed[] = [];
const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, maxResponseBytes: 1 << 20, connectionsPerOrigin: 8 });
const log = createLog('error', () => {});
const tokens = await loadTokenEstimator();

function router(): Plugin<{ chunks: number }> {
  const provider = new FakeNativeProvider('fake', { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-upstream-secret' }, upstream);
  return {
    name: 'router',
    createState: () => ({ chunks: 0 }),
    route(ex) {
      const model = ex.request!.model.replace(/^fake\//, '');
      ex.target = { provider: 'fake', model };
      return upstreamCallFor(ex, provider, { model, credential: provider.sharedCredential()! });
    },
    onResponseChunk(_ex, state, _chunk: ChatCompletionChunk) {
      state.chunks++;
    },
    onResponseEnd(ex, state) {
      observed.push({
        usage: ex.usage, usageEstimated: ex.usageEstimated, status: ex.status, errorCode: ex.errorCode, modelServed: ex.modelServed, chunks: state.chunks,
      });
    },
  };
}

before(async () => {
  sim = await startOpenAISimulator({ streamContentChunks: 4 });
  const pipeline = createPipeline([router()], { upstream, maxResponseBytes: 1 << 20, log, tokens });
  server = createGatewayServer({ pipeline, log, routes: pipelineRoutes([]), maxBodyBytes: 64 * 1024, drainTimeoutMs: 1_000 });
  const address: AddressInfo = await server.listen(0, '127.0.0.1');
  url = `http://127.0.0.1:${address.port}/api/v1/chat/completions`;
});
after(async () => {
  await server.shutdown();
  await upstream.close();
  await sim.close();
});

/** The client's body: fields the canonical request does not model must survive, in their order. */
const clientBody = (extra: Record<string, unknown> = {}) => ({
  model: 'fake/gpt-4o-mini',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
  x_vendor_field: { nested: [1, 2, 3] },
  ...extra,
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** The same request straight to the simulator, for byte comparison. */
async function direct(body: unknown): Promise<string> {
  const res = await fetch(`${sim.baseUrl}/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-secret' }, body: JSON.stringify(body),
  });
  return res.text();
}

/** Chat-completion ids and timestamps differ per call; everything else must be byte-identical. */
const normalize = (text: string) => text.replace(/"id":"[^"]*"/g, '"id":"X"').replace(/"created":\d+/g, '"created":0');

describe('native pass-through', () => {
  test('forwards the client body with only the model replaced, allow-listed headers, and the credential', async () => {
    const res = await post(clientBody(), { 'openai-beta': 'assistants=v2', 'x-not-allowed': 'dropped', authorization: 'Bearer sk-client-gateway-key' });
    assert.equal(res.status, 200);
    await res.text();
    const seen = sim.requests.at(-1)!;
    assert.deepEqual(seen.body, { ...clientBody(), model: 'gpt-4o-mini' });
    assert.deepEqual(Object.keys(seen.body), ['model', 'messages', 'x_vendor_field'], 'key order kept');
    assert.equal(seen.headers['openai-beta'], 'assistants=v2');
    assert.equal(seen.headers['x-not-allowed'], undefined);
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream-secret', 'the credential replaces the client key');
    assert.equal((seen.body as Record<string, unknown>).stream_options, undefined, 'nothing is added to a passed-through body');
  });

  test('relays a non-streamed answer byte for byte and bills its reported usage', async () => {
    const expected = await direct({ ...clientBody(), model: 'gpt-4o-mini' });
    const res = await post(clientBody());
    assert.equal(normalize(await res.text()), normalize(expected));
    const last = observed.at(-1)!;
    assert.equal(last.status, 200);
    assert.equal(last.usageEstimated, false);
    assert.ok(last.usage && last.usage.promptTokens > 0 && last.usage.completionTokens > 0);
    assert.equal(last.modelServed, 'gpt-4o-mini');
  });

  test('relays a stream byte for byte while observing its chunks and usage', async () => {
    const body = clientBody({ stream: true, stream_options: { include_usage: true } });
    const expected = await direct({ ...body, model: 'gpt-4o-mini' });
    const res = await post(body);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const text = await res.text();
    assert.equal(normalize(text), normalize(expected), 'the usage chunk and [DONE] pass unchanged');
    const last = observed.at(-1)!;
    assert.ok(last.chunks >= 5, `chunk hooks saw the canonical chunks (${last.chunks})`);
    assert.equal(last.usageEstimated, false);
    assert.ok(last.usage && last.usage.completionTokens > 0);
  });

  test('counts usage locally when the passed-through stream reports none', async () => {
    const res = await post(clientBody({ stream: true }));
    const text = await res.text();
    assert.doesNotMatch(text, /"usage":\{/, 'no usage chunk is added to bytes passed through');
    const last = observed.at(-1)!;
    assert.equal(last.usageEstimated, true);
    assert.ok(last.usage && last.usage.promptTokens > 0 && last.usage.completionTokens > 0);
  });

  test('an in-band upstream error reaches the client unchanged and is recorded', async () => {
    const res = await post(clientBody({ model: 'fake/sim-mid-error', stream: true }));
    const text = await res.text();
    assert.match(text, /"error":/);
    assert.equal(observed.at(-1)!.status, 502);
    assert.ok(observed.at(-1)!.errorCode);
  });

  test('a stream cut short ends with the dialect\'s error event', async () => {
    const res = await post(clientBody({ model: 'fake/sim-truncated', stream: true }));
    const text = await res.text();
    const last = text.trim().split('\n\n').at(-1)!;
    assert.equal(JSON.parse(last.slice('data: '.length)).error.code, 'upstream_stream_truncated');
    assert.equal(observed.at(-1)!.errorCode, 'upstream_stream_truncated');
  });

  test('an upstream error status is rendered in the dialect\'s error shape', async () => {
    const res = await post(clientBody({ model: 'fake/sim-404' }));
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'model_not_found');
  });
});
