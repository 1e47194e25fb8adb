/**
 * The `cache` plugin (issue 40 item 5) in the real `tollgate serve` process, the default chain plus
 * `cache` between rate-limit and budget, with the official SDKs as clients: OpenAI chat natively to
 * the OpenAI simulator, the Messages API natively to the Anthropic simulator and the Responses API
 * translated to it. Three gateways share one data directory (and so one store), each with its own
 * cache config: `perUser` (the defaults), `shared` (scope shared, any temperature) and `brief`
 * (ttlSeconds 1). A hit is seen by the simulator's request count standing still.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { SIM_REPLY, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { SIM_REPLY as ANTHROPIC_REPLY, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitForLogRow } from '../helpers/log-rows.ts';
import { eventually } from '../helpers/eventually.ts';
import { defaultManifest } from '../../core/default-manifest.ts';

const GPT = 'openai/gpt-4o-mini';
const CLAUDE = 'anthropic/claude-sonnet-4-5-20250929';

type Entry = { name: string; config?: Record<string, unknown> };

/** The default manifest with `cache` configured as `config` after rate-limit, and a quick log flush. */
function manifestWith(config: Record<string, unknown>): unknown {
  const manifest = structuredClone(defaultManifest) as { plugins: Entry[] };
  manifest.plugins.find((p) => p.name === 'logger')!.config = { flushIntervalMs: 20 };
  manifest.plugins.splice(manifest.plugins.findIndex((p) => p.name === 'rate-limit') + 1, 0, { name: 'cache', config });
  return manifest;
}

let dataDir: string;
let openaiSim: OpenAISimulator;
let anthropicSim: AnthropicSimulator;
const gateways: Record<string, GatewayProcess> = {};
const keys: Record<string, string> = {};

async function startGateway(name: string, config: Record<string, unknown>): Promise<void> {
  const configPath = join(dataDir, `${name}.json`);
  writeFileSync(configPath, JSON.stringify(manifestWith(config)));
  gateways[name] = await startGatewayProcess({
    dataDir, configPath,
    env: { OPENAI_BASE_URL: openaiSim.baseUrl, OPENAI_API_KEY: 'sk-upstream', ANTHROPIC_BASE_URL: anthropicSim.baseUrl, ANTHROPIC_API_KEY: 'sk-ant-upstream' },
  });
}

before(async () => {
  dataDir = tempDir();
  [openaiSim, anthropicSim] = await Promise.all([startOpenAISimulator(), startAnthropicSimulator()]);
  for (const user of ['alice', 'bob']) {
    await cliJson(['users', 'create', '--name', user], { dataDir });
    keys[user] = (await cliJson<{ key: string }>(['keys', 'create', '--user', user], { dataDir })).key;
  }
  keys.alice2 = (await cliJson<{ key: string }>(['keys', 'create', '--user', 'alice'], { dataDir })).key;
  // The first start migrates the database; the others then start together.
  await startGateway('perUser', {});
  const others = await Promise.allSettled([
    startGateway('shared', { scope: 'shared', cacheNonZeroTemperature: true }),
    startGateway('brief', { ttlSeconds: 1 }),
  ]);
  for (const o of others) if (o.status === 'rejected') throw o.reason;
});

after(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await openaiSim?.close();
  await anthropicSim?.close();
});

function openai(gateway = 'perUser', user = 'alice'): OpenAI {
  return new OpenAI({ apiKey: keys[user], baseURL: gateways[gateway]!.baseURL, maxRetries: 0 });
}

function anthropic(gateway = 'perUser', user = 'alice'): Anthropic {
  return new Anthropic({ apiKey: keys[user], baseURL: `${gateways[gateway]!.origin}/api`, maxRetries: 0 });
}

/** A non-streamed OpenAI chat call at temperature 0: its text, `x-tollgate-cache` and request id. */
async function chat(content: string, options: { gateway?: string; user?: string; headers?: Record<string, string>; temperature?: number | null } = {}) {
  const temperature = options.temperature === undefined ? { temperature: 0 } : options.temperature === null ? {} : { temperature: options.temperature };
  const { data, response } = await openai(options.gateway, options.user)
    .chat.completions.create({ model: GPT, messages: [{ role: 'user', content }], ...temperature }, { headers: options.headers ?? {} })
    .withResponse();
  return { text: data.choices[0]!.message.content, cache: response.headers.get('x-tollgate-cache'), requestId: response.headers.get('x-request-id')! };
}

/** The same call streamed: the text its chunks join to, and the header. */
async function chatStream(content: string, options: { gateway?: string; user?: string } = {}) {
  const { data: stream, response } = await openai(options.gateway, options.user)
    .chat.completions.create({ model: GPT, messages: [{ role: 'user', content }], temperature: 0, stream: true })
    .withResponse();
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return { text, cache: response.headers.get('x-tollgate-cache') };
}

/** The log row of `requestId`, once the background logger wrote it. */
const logRow = (requestId: string) => waitForLogRow(dataDir, requestId);

/** The value of counter `name` in `gateway`'s /metrics (0 when absent). */
async function counter(gateway: string, name: string): Promise<number> {
  const text = await (await fetch(`${gateways[gateway]!.origin}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

describe('OpenAI chat', () => {
  test('a repeated question is answered from the cache without calling the upstream, whole or streamed', async () => {
    const first = await chat('What is the capital of France?');
    assert.equal(first.cache, 'miss');
    assert.equal(first.text, SIM_REPLY);
    const upstreamCalls = openaiSim.requests.length;

    const again = await chat('What is the capital of France?');
    assert.equal(again.cache, 'hit');
    assert.equal(again.text, first.text);
    const streamed = await chatStream('What is the capital of France?');
    assert.equal(streamed.cache, 'hit');
    assert.equal(streamed.text, first.text);
    assert.equal(openaiSim.requests.length, upstreamCalls, 'the upstream was not called for the hits');
  });

  test('a streamed miss is given again whole, and streamed again', async () => {
    const first = await chatStream('Name a prime number.');
    assert.equal(first.cache, 'miss');
    const upstreamCalls = openaiSim.requests.length;
    const again = await chat('Name a prime number.');
    assert.equal(again.cache, 'hit');
    assert.equal(again.text, first.text);
    const streamedAgain = await chatStream('Name a prime number.');
    assert.equal(streamedAgain.cache, 'hit');
    assert.equal(streamedAgain.text, first.text);
    assert.equal(openaiSim.requests.length, upstreamCalls);
  });

  test('a hit costs 0 and its log row says cache_hit: true; the miss\'s says false', async () => {
    const miss = await chat('How much is a hit?');
    const hit = await chat('How much is a hit?');
    const missRow = await logRow(miss.requestId);
    const hitRow = await logRow(hit.requestId);
    assert.deepEqual(JSON.parse(missRow.plugin_fields as string), { cache_hit: false });
    assert.ok((missRow.prompt_tokens as number) > 0, 'the miss was billed its tokens');
    assert.deepEqual(JSON.parse(hitRow.plugin_fields as string), { cache_hit: true });
    assert.equal(hitRow.status, 200);
    assert.equal(hitRow.cost_nanos, 0);
    assert.equal(hitRow.prompt_tokens, 0);
    assert.equal(hitRow.completion_tokens, 0);
    assert.ok(await counter('perUser', 'tollgate_plugin_cache_hits_total') >= 1);
    assert.ok(await counter('perUser', 'tollgate_plugin_cache_stores_total') >= 1);
  });
});

describe('the Messages API (native to Anthropic) and the Responses API (translated)', () => {
  test('Messages: a whole miss is given again streamed, a streamed miss again whole', async () => {
    const client = anthropic();
    const ask = (text: string) => ({ model: CLAUDE, max_tokens: 100, temperature: 0, messages: [{ role: 'user' as const, content: text }] });
    const first = await client.messages.create(ask('Who wrote Hamlet?')).withResponse();
    assert.equal(first.response.headers.get('x-tollgate-cache'), 'miss');
    const upstreamCalls = anthropicSim.requests.length;
    const streamed = await client.messages.create({ ...ask('Who wrote Hamlet?'), stream: true }).withResponse();
    assert.equal(streamed.response.headers.get('x-tollgate-cache'), 'hit');
    let text = '';
    for await (const event of streamed.data) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    assert.equal(text, ANTHROPIC_REPLY);

    const streamedMiss = await client.messages.create({ ...ask('Who wrote Faust?'), stream: true }).withResponse();
    assert.equal(streamedMiss.response.headers.get('x-tollgate-cache'), 'miss');
    for await (const event of streamedMiss.data) void event;
    const whole = await client.messages.create(ask('Who wrote Faust?')).withResponse();
    assert.equal(whole.response.headers.get('x-tollgate-cache'), 'hit');
    assert.deepEqual(whole.data.content.map((block) => (block.type === 'text' ? block.text : block.type)), [ANTHROPIC_REPLY]);
    assert.equal(whole.data.stop_reason, 'end_turn');
    assert.equal(anthropicSim.requests.length, upstreamCalls + 1, 'only the streamed miss reached the upstream');
  });

  test('Messages: fields the canonical request drops (top_k) still tell two requests apart', async () => {
    const client = anthropic();
    // `top_k` is the Messages API's (the simulator accepts it); this SDK version's types leave it out.
    const ask = (topK: number) => ({ model: CLAUDE, max_tokens: 100, temperature: 0, top_k: topK, messages: [{ role: 'user', content: 'Pick a colour.' }] }) as Anthropic.MessageCreateParamsNonStreaming;
    assert.equal((await client.messages.create(ask(5)).withResponse()).response.headers.get('x-tollgate-cache'), 'miss');
    assert.equal((await client.messages.create(ask(40)).withResponse()).response.headers.get('x-tollgate-cache'), 'miss');
    assert.equal((await client.messages.create(ask(5)).withResponse()).response.headers.get('x-tollgate-cache'), 'hit');
  });

  test('Responses: a miss, then hits whole and streamed', async () => {
    const client = openai();
    const first = await client.responses.create({ model: CLAUDE, input: 'Who painted the Mona Lisa?', temperature: 0 }).withResponse();
    assert.equal(first.response.headers.get('x-tollgate-cache'), 'miss');
    assert.equal(first.data.output_text, ANTHROPIC_REPLY);
    const upstreamCalls = anthropicSim.requests.length;
    const again = await client.responses.create({ model: CLAUDE, input: 'Who painted the Mona Lisa?', temperature: 0 }).withResponse();
    assert.equal(again.response.headers.get('x-tollgate-cache'), 'hit');
    assert.equal(again.data.output_text, ANTHROPIC_REPLY);
    const stream = client.responses.stream({ model: CLAUDE, input: 'Who painted the Mona Lisa?', temperature: 0 });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, ANTHROPIC_REPLY);
    assert.equal(anthropicSim.requests.length, upstreamCalls);
  });

  test('an answer cut at its output cap (finish_reason length) is not kept', async () => {
    const ask = { model: 'anthropic/sim-length', max_tokens: 100, temperature: 0, messages: [{ role: 'user' as const, content: 'Go on and on.' }] };
    const client = anthropic();
    assert.equal((await client.messages.create(ask).withResponse()).response.headers.get('x-tollgate-cache'), 'miss');
    assert.equal((await client.messages.create(ask).withResponse()).response.headers.get('x-tollgate-cache'), 'miss');
  });
});

describe('scope', () => {
  test('under scope user, another user never gets the answer; another key of the same user does', async () => {
    await chat('A question of alice\'s.', { user: 'alice' });
    assert.equal((await chat('A question of alice\'s.', { user: 'alice2' })).cache, 'hit');
    const upstreamCalls = openaiSim.requests.length;
    assert.equal((await chat('A question of alice\'s.', { user: 'bob' })).cache, 'miss');
    assert.equal(openaiSim.requests.length, upstreamCalls + 1, 'bob\'s question went upstream');
  });

  test('under scope shared, one user\'s answer serves another', async () => {
    assert.equal((await chat('A question for everyone.', { gateway: 'shared', user: 'alice' })).cache, 'miss');
    assert.equal((await chat('A question for everyone.', { gateway: 'shared', user: 'bob' })).cache, 'hit');
  });
});

describe('what is not cached', () => {
  test('x-tollgate-cache: bypass and cache-control: no-store skip the cache both ways', async () => {
    const bypassing: Array<Record<string, string>> = [{ 'x-tollgate-cache': 'bypass' }, { 'cache-control': 'no-store' }];
    for (const headers of bypassing) {
      const question = `Bypass with ${Object.keys(headers)[0]}`;
      const upstreamCalls = openaiSim.requests.length;
      assert.equal((await chat(question, { headers })).cache, 'bypass');
      assert.equal((await chat(question, { headers })).cache, 'bypass');
      assert.equal(openaiSim.requests.length, upstreamCalls + 2);
      assert.equal((await chat(question)).cache, 'miss', 'nothing was kept');
    }
    assert.ok(await counter('perUser', 'tollgate_plugin_cache_bypasses_total') >= 4);
  });

  test('cache-control: no-cache asks upstream again and keeps the fresh answer', async () => {
    await chat('Refresh me.');
    assert.equal((await chat('Refresh me.', { headers: { 'cache-control': 'no-cache' } })).cache, 'miss');
    assert.equal((await chat('Refresh me.')).cache, 'hit');
  });

  test('a request that samples (no temperature, or above 0) is not cached unless the config says so', async () => {
    for (const temperature of [null, 0.7]) {
      const upstreamCalls = openaiSim.requests.length;
      assert.equal((await chat('Tell me a story.', { temperature })).cache, null);
      assert.equal((await chat('Tell me a story.', { temperature })).cache, null);
      assert.equal(openaiSim.requests.length, upstreamCalls + 2);
    }
    assert.equal((await chat('Tell me a story.', { gateway: 'shared', temperature: 0.7 })).cache, 'miss');
    assert.equal((await chat('Tell me a story.', { gateway: 'shared', temperature: 0.7 })).cache, 'hit');
  });

  test('an entry expires after ttlSeconds', async () => {
    const storesBefore = await counter('brief', 'tollgate_plugin_cache_stores_total');
    assert.equal((await chat('Soon forgotten.', { gateway: 'brief' })).cache, 'miss');
    // The answer is kept after its last byte went out: on PostgreSQL a moment later.
    await eventually(async () => assert.equal(await counter('brief', 'tollgate_plugin_cache_stores_total'), storesBefore + 1, 'the answer was kept'));
    // Past the 1 s TTL, whatever the machine's load: the entry's expiry is set when it was kept.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const upstreamCalls = openaiSim.requests.length;
    assert.equal((await chat('Soon forgotten.', { gateway: 'brief' })).cache, 'miss');
    assert.equal(openaiSim.requests.length, upstreamCalls + 1);
  });
});
