/**
 * The pipeline runner's rules (core/plugin.ts): request phases in manifest order, response phases in
 * reverse for entered plugins only, deny by throwing, answer locally by returning a reply, per-exchange
 * state. Driven over real HTTP through the real server and, for streams, the OpenAI simulator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createPipeline } from '../../core/pipeline.ts';
import { chatRequestOf } from '../../core/canonical/canonical-request.ts';
import { createGatewayServer, pipelineRoutes, type GatewayServer } from '../../core/server.ts';
import { createUpstreamClient } from '../../core/upstream/upstream-client.ts';
import { createLog } from '../../core/runtime/log.ts';
import { loadTokenEstimator } from '../../core/tokens/token-estimate.ts';
import { permissionDenied } from '../../core/errors.ts';
import { reply, type Plugin } from '../../core/plugin.ts';
import { OpenAIProvider } from '../../plugins/provider-router/providers/openai/index.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';

type Behaviour = 'pass' | 'deny' | 'reply' | 'crash';

let sim: OpenAISimulator;
const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, maxResponseBytes: 1 << 20, connectionsPerOrigin: 8 });
const logLines: string[] = [];
const log = createLog('debug', (line) => logLines.push(line));
const tokens = await loadTokenEstimator();

before(async () => {
  sim = await startOpenAISimulator({ streamContentChunks: 3 });
});
after(async () => {
  await upstream.close();
  await sim.close();
});

/** A plugin that records every hook it sees into `events` and behaves as told in onRequest. */
function recorder(name: string, events: string[], behaviour: () => Behaviour = () => 'pass'): Plugin<{ hooks: number }> {
  return {
    name,
    createState: () => {
      events.push(`${name}.createState`);
      return { hooks: 0 };
    },
    onRequest(_ex, state) {
      state.hooks++;
      events.push(`${name}.onRequest`);
      const b = behaviour();
      if (b === 'deny') throw permissionDenied(`${name} says no`);
      if (b === 'reply') return reply(299, { from: name }, { 'x-from': name });
      if (b === 'crash') throw new Error('secret internal detail');
    },
    onError(_ex, state, error) {
      state.hooks++;
      events.push(`${name}.onError:${error.code}`);
    },
    onResponseStart(ex, state) {
      state.hooks++;
      events.push(`${name}.onResponseStart:${ex.status}`);
      ex.responseHeaders[`x-seen-by-${name}`] = String(state.hooks);
    },
    onResponseChunk(_ex, _state, chunk) {
      events.push(`${name}.chunk:${chunk.choices.length}`);
    },
    onResponseEnd(ex, state) {
      state.hooks++;
      events.push(`${name}.onResponseEnd:${ex.status}`);
    },
  };
}

function router(events: string[], mode: 'reply' | 'upstream' = 'reply'): Plugin {
  const provider = new OpenAIProvider('openai', { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' }, upstream);
  return {
    name: 'router',
    route(ex) {
      events.push('router.route');
      if (mode === 'reply') return reply(200, { routed: true });
      ex.target = { provider: 'openai', model: 'gpt-4o-mini' };
      return provider.buildChatCall(chatRequestOf(ex.request)!, { model: 'gpt-4o-mini', credential: provider.sharedCredential()! });
    },
    onResponseEnd() {
      events.push('router.onResponseEnd');
    },
  };
}

async function serve(plugins: Plugin<unknown>[]): Promise<{ url: string; server: GatewayServer }> {
  const pipeline = createPipeline(plugins, { upstream, maxResponseBytes: 1 << 20, log, tokens });
  const server = createGatewayServer({ pipeline, log, routes: pipelineRoutes([]), maxBodyBytes: 64 * 1024, drainTimeoutMs: 1_000 });
  const address: AddressInfo = await server.listen(0, '127.0.0.1');
  return { url: `http://127.0.0.1:${address.port}/api/v1/chat/completions`, server };
}

const body = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });

/** onResponseEnd runs after the last byte; give it a tick before reading `events`. */
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('pipeline ordering', () => {
  test('request hooks run in manifest order and response hooks in reverse', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), recorder('b', events), router(events)]);
    const res = await fetch(url, { method: 'POST', body: body() });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { routed: true });
    await settle();
    await server.shutdown();
    assert.deepEqual(events, [
      'a.createState', 'a.onRequest', 'b.createState', 'b.onRequest', 'router.route',
      'b.onResponseStart:200', 'a.onResponseStart:200',
      'router.onResponseEnd', 'b.onResponseEnd:200', 'a.onResponseEnd:200',
    ]);
  });

  test('state is created once per exchange and shared by that plugin\'s hooks', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), router(events)]);
    const res = await fetch(url, { method: 'POST', body: body() });
    await settle();
    await server.shutdown();
    // onRequest (1) then onResponseStart (2): the header shows the same state object counted both.
    assert.equal(res.headers.get('x-seen-by-a'), '2');
    assert.equal(events.filter((e) => e === 'a.createState').length, 1);
  });

  test('stream chunks reach chunk hooks in reverse order, usage chunk included', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), recorder('b', events), router(events, 'upstream')]);
    const res = await fetch(url, { method: 'POST', body: body({ stream: true }) });
    const text = await res.text();
    await settle();
    await server.shutdown();
    assert.match(text, /data: \[DONE\]\n\n$/);
    const chunkEvents = events.filter((e) => e.includes('.chunk:'));
    // role + 3 content + finish + usage-only chunk, each seen by b then a.
    assert.equal(chunkEvents.length, 12);
    assert.deepEqual(chunkEvents.slice(0, 2), ['b.chunk:1', 'a.chunk:1']);
    assert.deepEqual(chunkEvents.slice(-2), ['b.chunk:0', 'a.chunk:0']);
    assert.ok(events.indexOf('a.onResponseStart:200') < events.indexOf('b.chunk:1'));
  });
});

describe('short-circuit and the entered set', () => {
  test('a deny skips later plugins and the router; only entered plugins see the response phases', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), recorder('b', events, () => 'deny'), recorder('c', events), router(events)]);
    const res = await fetch(url, { method: 'POST', body: body() });
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: { message: 'b says no', type: 'permission_error', code: 'permission_denied', param: null } });
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal(res.headers.get('x-seen-by-a'), '3');
    await settle();
    await server.shutdown();
    assert.deepEqual(events, [
      'a.createState', 'a.onRequest', 'b.createState', 'b.onRequest',
      'a.onError:permission_denied', 'a.onResponseStart:403', 'a.onResponseEnd:403',
    ]);
  });

  test('a local reply skips later plugins; the replying plugin is entered', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), recorder('b', events, () => 'reply'), recorder('c', events), router(events)]);
    const res = await fetch(url, { method: 'POST', body: body() });
    assert.equal(res.status, 299);
    assert.equal(res.headers.get('x-from'), 'b');
    assert.deepEqual(await res.json(), { from: 'b' });
    await settle();
    await server.shutdown();
    assert.ok(!events.some((e) => e.startsWith('c.') || e.startsWith('router.')), events.join());
    assert.deepEqual(events.filter((e) => e.includes('onResponseEnd')), ['b.onResponseEnd:299', 'a.onResponseEnd:299']);
  });

  test('an unexpected throw becomes 500 internal_error; the detail goes only to the server log', async () => {
    const events: string[] = [];
    const { url, server } = await serve([recorder('a', events), recorder('b', events, () => 'crash'), router(events)]);
    const res = await fetch(url, { method: 'POST', body: body() });
    const text = await res.text();
    await settle();
    await server.shutdown();
    assert.equal(res.status, 500);
    assert.equal(JSON.parse(text).error.code, 'internal_error');
    assert.doesNotMatch(text, /secret internal detail/);
    assert.ok(logLines.some((l) => l.includes('secret internal detail')));
    assert.ok(events.includes('a.onError:internal_error'));
  });

  test('a pipeline whose router is not last is refused at boot', () => {
    const events: string[] = [];
    assert.throws(() => createPipeline([router(events), recorder('a', events)] as Plugin<unknown>[], { upstream, maxResponseBytes: 1, log, tokens }), /must be the last one/);
  });
});
