/**
 * `onResponseComplete` (core/plugin.ts): the final answer object reaches the hook BEFORE the answer's
 * last bytes, and the core waits for the hook's promise. A hook that holds its promise open keeps the
 * final event (or the whole non-streamed body) from the client until it resolves. Driven over real
 * HTTP through the real server, pipeline and proxy: translated (OpenAI chat simulator, rendered as a
 * Responses answer) and native (OpenAI Responses simulator, relayed byte for byte).
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
import type { Plugin } from '../../core/plugin.ts';
import { OpenAIProvider } from '../../plugins/provider-router/providers/openai/index.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../helpers/openai-responses-simulator.ts';

let chatSim: OpenAISimulator;
let responsesSim: ResponsesSimulator;
let server: GatewayServer;
let origin: string;
const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, maxResponseBytes: 1 << 20, connectionsPerOrigin: 8 });
const tokens = await loadTokenEstimator();

/** The gate: each call records `final` and waits until the test opens it. */
const gate = {
  finals: [] as unknown[],
  entered: null as (() => void) | null,
  open: null as (() => void) | null,
};

function gatePlugin(): Plugin {
  return {
    name: 'gate',
    onResponseComplete(_ex, _state, final) {
      gate.finals.push(final);
      gate.entered?.();
      return new Promise<void>((resolve) => (gate.open = resolve));
    },
  };
}

/** Routes model `native` to the Responses simulator as a pass-through, anything else translated to chat. */
function router(): Plugin {
  const chat = new OpenAIProvider('openai', { type: 'openai', baseUrl: chatSim.baseUrl, apiKey: 'sk' }, upstream);
  const native = new OpenAIProvider('openai', { type: 'openai', baseUrl: responsesSim.baseUrl, apiKey: 'sk' }, upstream);
  return {
    name: 'router',
    route(ex) {
      ex.target = { provider: 'openai', model: ex.request!.model };
      const credential = { apiKey: 'sk', source: 'shared' as const };
      if (ex.request!.model === 'native') {
        return native.buildNativeCall('openai-responses', {
          model: 'native', credential: { ...credential, baseUrl: responsesSim.baseUrl }, operation: ex.operation, body: ex.clientBody!, stream: ex.stream, headers: {},
        });
      }
      return chat.buildChatCall(chatRequestOf(ex.request)!, { model: 'gpt-4o-mini', credential: { ...credential, baseUrl: chatSim.baseUrl } });
    },
  };
}

before(async () => {
  [chatSim, responsesSim] = await Promise.all([startOpenAISimulator(), startResponsesSimulator()]);
  const pipeline = createPipeline([gatePlugin(), router()], { upstream, maxResponseBytes: 1 << 20, log: createLog('error', () => {}), tokens });
  server = createGatewayServer({ pipeline, log: createLog('error', () => {}), routes: pipelineRoutes([]), maxBodyBytes: 64 * 1024, drainTimeoutMs: 1_000 });
  const address: AddressInfo = await server.listen(0, '127.0.0.1');
  origin = `http://127.0.0.1:${address.port}`;
});
after(async () => {
  await server.shutdown();
  await upstream.close();
  await Promise.all([chatSim.close(), responsesSim.close()]);
});

/** Resolves when the gate's hook is called next. */
const nextEntry = () => new Promise<void>((resolve) => (gate.entered = resolve));
/** A little wall time for bytes already written to reach the client (never needed for the assertion to hold). */
const pause = () => new Promise((r) => setTimeout(r, 50));

function post(model: string, stream: boolean): Promise<Response> {
  return fetch(`${origin}/api/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'hi', stream }) });
}

/** Reads a stream in the background; once the gate is entered (and a little after) notes what arrived, then opens it. */
async function readAcrossGate(res: Response, entered: Promise<void>): Promise<{ beforeOpen: string; all: string }> {
  let text = '';
  const reading = (async () => {
    const utf8 = new TextDecoder();
    for await (const part of res.body!) text += utf8.decode(part as Uint8Array, { stream: true });
  })();
  await entered;
  await pause();
  const beforeOpen = text;
  gate.open!();
  await reading;
  return { beforeOpen, all: text };
}

/** The `response` of the `response.completed` event in an SSE text. */
function completedResponse(text: string): unknown {
  const event = text.split('\n\n').find((e) => e.startsWith('event: response.completed'));
  return (JSON.parse(event!.split('\ndata: ')[1]!) as { response: unknown }).response;
}

describe('onResponseComplete', () => {
  for (const model of ['translated', 'native']) {
    test(`holds a ${model} stream's final event until the hook resolves, and gets the response it carries`, async () => {
      gate.finals.length = 0;
      const entered = nextEntry();
      const res = await post(model, true);
      const { beforeOpen, all } = await readAcrossGate(res, entered);
      assert.doesNotMatch(beforeOpen, /response\.completed/);
      assert.match(all, /event: response\.completed/);
      assert.deepEqual(gate.finals, [completedResponse(all)]);
    });

    test(`holds a ${model} JSON answer until the hook resolves, and gets that very object`, async () => {
      gate.finals.length = 0;
      const entered = nextEntry();
      let answered = false;
      const pending = post(model, false).then((res) => {
        answered = true;
        return res.json();
      });
      await entered;
      await pause();
      assert.equal(answered, false);
      gate.open!();
      const body = await pending;
      assert.deepEqual(gate.finals, [body]);
    });
  }
});
