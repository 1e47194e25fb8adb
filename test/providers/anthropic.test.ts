/**
 * The Anthropic provider through the real in-process gateway, with the official `openai` SDK as the
 * client and the Anthropic simulator as the upstream: request translation (asserted on the exact
 * upstream body), answers, streams, tool calls, images, errors, parameters and model discovery.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import {
  startAnthropicSimulator, SIM_MODELS, SIM_PIECES, SIM_REPLY, SIM_TOOL_ANSWER, SIM_TOOL_TEXT, type AnthropicSimulator,
} from '../helpers/anthropic-simulator.ts';
import { AnthropicProvider, ANTHROPIC_VERSION } from '../../plugins/provider-router/providers/anthropic/index.ts';
import { DEFAULT_MAX_TOKENS } from '../../plugins/provider-router/providers/anthropic/request.ts';
import { createUpstreamClient, type UpstreamClient } from '../../core/upstream/upstream-client.ts';
import type { DecodedChunk } from '../../core/upstream/upstream-call.ts';

const API_KEY = 'sk-ant-test-secret-0123456789';
const MODEL = 'claude-sonnet-4-5-20250929';
/** Canonical usage of every simulator answer: 12 input + 5 cache reads + 3 cache writes. */
const USAGE = { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 3 } };

let sim: AnthropicSimulator;
let tg: TestGateway;
let client: OpenAI;

before(async () => {
  sim = await startAnthropicSimulator({ modelPageSize: 2 });
  tg = await startTestGateway({ providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: API_KEY } } });
  client = tg.client;
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

type Chunk = OpenAI.ChatCompletionChunk;

async function collect(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const text = (chunks: Chunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** The error the SDK throws for `promise`. */
async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OpenAI.APIError, `expected an APIError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('anthropic: non-streamed completions', () => {
  test('returns the answer, finish_reason and usage with cache reads and writes, and sends the exact Messages body', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: `anthropic/${MODEL}`, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.id, 'msg_sim_01');
    assert.equal(data.model, MODEL);
    assert.deepEqual(data.choices, [{ index: 0, message: { role: 'assistant', content: SIM_REPLY }, finish_reason: 'stop' }]);
    assert.deepEqual(data.usage, USAGE);

    const upstream = sim.lastMessages();
    assert.equal(upstream.method, 'POST');
    assert.equal(upstream.path, '/v1/messages');
    assert.deepEqual(upstream.body, {
      model: MODEL,
      max_tokens: DEFAULT_MAX_TOKENS,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(upstream.headers['x-api-key'], API_KEY);
    assert.equal(upstream.headers['anthropic-version'], ANTHROPIC_VERSION);
    assert.equal(upstream.headers['content-type'], 'application/json');
    assert.equal(upstream.headers.authorization, undefined);

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 200);
    assert.equal(row.provider, 'anthropic');
    assert.equal(row.model_served, MODEL);
    assert.equal(row.stream, 0);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [20, 9, 5]);
  });

  test('lifts system and developer messages, merges same-role turns and drops empty ones', async () => {
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [
        { role: 'developer', content: 'Rule one.' },
        { role: 'user', content: 'First.' },
        { role: 'user', content: [{ type: 'text', text: 'Second.' }] },
        { role: 'assistant', content: '' },
        { role: 'system', content: [{ type: 'text', text: 'Rule two.' }] },
        { role: 'assistant', content: 'Answer.', name: 'bot' },
        { role: 'user', content: 'Third.', name: 'alice' },
      ],
    });
    assert.deepEqual(sim.lastMessages().body, {
      model: MODEL,
      max_tokens: DEFAULT_MAX_TOKENS,
      system: [{ type: 'text', text: 'Rule one.' }, { type: 'text', text: 'Rule two.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'First.' }, { type: 'text', text: 'Second.' }] },
        { role: 'assistant', content: 'Answer.' },
        { role: 'user', content: 'Third.' },
      ],
    });
  });

  test('forwards cache_control on text parts (prompt caching)', async () => {
    const system = { type: 'text', text: 'A long stable prompt.', cache_control: { type: 'ephemeral', ttl: '1h' } };
    const part = { type: 'text', text: 'Question', cache_control: { type: 'ephemeral' } };
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [{ role: 'system', content: [system] }, { role: 'user', content: [part] }],
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const body = sim.lastMessages().body!;
    assert.deepEqual(body.system, [system]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [part] }]);
  });

  test('maps max_tokens and refusal stop reasons, and drops thinking blocks', async () => {
    const length = await client.chat.completions.create({ model: 'anthropic/sim-length', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(length.choices[0]!.finish_reason, 'length');
    const refusal = await client.chat.completions.create({ model: 'anthropic/sim-refusal', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(refusal.choices[0]!.finish_reason, 'content_filter');
    const thinking = await client.chat.completions.create({ model: 'anthropic/sim-thinking', messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(thinking.choices[0]!.message, { role: 'assistant', content: SIM_REPLY });
    const streamed = await collect(await client.chat.completions.create({ model: 'anthropic/sim-thinking', messages: [{ role: 'user', content: 'Hi' }], stream: true }));
    assert.equal(text(streamed), SIM_REPLY);
  });
});

describe('anthropic: streaming', () => {
  test('without include_usage: deltas reassemble, no usage reaches the client, the log row still has the tokens', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Say hello' }], stream: true })
      .withResponse();
    const chunks = await collect(stream);
    assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
    assert.deepEqual(chunks.slice(1, -1).map((c) => c.choices[0]!.delta.content), SIM_PIECES);
    assert.equal(text(chunks), SIM_REPLY);
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(last.choices[0]!.delta, {});
    assert.ok(chunks.every((c) => c.choices.length === 1 && !c.usage), 'no usage chunk without include_usage');
    assert.ok(chunks.every((c) => c.id === 'msg_sim_01' && c.model === MODEL && c.object === 'chat.completion.chunk'));

    assert.deepEqual(sim.lastMessages().body, {
      model: MODEL, max_tokens: DEFAULT_MAX_TOKENS, messages: [{ role: 'user', content: 'Say hello' }], stream: true,
    });
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.stream, 1);
    assert.equal(row.status, 200);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [20, 9, 5]);
  });

  test('with include_usage: ends with a usage chunk holding the cumulative numbers', async () => {
    const chunks = await collect(await client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true },
    }));
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, USAGE);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
    assert.equal(sim.lastMessages().body!.stream_options, undefined);
  });

  test('a stream that loses only message_stop still completes with its usage', async () => {
    const chunks = await collect(await client.chat.completions.create({
      model: 'anthropic/sim-no-stop', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    }));
    assert.equal(text(chunks), SIM_REPLY);
    assert.deepEqual(chunks.at(-1)!.usage, USAGE);
  });
});

describe('anthropic: tool calls', () => {
  const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris and London?' };
  const toolCalls = [
    { id: 'toolu_sim_paris', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { id: 'toolu_sim_london', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"London"}' } },
  ];

  test('a non-streamed tool call round trip translates tools, tool_use and tool_result both ways', async () => {
    const first = await client.chat.completions.create({ model: 'anthropic/sim-tool', messages: [question], tools: [weatherTool], tool_choice: 'auto' });
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(first.choices[0]!.message, { role: 'assistant', content: SIM_TOOL_TEXT, tool_calls: toolCalls });
    assert.deepEqual(sim.lastMessages().body, {
      model: 'sim-tool',
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: 'user', content: 'Weather in Paris and London?' }],
      tools: [{ name: 'get_weather', description: 'Current weather in a city', input_schema: weatherTool.function.parameters }],
      tool_choice: { type: 'auto' },
    });

    const second = await client.chat.completions.create({
      model: 'anthropic/sim-tool',
      tools: [weatherTool],
      messages: [
        question,
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: 'toolu_sim_paris', content: '18 °C' },
        { role: 'tool', tool_call_id: 'toolu_sim_london', content: [{ type: 'text', text: '14 °C' }] },
      ],
    });
    assert.equal(second.choices[0]!.message.content, SIM_TOOL_ANSWER);
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(sim.lastMessages().body!.messages, [
      { role: 'user', content: 'Weather in Paris and London?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: SIM_TOOL_TEXT },
          { type: 'tool_use', id: 'toolu_sim_paris', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_sim_london', name: 'get_weather', input: { city: 'London' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_sim_paris', content: '18 °C' },
          { type: 'tool_result', tool_use_id: 'toolu_sim_london', content: '14 °C' },
        ],
      },
    ]);
  });

  test('streamed tool calls arrive as OpenAI deltas that the SDK assembles', async () => {
    const raw = await collect(await client.chat.completions.create({ model: 'anthropic/sim-tool', messages: [question], tools: [weatherTool], stream: true }));
    const toolDeltas = raw.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(toolDeltas, [
      { index: 0, id: 'toolu_sim_paris', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"' } },
      { index: 0, function: { arguments: 'Paris"}' } },
      { index: 1, id: 'toolu_sim_london', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"' } },
      { index: 1, function: { arguments: 'London"}' } },
    ]);

    const stream = client.chat.completions.stream({ model: 'anthropic/sim-tool', messages: [question], tools: [weatherTool] });
    const final = await stream.finalChatCompletion();
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(final.choices[0]!.message.content, SIM_TOOL_TEXT);
    assert.deepEqual(
      final.choices[0]!.message.tool_calls!.map((c) => ({ id: c.id, type: c.type, function: c.function })),
      toolCalls.map((c) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } })),
    );
  });

  test('tool_choice required, named and none, and parallel_tool_calls false are translated', async () => {
    const cases: Array<[Partial<OpenAI.ChatCompletionCreateParamsNonStreaming>, unknown]> = [
      [{ tool_choice: 'required' }, { type: 'any' }],
      [{ tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false }, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }],
      [{ tool_choice: 'none', parallel_tool_calls: false }, { type: 'none' }],
      [{ parallel_tool_calls: false }, { type: 'auto', disable_parallel_tool_use: true }],
    ];
    for (const [params, expected] of cases) {
      await client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], ...params });
      assert.deepEqual(sim.lastMessages().body!.tool_choice, expected, JSON.stringify(params));
    }
    const tooLoose = await client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'none' });
    assert.equal(tooLoose.choices[0]!.message.content, SIM_REPLY);
    assert.equal(sim.lastMessages().body!.tool_choice, undefined);
  });

  test('tool_choice that cannot be met, and a tool message without its call id, are refused with the param named', async () => {
    const required = await apiError(client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'required' }));
    assert.equal(required.status, 400);
    assert.equal(required.param, 'tool_choice');
    const unknown = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } },
    }));
    assert.equal(unknown.param, 'tool_choice');
    const badArgs = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [question, { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '[1]' } }] }, { role: 'tool', tool_call_id: 't1', content: 'x' }],
    }));
    assert.equal(badArgs.param, 'messages[1].tool_calls[0].function.arguments');
    const noId = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [question, { role: 'tool', content: 'x' } as OpenAI.ChatCompletionToolMessageParam],
    }));
    assert.equal(noId.param, 'messages[1].tool_call_id');
  });
});

describe('anthropic: images', () => {
  test('a data URL becomes a base64 source and an http URL a url source', async () => {
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      }],
    });
    assert.deepEqual(sim.lastMessages().body!.messages, [{
      role: 'user',
      content: [
        { type: 'text', text: 'Compare these.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      ],
    }]);
  });

  test('cache_control on an image part is forwarded on its image block', async () => {
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [{
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'text', text: 'And this?' },
        ],
      }],
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.deepEqual(sim.lastMessages().body!.messages, [{
      role: 'user',
      content: [
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'And this?' },
      ],
    }]);
  });

  test('unsupported image types, other URL schemes and audio parts are refused with the param named', async () => {
    const image = (url: string) => client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url } }] }],
    });
    const bmp = await apiError(image('data:image/bmp;base64,Qk0='));
    assert.equal(bmp.status, 400);
    assert.equal(bmp.param, 'messages[0].content[1].image_url');
    assert.match(bmp.message, /image\/bmp/);
    const ftp = await apiError(image('ftp://example.com/cat.png'));
    assert.equal(ftp.param, 'messages[0].content[1].image_url');
    const audio = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    }));
    assert.equal(audio.param, 'messages[0].content[0]');
    const systemImage = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`,
      messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] } as unknown as OpenAI.ChatCompletionSystemMessageParam, { role: 'user', content: 'Hi' }],
    }));
    assert.equal(systemImage.param, 'messages[0].content[0]');
  });
});

describe('anthropic: upstream errors', () => {
  const ask = (model: string) => client.chat.completions.create({ model: `anthropic/${model}`, messages: [{ role: 'user', content: 'Hi' }] });

  test('a 429 keeps its status and passes retry-after (+ retry-after-ms)', async () => {
    const err = await apiError(ask('sim-429'));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers?.get('retry-after'), '7');
    assert.equal(err.headers?.get('retry-after-ms'), '7000');
    assert.match(err.message, /Provider "anthropic" answered 429: This request would exceed the rate limit.*\(request-id req_sim_\d+\)/);
  });

  test('a 429 for the monthly spend cap is insufficient_quota and not retryable', async () => {
    const err = await apiError(ask('sim-spend'));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'insufficient_quota');
    assert.equal(err.headers?.get('x-should-retry'), 'false');
    assert.equal(err.headers?.get('retry-after'), null);
  });

  test('a 500 becomes 502 and a 529 overloaded becomes 503 overloaded, both logged', async () => {
    const { response } = await ask('sim-500').withResponse().catch((err: InstanceType<typeof OpenAI.APIError>) => ({ response: { headers: err.headers!, status: err.status } }));
    assert.equal(response.status, 502);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 502);
    assert.equal(row.error_code, 'api_error');
    const overloaded = await apiError(ask('sim-overloaded'));
    assert.equal(overloaded.status, 503);
    assert.equal(overloaded.code, 'overloaded');
  });

  test('auth failures keep their status and never echo the upstream message or the key', async () => {
    // A 401 is the key's; a 403 ("does not have permission to use the specified resource") is this request's.
    for (const [model, status, words] of [['sim-401', 401, /rejected the gateway's credential/], ['sim-403', 403, /refused this request \(403\)/]] as const) {
      const err = await apiError(ask(model));
      assert.equal(err.status, status);
      assert.equal(err.headers?.get('x-should-retry'), 'false');
      assert.ok(!err.message.includes(API_KEY) && !err.message.includes('x-api-key') && !err.message.includes('permission to use'), err.message);
      assert.match(err.message, words);
    }
  });

  test('an unknown model is 404 model_not_found', async () => {
    const err = await apiError(ask('sim-404'));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.equal(err.param, 'model');
  });

  test('an error event mid-stream ends the stream with an SSE error the SDK throws', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'anthropic/sim-mid-error', messages: [{ role: 'user', content: 'Hi' }], stream: true })
      .withResponse();
    const received: Chunk[] = [];
    const err = await apiError((async () => {
      for await (const chunk of stream) received.push(chunk);
    })());
    assert.equal(text(received), 'Hello from');
    assert.match(err.message, /Provider "anthropic" failed mid-stream: Overloaded/);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 503);
    assert.equal(row.error_code, 'overloaded');
  });

  test('a socket reset mid-stream, a truncated stream and a malformed event end the stream with an error', async () => {
    const outcomes: Record<string, string> = {};
    for (const model of ['sim-reset', 'sim-truncated', 'sim-malformed']) {
      const stream = await client.chat.completions.create({ model: `anthropic/${model}`, messages: [{ role: 'user', content: 'Hi' }], stream: true });
      outcomes[model] = (await apiError(collect(stream))).message;
    }
    assert.match(outcomes['sim-reset']!, /Provider "anthropic" ended the answer before it was complete/);
    assert.match(outcomes['sim-truncated']!, /ended the stream before the answer was complete/);
    assert.match(outcomes['sim-malformed']!, /sent a stream event that is not JSON/);
  });

  test('a malformed body is 502 and a reset before the answer is 502', async () => {
    const malformed = await apiError(ask('sim-malformed'));
    assert.equal(malformed.status, 502);
    assert.equal(malformed.code, 'upstream_malformed_response');
    const reset = await apiError(ask('sim-reset'));
    assert.equal(reset.status, 502);
  });

  test('a 400 from Anthropic keeps its status and message and is not retryable', async () => {
    const provider = new AnthropicProvider('anthropic', { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: API_KEY }, null as unknown as UpstreamClient);
    const call = provider.buildChatCall({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }, { model: MODEL, credential: { apiKey: API_KEY, baseUrl: sim.baseUrl, source: 'shared' } });
    const err = call.codec.decodeError(400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.0: bad' } }), { 'request-id': 'req_1' });
    assert.deepEqual([err.status, err.code, err.headers['x-should-retry']], [400, 'invalid_request_error', 'false']);
    assert.equal(err.message, 'Provider "anthropic" answered 400: messages.0: bad (request-id req_1).');
    const html = call.codec.decodeError(502, '<html>Bad gateway</html>', {});
    assert.deepEqual([html.status, html.message], [502, 'Provider "anthropic" answered 502.']);
  });
});

describe('anthropic: parameter mapping', () => {
  const hi: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hi' }];

  test('stop, temperature (clamped to 1), top_p, top_k, max tokens and user are mapped', async () => {
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: hi, stop: 'END', temperature: 1.7, top_p: 0.9, max_tokens: 100, max_completion_tokens: 50,
      user: 'user-42', response_format: { type: 'text' },
    });
    assert.deepEqual(sim.lastMessages().body, {
      model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }],
      stop_sequences: ['END'], temperature: 1, top_p: 0.9, metadata: { user_id: 'user-42' },
    });
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: hi, stop: ['A', 'B'], temperature: 0.3, max_tokens: 10, top_k: 40,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.deepEqual(sim.lastMessages().body, {
      model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], stop_sequences: ['A', 'B'], temperature: 0.3, top_k: 40,
    });
  });

  test('no-op values and OpenAI-only fields are dropped, not forwarded', async () => {
    await client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: hi, n: 1, presence_penalty: 0, frequency_penalty: 0, seed: 7, store: true,
      metadata: { team: 'a' }, service_tier: 'auto', logprobs: false, logit_bias: {}, stream_options: null,
    });
    assert.deepEqual(sim.lastMessages().body, { model: MODEL, max_tokens: DEFAULT_MAX_TOKENS, messages: [{ role: 'user', content: 'Hi' }] });
  });

  test('parameters Anthropic cannot honour are refused with a 400 naming them', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format'],
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ reasoning_effort: 'high' }, 'reasoning_effort'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ top_k: -1 }, 'top_k'],
      [{ frobnicate: true }, 'frobnicate'],
    ];
    const before = sim.requests.length;
    for (const [params, param] of cases) {
      const err = await apiError(client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: hi, ...params } as OpenAI.ChatCompletionCreateParamsNonStreaming));
      assert.equal(err.status, 400, param);
      assert.equal(err.param, param);
      assert.equal(err.code, 'invalid_request');
    }
    const onlySystem = await apiError(client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'system', content: 'Rules' }] }));
    assert.equal(onlySystem.param, 'messages');
    const fn = await apiError(client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [...hi, { role: 'function', name: 'f', content: 'x' }] }));
    assert.equal(fn.param, 'messages[1].role');
    const badCache = await apiError(client.chat.completions.create({
      model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'forever' } }] }],
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming));
    assert.equal(badCache.param, 'messages[0].content[0].cache_control');
    assert.equal(sim.requests.length, before, 'nothing refused reached the upstream');
  });

  test('a base URL that already ends in /v1 is not doubled', () => {
    const provider = new AnthropicProvider('anthropic', { type: 'anthropic', baseUrl: `${sim.baseUrl}/v1`, apiKey: API_KEY }, null as unknown as UpstreamClient);
    const call = provider.buildChatCall({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true }, { model: MODEL, credential: { apiKey: API_KEY, baseUrl: `${sim.baseUrl}/v1/`, source: 'shared' } });
    assert.equal(call.path, '/v1/messages');
    assert.equal(call.headers.accept, 'text/event-stream');
  });
});

describe('anthropic: model discovery', () => {
  test('GET /api/v1/models lists every page of Anthropic models with provider-prefixed ids', async () => {
    const before = sim.requests.length;
    const page = await client.models.list();
    const ours = page.data.filter((m) => m.id.startsWith('anthropic/'));
    assert.deepEqual(ours.map((m) => m.id), SIM_MODELS.map((m) => `anthropic/${m.id}`));
    assert.equal(ours[1]!.created, Date.parse('2025-09-29T00:00:00Z') / 1000);
    assert.equal(ours[1]!.owned_by, 'anthropic');
    const listCalls = sim.requests.slice(before).filter((r) => r.path === '/v1/models');
    assert.deepEqual(listCalls.map((r) => r.query), [
      { limit: '1000' },
      { limit: '1000', after_id: SIM_MODELS[1]!.id },
      { limit: '1000', after_id: SIM_MODELS[3]!.id },
    ]);
    assert.equal(listCalls[0]!.headers['x-api-key'], API_KEY);
    assert.equal(listCalls[0]!.headers['anthropic-version'], ANTHROPIC_VERSION);
    // A bare id resolves through the discovered catalog.
    const bare = await client.chat.completions.create({ model: SIM_MODELS[2]!.id, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(bare.choices[0]!.message.content, SIM_REPLY);
  });

  test('listModels gives display names and creation times; testCredential reports the count', async () => {
    const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, connectionsPerOrigin: 2, maxResponseBytes: 1 << 20 });
    try {
      const provider = new AnthropicProvider('anthropic', { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: API_KEY }, upstream);
      const credential = { apiKey: API_KEY, baseUrl: sim.baseUrl, source: 'shared' as const };
      const models = await provider.listModels(credential);
      assert.deepEqual(models[0], { id: SIM_MODELS[0]!.id, created: Date.parse(SIM_MODELS[0]!.created_at) / 1000, owned_by: 'anthropic', display_name: 'Claude Opus 4.1' });
      assert.deepEqual(await provider.testCredential(credential), { ok: true, message: 'Anthropic accepted the credential (5 models).' });
      sim.failModels = true;
      const failed = await provider.testCredential(credential);
      assert.equal(failed.ok, false);
      assert.match(failed.message, /answered 500/);
    } finally {
      sim.failModels = false;
      await upstream.close();
    }
  });

  test('when the list endpoint is down the model list still answers and provider/model chats still work', async () => {
    sim.failModels = true;
    const down = await startTestGateway({ providers: { anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: API_KEY } } });
    try {
      const page = await down.client.models.list();
      assert.deepEqual(page.data.filter((m) => m.id.startsWith('anthropic/')), []);
      const answer = await down.client.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(answer.choices[0]!.message.content, SIM_REPLY);
      // A bare Claude id is Anthropic's even when its list is down (issue 12: Claude Code sends bare ids);
      // a bare id no provider claims is still 404.
      const claimed = await down.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(claimed.choices[0]!.message.content, SIM_REPLY);
      const bare = await apiError(down.client.chat.completions.create({ model: 'gpt-nobody-has', messages: [{ role: 'user', content: 'Hi' }] }));
      assert.equal(bare.status, 404);
      assert.equal(bare.code, 'model_not_found');
    } finally {
      sim.failModels = false;
      await down.close();
    }
  });
});

describe('anthropic: codec edge cases', () => {
  const credential = { apiKey: API_KEY, baseUrl: 'https://api.anthropic.com', source: 'shared' as const };
  const codecOf = () => new AnthropicProvider('anthropic', { type: 'anthropic', ...credential }, null as unknown as UpstreamClient)
    .buildChatCall({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true }, { model: MODEL, credential }).codec;
  const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data: JSON.stringify(data) });

  test('the stream decoder refuses events before message_start, ignores unknown ones and maps in-band error types', () => {
    const out: DecodedChunk[] = [];
    const early = codecOf().createStreamDecoder();
    assert.throws(() => early.decode(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }), out), { status: 502, code: 'upstream_malformed_response' });
    assert.throws(() => early.decode(ev({ type: 'message_start' }), out), { status: 502, code: 'upstream_malformed_response' });
    assert.throws(() => early.finish(out), { code: 'upstream_stream_truncated' });

    const decoder = codecOf().createStreamDecoder();
    assert.equal(decoder.decode(ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', model: '', content: [] } }), out), false);
    assert.equal(out[0]!.chunk.model, MODEL, 'the requested model stands in when the stream names none');
    assert.equal(decoder.decode(ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } }), out), false);
    assert.equal(decoder.decode(ev({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } }), out), false);
    assert.equal(decoder.decode(ev({ type: 'future_event_type', whatever: 1 }), out), false);
    assert.equal(decoder.decode(ev({ type: 'message_delta', delta: { stop_reason: 'pause_turn' } }), out), false);
    assert.equal(decoder.decode(ev({ type: 'message_stop' }), out), true);
    assert.deepEqual(out.map((d) => d.chunk.choices[0]?.delta), [{ role: 'assistant', content: '' }, { content: 'Hi' }, {}]);
    assert.equal(out.at(-1)!.chunk.choices[0]!.finish_reason, 'stop');
    assert.ok(out.every((d) => !d.chunk.usage), 'no usage chunk when the upstream reported none');

    const started = () => {
      const d = codecOf().createStreamDecoder();
      d.decode(ev({ type: 'message_start', message: { id: 'msg_2', type: 'message', model: MODEL, content: [] } }), []);
      return d;
    };
    assert.throws(() => started().decode(ev({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }), []), { status: 429, code: 'rate_limit_exceeded' });
    assert.throws(() => started().decode(ev({ type: 'error', error: { type: 'api_error', message: 'boom' } }), []), { status: 502, code: 'api_error' });
    assert.throws(() => started().decode({ event: 'error', data: '{"type":"error"}' }, []), { status: 502 });
  });

  test('non-streamed answers: tool calls only give null content; a body that is not a message is 502', () => {
    const codec = codecOf();
    const { completion } = codec.decodeResponse(JSON.stringify({
      id: 'msg_3', type: 'message', model: MODEL, stop_reason: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }, { type: 'server_tool_use', id: 'srv_1' }],
    }));
    assert.deepEqual(completion.choices[0], {
      index: 0, finish_reason: 'stop',
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    });
    assert.deepEqual(completion.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    assert.throws(() => codec.decodeResponse('{"type":"error","error":{"type":"api_error"}}'), { status: 502, code: 'upstream_malformed_response' });
  });

  test('error answers: 409 stays retryable, 529 passes retry-after, an unusable retry-after is dropped', () => {
    const codec = codecOf();
    const conflict = codec.decodeError(409, '{"type":"error","error":{"type":"conflict_error","message":"busy"}}', {});
    assert.deepEqual([conflict.status, conflict.code, conflict.headers], [409, 'conflict_error', {}]);
    const overloaded = codec.decodeError(529, '', { 'retry-after': ['3'] });
    assert.deepEqual([overloaded.status, overloaded.code, overloaded.headers], [503, 'overloaded', { 'retry-after': '3', 'retry-after-ms': '3000' }]);
    const vague = codec.decodeError(429, '{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}', { 'retry-after': 'soon' });
    assert.deepEqual([vague.status, vague.headers], [429, {}]);
    const unauthorized = codec.decodeError(401, 'not json', {});
    assert.equal(unauthorized.code, 'upstream_authentication_error');
  });

  test('listModels stops on a page without a cursor, skips entries without an id and refuses a list without data', async () => {
    const pages: unknown[] = [
      { data: [{ id: 'claude-a', created_at: 'not a date' }, { display_name: 'no id' }], has_more: true, last_id: null },
      { models: [] },
    ];
    const urls: string[] = [];
    const upstream = { getJson: async (_p: string, url: string) => (urls.push(url), pages.shift()) } as unknown as UpstreamClient;
    const provider = new AnthropicProvider('anthropic', { type: 'anthropic', ...credential }, upstream);
    assert.deepEqual(await provider.listModels(credential), [{ id: 'claude-a', created: 0, owned_by: 'anthropic' }]);
    assert.deepEqual(urls, ['https://api.anthropic.com/v1/models?limit=1000']);
    await assert.rejects(provider.listModels(credential), { status: 502, code: 'upstream_malformed_response' });
  });
});
