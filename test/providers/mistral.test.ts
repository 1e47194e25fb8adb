/**
 * The Mistral provider through the real in-process gateway, with the official `openai` SDK as the
 * client and the Mistral simulator (its strict schema, streams, errors) as the upstream.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import {
  startMistralSimulator, MISTRAL_SIM_FINAL, MISTRAL_SIM_KEY, MISTRAL_SIM_REPLY, MISTRAL_SIM_TOOL_ID,
  type MistralSimulator,
} from '../helpers/mistral-simulator.ts';
import { MistralProvider } from '../../plugins/provider-router/providers/mistral/index.ts';
import { MistralStreamDecoder } from '../../plugins/provider-router/providers/mistral/stream.ts';
import { mapMistralError } from '../../plugins/provider-router/providers/mistral/errors.ts';
import { mistralToolCallId } from '../../plugins/provider-router/providers/mistral/request.ts';
import { createUpstreamClient } from '../../core/upstream/upstream-client.ts';
import type { DecodedChunk } from '../../core/upstream/upstream-call.ts';

let sim: MistralSimulator;
let downSim: MistralSimulator;
let tg: TestGateway;
let client: OpenAI;

const USAGE = { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30, prompt_tokens_details: { cached_tokens: 5 } };
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** The body of the last request the simulator received on `path`. */
function lastBody(path = '/v1/chat/completions'): Record<string, unknown> {
  return sim.requests.filter((r) => r.path === path).at(-1)!.body!;
}

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** Calls `fn`, expecting it to throw an `APIError`; returns it. */
async function apiError(fn: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await fn().then(() => null, (e: unknown) => e);
  assert.ok(err instanceof OpenAI.APIError, `expected an APIError, got ${String(err)}`);
  return err;
}

before(async () => {
  sim = await startMistralSimulator();
  downSim = await startMistralSimulator();
  downSim.failModels = true;
  tg = await startTestGateway({
    providers: {
      mistral: { type: 'mistral', baseUrl: sim.baseUrl, apiKey: MISTRAL_SIM_KEY },
      mistralbadkey: { type: 'mistral', baseUrl: sim.baseUrl, apiKey: 'sk-wrong-upstream-key' },
      mistraldown: { type: 'mistral', baseUrl: downSim.baseUrl, apiKey: MISTRAL_SIM_KEY },
    },
  });
  client = tg.client;
});

after(async () => {
  await tg?.close();
  await sim?.close();
  await downSim?.close();
});

describe('mistral chat completions', () => {
  test('a non-streamed completion returns content, finish_reason and cached usage, sending exactly the translated body', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'mistral/mistral-small-latest',
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] }, ...messages],
      })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.id, 'cmpl-sim-1');
    assert.equal(data.model, 'mistral-small-latest');
    assert.deepEqual(data.choices, [{ index: 0, message: { role: 'assistant', content: MISTRAL_SIM_REPLY }, finish_reason: 'stop' }]);
    assert.deepEqual(data.usage, USAGE);

    const upstream = sim.requests.at(-1)!;
    assert.equal(upstream.method, 'POST');
    assert.equal(upstream.path, '/v1/chat/completions');
    assert.equal(upstream.headers.authorization, `Bearer ${MISTRAL_SIM_KEY}`);
    assert.equal(upstream.headers['content-type'], 'application/json');
    assert.equal(upstream.headers.accept, 'application/json');
    assert.deepEqual(upstream.body, {
      model: 'mistral-small-latest',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'system', content: 'Answer in English.' }, { role: 'user', content: 'Say hello' }],
      stream: false,
    });

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.provider, 'mistral');
    assert.equal(row.model_served, 'mistral-small-latest');
    assert.equal(row.status, 200);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [21, 9, 5]);
  });

  test('a stream without include_usage reassembles the text, hides the usage chunk and is still billed from it', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'mistral/mistral-small-latest', messages, stream: true })
      .withResponse();
    const chunks = await collect(stream);
    assert.equal(textOf(chunks), MISTRAL_SIM_REPLY);
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.choices.length === 1 && c.usage == null), 'no usage reaches a client that did not ask');
    assert.ok(chunks.every((c) => c.id === 'cmpl-sim-stream' && c.object === 'chat.completion.chunk'));
    assert.deepEqual(lastBody(), { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    assert.equal(sim.requests.at(-1)!.headers.accept, 'text/event-stream');

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.stream, 1);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [21, 9, 5]);
  });

  test('a stream with include_usage ends with one usage chunk carrying the exact numbers, and stream_options is not sent', async () => {
    const chunks = await collect(await client.chat.completions.create({
      model: 'mistral/mistral-small-latest', messages, stream: true, stream_options: { include_usage: true },
    }));
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.deepEqual(chunks.at(-1)!.usage, USAGE);
    assert.equal(chunks.filter((c) => c.usage).length, 1);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
    assert.equal('stream_options' in lastBody(), false);
  });

  test('model_length becomes length and thinking chunks are left out of the content', async () => {
    const long = await client.chat.completions.create({ model: 'mistral/sim-length', messages });
    assert.equal(long.choices[0]!.finish_reason, 'length');
    const thinking = await client.chat.completions.create({ model: 'mistral/sim-thinking', messages });
    assert.equal(thinking.choices[0]!.message.content, MISTRAL_SIM_REPLY);
    const streamed = await collect(await client.chat.completions.create({ model: 'mistral/sim-length', messages, stream: true }));
    assert.equal(streamed.at(-1)!.choices[0]!.finish_reason, 'length');
  });
});

describe('mistral stream decoder', () => {
  test('repeated usage yields one usage chunk (the last) at [DONE], and each choice of n > 1 keeps its index', () => {
    const decoder = new MistralStreamDecoder('mistral', 'm');
    const out: DecodedChunk[] = [];
    const feed = (value: unknown) => decoder.decode({ event: undefined, data: typeof value === 'string' ? value : JSON.stringify(value) }, out);
    const usage = (completion: number) => ({ prompt_tokens: 4, completion_tokens: completion, total_tokens: 4 + completion });
    feed({ id: 'c1', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'A' } }, { index: 1, delta: { role: 'assistant', content: 'B' } }], usage: usage(1) });
    feed({ id: 'c1', created: 1, model: 'm', choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }, { index: 1, delta: { content: 'b' }, finish_reason: 'stop' }], usage: usage(3) });
    assert.equal(out.filter((o) => o.chunk.usage).length, 0, 'usage waits for the end');
    assert.equal(feed('[DONE]'), true);
    assert.deepEqual(out.map((o) => o.chunk.choices.map((c) => [c.index, c.delta.content ?? null, c.finish_reason])), [
      [[0, 'A', null]], [[1, 'B', null]], [[0, null, 'stop']], [[1, 'b', 'stop']], [],
    ]);
    assert.deepEqual(out.at(-1)!.chunk.usage, { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
  });

  test('a stream that closes after its finish chunk but before [DONE] still delivers its usage', () => {
    const decoder = new MistralStreamDecoder('mistral', 'm');
    const out: DecodedChunk[] = [];
    decoder.decode({ event: undefined, data: JSON.stringify({ choices: [{ delta: { content: 'x' }, finish_reason: 'length' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }) }, out);
    decoder.finish(out);
    assert.equal(out[0]!.chunk.model, 'm', 'falls back to the requested model');
    assert.match(out[0]!.chunk.id, /^chatcmpl-/);
    assert.deepEqual(out.at(-1)!.chunk.usage, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  });
});

describe('mistral tool calls', () => {
  test('a non-streamed tool call comes back in OpenAI shape, with tools and tool_choice translated', async () => {
    const data = await client.chat.completions.create({
      model: 'mistral/sim-tool', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false,
    });
    assert.deepEqual(data.choices[0], {
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: MISTRAL_SIM_TOOL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      finish_reason: 'tool_calls',
    });
    assert.deepEqual(lastBody(), {
      model: 'sim-tool',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      stream: false,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: weatherTool.function.parameters } }],
      tool_choice: 'any',
      parallel_tool_calls: false,
    });
  });

  test('a streamed tool call arrives as an OpenAI header delta then arguments, and the SDK assembles it', async () => {
    const chunks = await collect(await client.chat.completions.create({
      model: 'mistral/sim-tool', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], stream: true,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(deltas, [
      { index: 0, id: MISTRAL_SIM_TOOL_ID, type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(lastBody().tool_choice, { type: 'function', function: { name: 'get_weather' } });

    const stream = client.chat.completions.stream({ model: 'mistral/sim-tools-2', messages: [{ role: 'user', content: 'Paris and Lyon?' }], tools: [weatherTool] });
    const final = await stream.finalChatCompletion();
    assert.deepEqual(final.choices[0]!.message.tool_calls!.map((c) => [c.id, c.type, c.type === 'function' && c.function.name, c.type === 'function' && c.function.arguments]), [
      ['aaaaaaaa1', 'function', 'get_weather', '{"city":"Paris"}'],
      ['bbbbbbbb2', 'function', 'get_weather', '{"city":"Lyon"}'],
    ]);
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
  });

  test('the tool round trip sends the history with 9-character tool-call ids, consistent across messages', async () => {
    const foreignId = 'call_0123456789abcdef'; // e.g. a call made earlier through another provider
    const mistralId = mistralToolCallId(foreignId);
    assert.match(mistralId, /^[a-zA-Z0-9]{9}$/);
    assert.equal(mistralToolCallId(foreignId), mistralId, 'deterministic');
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Lyon and Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: foreignId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } }] },
      { role: 'tool', tool_call_id: foreignId, content: 'Rainy, 12°C' },
      { role: 'assistant', content: 'Checking Paris.', tool_calls: [{ id: MISTRAL_SIM_TOOL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: MISTRAL_SIM_TOOL_ID, content: [{ type: 'text', text: 'Sunny, 24°C' }] },
    ];
    const data = await client.chat.completions.create({ model: 'mistral/sim-tool', messages: history, tools: [weatherTool] });
    assert.equal(data.choices[0]!.message.content, MISTRAL_SIM_FINAL);
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(lastBody().messages, [
      { role: 'user', content: 'Weather in Lyon and Paris?' },
      { role: 'assistant', tool_calls: [{ id: mistralId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } }] },
      { role: 'tool', content: 'Rainy, 12°C', tool_call_id: mistralId, name: 'get_weather' },
      { role: 'assistant', content: 'Checking Paris.', tool_calls: [{ id: MISTRAL_SIM_TOOL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', content: 'Sunny, 24°C', tool_call_id: MISTRAL_SIM_TOOL_ID, name: 'get_weather' },
    ]);
  });
});

describe('mistral images', () => {
  test('data URLs and http URLs become Mistral image_url chunks', async () => {
    const dataUrl = 'data:image/png;base64,iVBORw0KGgo=';
    const data = await client.chat.completions.create({
      model: 'mistral/mistral-small-latest',
      messages: [{ role: 'user', content: [
        { type: 'text', text: 'Compare these' },
        { type: 'image_url', image_url: { url: dataUrl } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
      ] }],
    });
    assert.equal(data.choices[0]!.message.content, MISTRAL_SIM_REPLY);
    assert.deepEqual(lastBody().messages, [{ role: 'user', content: [
      { type: 'text', text: 'Compare these' },
      { type: 'image_url', image_url: dataUrl },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
    ] }]);
  });

  test('an image URL Mistral cannot fetch and a part it cannot take are refused naming the part', async () => {
    const before = sim.requests.length;
    const ftp = await apiError(() => client.chat.completions.create({
      model: 'mistral/mistral-small-latest',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'ftp://example.com/cat.jpg' } }] }],
    }));
    assert.equal(ftp.status, 400);
    assert.equal(ftp.param, 'messages[0].content[1].image_url');
    const audio = await apiError(() => client.chat.completions.create({
      model: 'mistral/mistral-small-latest',
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    }));
    assert.equal(audio.param, 'messages[0].content[0]');
    assert.match(audio.message, /input_audio/);
    assert.equal(sim.requests.length, before, 'nothing was sent upstream');
  });
});

describe('mistral parameter mapping', () => {
  test('sampling, limits, stop, seed, json mode and cache key are translated; OpenAI-only hints are dropped', async () => {
    await client.chat.completions.create({
      model: 'mistral/mistral-small-latest', messages,
      stop: ['\n\n', 'END'], temperature: 2, top_p: 0, max_tokens: 10, max_completion_tokens: 64, seed: 42,
      presence_penalty: 0.5, frequency_penalty: -0.5, n: 2, response_format: { type: 'json_object' }, prompt_cache_key: 'session-42',
      user: 'end-user-1', store: true, metadata: { team: 'a' }, service_tier: 'flex', reasoning_effort: 'low', logprobs: false,
      logit_bias: {}, modalities: ['text'],
    });
    assert.deepEqual(lastBody(), {
      model: 'mistral-small-latest', messages: [{ role: 'user', content: 'Say hello' }], stream: false,
      temperature: 1.5, top_p: 0.01, max_tokens: 64, stop: ['\n\n', 'END'], random_seed: 42,
      presence_penalty: 0.5, frequency_penalty: -0.5, n: 2, response_format: { type: 'json_object' }, prompt_cache_key: 'session-42',
    });
  });

  test('a temperature inside Mistral\'s range and a json_schema response format pass unchanged', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    await client.chat.completions.create({
      model: 'mistral/mistral-small-latest', messages, temperature: 0.3, top_p: 0.9, stop: 'STOP',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', description: 'An answer', schema, strict: true } },
      prediction: { type: 'content', content: [{ type: 'text', text: 'Hello' }] },
    });
    const body = lastBody();
    assert.deepEqual([body.temperature, body.top_p, body.stop], [0.3, 0.9, 'STOP']);
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema, description: 'An answer', strict: true } });
    assert.deepEqual(body.prediction, { type: 'content', content: 'Hello' });
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 3 }, 'top_logprobs'],
    ['logit_bias', { logit_bias: { 50256: -100 } }, 'logit_bias'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    ['an unknown field', { foo_bar: 1 }, 'foo_bar'],
    ['a response format Mistral lacks', { response_format: { type: 'xml' } }, 'response_format.type'],
    ['a json_schema without a schema', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema'],
    ['an allowed_tools tool_choice', { tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice'],
    ['a deprecated function message', { messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    ['a tool message without tool_call_id', { messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    ['an image in a system message', { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }, 'messages[0].content[0]'],
  ];
  for (const [what, extra, param] of refusals) {
    test(`${what} is refused with 400 naming "${param}", before anything is sent`, async () => {
      const before = sim.requests.length;
      const err = await apiError(() => client.chat.completions.create({ model: 'mistral/mistral-small-latest', messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming));
      assert.equal(err.status, 400);
      assert.equal(err.param, param);
      assert.equal(err.headers!.get('x-should-retry'), 'false');
      assert.equal(sim.requests.length, before);
    });
  }
});

describe('mistral upstream errors', () => {
  test('a 429 keeps its status with retry-after taken from ratelimitbysize-reset', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-429', messages }));
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers.get('retry-after'), '7');
    assert.equal(err.headers.get('retry-after-ms'), '7000');
    assert.match(err.message, /answered 429: Requests rate limit exceeded/);
  });

  test('a spent monthly budget is a 429 the SDK must not retry', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-quota', messages }));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'insufficient_quota');
    assert.equal(err.headers!.get('x-should-retry'), 'false');
  });

  test('a 500 becomes a 502 upstream_error, logged', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-500', messages }));
    assert.equal(err.status, 502);
    assert.equal(err.type, 'upstream_error');
    assert.match(err.message, /answered 500: Internal server error/);
    const row = await tg.logRow(err.requestID!);
    assert.equal(row.status, 502);
  });

  test('a 503 becomes 503 overloaded with its retry-after', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-overloaded', messages }));
    assert.equal(err.status, 503);
    assert.equal(err.code, 'overloaded');
    assert.equal(err.headers!.get('retry-after'), '3');
  });

  test('a rejected credential keeps 401 and never echoes the key', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistralbadkey/mistral-small-latest', messages }));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'upstream_authentication_error');
    assert.match(err.message, /rejected the gateway's credential/);
    assert.doesNotMatch(err.message, /sk-wrong/);
    assert.equal(sim.requests.at(-1)!.headers.authorization, 'Bearer sk-wrong-upstream-key');
  });

  test('an unknown model (404, or Mistral\'s 400 invalid_model) is 404 model_not_found', async () => {
    for (const model of ['sim-404', 'sim-invalid-model']) {
      const err = await apiError(() => client.chat.completions.create({ model: `mistral/${model}`, messages }));
      assert.equal(err.status, 404, model);
      assert.equal(err.code, 'model_not_found');
      assert.equal(err.param, 'model');
      assert.match(err.message, new RegExp(`Invalid model: ${model}`));
    }
  });

  test('a mid-stream error event reaches the SDK as an error after the text before it', async () => {
    const received: string[] = [];
    const err = await apiError(async () => {
      for await (const chunk of await client.chat.completions.create({ model: 'mistral/sim-mid-error', messages, stream: true })) {
        received.push(chunk.choices[0]?.delta.content ?? '');
      }
    });
    assert.match(err.message, /failed mid-stream: Internal error while generating/);
    assert.equal(received.join(''), 'Bonjour');
  });

  test('finish_reason "error" ends the stream with an error event and fails a non-streamed call with 502', async () => {
    const received: string[] = [];
    const streamErr = await apiError(async () => {
      for await (const chunk of await client.chat.completions.create({ model: 'mistral/sim-finish-error', messages, stream: true })) {
        received.push(chunk.choices[0]?.delta.content ?? '');
      }
    });
    assert.match(streamErr.message, /stopped generating with an error/);
    assert.equal(received.join(''), MISTRAL_SIM_REPLY);
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-finish-error', messages }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_error');
  });

  test('a socket reset mid-stream and a stream cut before its end are errors, not silent truncations', async () => {
    for (const model of ['sim-reset', 'sim-truncated']) {
      const { data: stream, response } = await client.chat.completions.create({ model: `mistral/${model}`, messages, stream: true }).withResponse();
      const err = await apiError(() => collect(stream));
      assert.equal(err.type, 'upstream_error', model);
      const row = await tg.logRow(response.headers.get('x-request-id')!);
      assert.equal(row.status, 502, model);
    }
    const reset = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-reset', messages }));
    assert.equal(reset.status, 502);
  });

  test('a malformed body or stream event is a 502', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'mistral/sim-malformed', messages }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_malformed_response');
    const streamErr = await apiError(async () => collect(await client.chat.completions.create({ model: 'mistral/sim-malformed', messages, stream: true })));
    assert.equal(streamErr.code, 'upstream_malformed_response');
  });

  test('422 validation bodies in all three of Mistral\'s shapes become 400 invalid_request naming the client field', () => {
    const detail = [{ type: 'less_than_equal', loc: ['body', 'random_seed'], msg: 'Input should be less than 10', input: 11 }];
    const shapes = [
      JSON.stringify({ detail }),
      JSON.stringify({ object: 'error', message: { detail }, type: 'invalid_request_error', param: null, code: null }),
      JSON.stringify({ object: 'error', message: JSON.stringify({ detail }), type: 'invalid_request_error', param: null, code: null }),
    ];
    for (const body of shapes) {
      const err = mapMistralError('mistral', 'm', 422, body, {});
      assert.equal(err.status, 400);
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.param, 'seed');
      assert.equal(err.message, 'Provider "mistral" answered 422: seed: Input should be less than 10');
    }
    const nested = mapMistralError('mistral', 'm', 422, JSON.stringify({ detail: [{ loc: ['body', 'messages', 2, 'content'], msg: 'Field required' }] }), {});
    assert.equal(nested.param, 'messages[2].content');
  });

  test('other 4xx keep their status and are not retried; bodies that are not JSON give no upstream text', () => {
    const bad = mapMistralError('mistral', 'm', 400, JSON.stringify({ object: 'error', message: 'Expected last role to be user', type: 'invalid_request_message_order', param: null, code: '3230' }), {});
    assert.equal(bad.status, 400);
    assert.equal(bad.code, 'invalid_request_message_order');
    assert.equal(bad.headers['x-should-retry'], 'false');
    const html = mapMistralError('mistral', 'm', 502, '<html>Bad gateway</html>', {});
    assert.equal(html.status, 502);
    assert.equal(html.message, 'Provider "mistral" answered 502.');
    const forbidden = mapMistralError('mistral', 'm', 403, JSON.stringify({ message: 'key sk-abc has no access' }), {});
    assert.equal(forbidden.status, 403);
    assert.doesNotMatch(forbidden.message, /sk-abc/);
  });
});

describe('mistral model discovery', () => {
  test('GET /api/v1/models lists chat models as mistral/<model>, one unpaged request, without failing providers', async () => {
    const before = sim.requests.filter((r) => r.path === '/v1/models').length;
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    const mistral = ids.filter((id) => id.startsWith('mistral/')).sort();
    assert.deepEqual(mistral, ['mistral/mistral-large-latest', 'mistral/mistral-small-latest', 'mistral/open-mistral-7b']);
    assert.ok(!ids.some((id) => id.startsWith('mistraldown/') || id.startsWith('mistralbadkey/')), ids.join(','));
    const listCalls = sim.requests.filter((r) => r.path === '/v1/models').slice(before);
    assert.ok(listCalls.length <= 2, 'one list call per provider on this simulator, no paging');
    assert.ok(listCalls.every((r) => r.method === 'GET'));
  });

  test('a bare model id resolves through the catalog to mistral', async () => {
    const data = await client.chat.completions.create({ model: 'mistral-large-latest', messages });
    assert.equal(data.model, 'mistral-large-latest');
    assert.equal(lastBody().model, 'mistral-large-latest');
  });

  test('a provider whose list endpoint is down still answers models addressed as provider/model', async () => {
    const data = await client.chat.completions.create({ model: 'mistraldown/mistral-small-latest', messages });
    assert.equal(data.choices[0]!.message.content, MISTRAL_SIM_REPLY);
    assert.equal(downSim.requests.at(-1)!.path, '/v1/chat/completions');
    assert.ok(downSim.requests.some((r) => r.path === '/v1/models'), 'discovery was attempted');
  });

  test('listModels keeps display names, drops non-chat models, and reports a failing list', async () => {
    const upstream = createUpstreamClient({ connectTimeoutMs: 2_000, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, maxResponseBytes: 1_000_000, connectionsPerOrigin: 2 });
    try {
      const provider = new MistralProvider('mistral', { type: 'mistral', baseUrl: `${sim.baseUrl}/`, apiKey: MISTRAL_SIM_KEY }, upstream);
      const credential = provider.sharedCredential()!;
      assert.deepEqual(await provider.listModels(credential), [
        { id: 'mistral-small-latest', created: 1_750_000_000, owned_by: 'mistralai', display_name: 'Mistral Small' },
        { id: 'mistral-large-latest', created: 1_750_000_000, owned_by: 'mistralai', display_name: 'Mistral Large' },
        { id: 'open-mistral-7b', created: 1_750_000_000, owned_by: 'mistralai' },
      ]);
      const check = await provider.testCredential(credential);
      assert.deepEqual(check, { ok: true, message: 'Mistral accepted the credential (3 models).' });
      const down = new MistralProvider('mistraldown', { type: 'mistral', baseUrl: downSim.baseUrl, apiKey: MISTRAL_SIM_KEY }, upstream);
      await assert.rejects(down.listModels(down.sharedCredential()!), { status: 502 });
    } finally {
      await upstream.close();
    }
  });
});
