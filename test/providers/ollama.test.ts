/**
 * The Ollama provider through the whole in-process gateway, with the official `openai` SDK as the
 * client and the Ollama simulator (native `/api/chat` NDJSON, `/api/tags`) as the upstream: request
 * and response translation both ways, streams, tool calls, images, errors and model discovery.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import {
  startOllamaSimulator, SIM_CREATED, SIM_MODIFIED_AT, SIM_REPLY, SIM_TOOL_REPLY, type OllamaSimulator, type RecordedRequest,
} from '../helpers/ollama-simulator.ts';

let sim: OllamaSimulator;
let brokenSim: OllamaSimulator;
let tg: TestGateway;
let client: OpenAI;

const PROXY_KEY = 'sk-proxy-secret-1234567890';
const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const USAGE = { prompt_tokens: 26, completion_tokens: 12, total_tokens: 38 };
const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
    strict: true,
  },
};
const ollamaWeatherTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: weatherTool.function.parameters },
};

async function closedPortUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

function lastChat(): RecordedRequest {
  return sim.chatRequests().at(-1)!;
}

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The error a call rejects with (the test fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await promise.then(() => assert.fail('expected the call to fail'), (e: unknown) => e);
  assert.ok(err instanceof OpenAI.APIError, String(err));
  return err;
}

before(async () => {
  sim = await startOllamaSimulator();
  brokenSim = await startOllamaSimulator({ models: ['mistral:7b'] });
  brokenSim.failTags = true;
  tg = await startTestGateway({
    providers: {
      ollama: { type: 'ollama', baseUrl: sim.baseUrl },
      ollamakey: { type: 'ollama', baseUrl: `${sim.baseUrl}/`, apiKey: PROXY_KEY },
      ollamadown: { type: 'ollama', baseUrl: await closedPortUrl() },
      ollamabroken: { type: 'ollama', baseUrl: brokenSim.baseUrl },
    },
  });
  client = tg.client;
});

after(async () => {
  await tg?.close();
  await sim?.close();
  await brokenSim?.close();
});

describe('non-streamed chat', () => {
  test('translates the request to /api/chat and the answer to a chat.completion with usage, and logs the tokens', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'ollama/llama3.2', messages: [{ role: 'system', content: 'Be brief.' }, ...hello] })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.match(data.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.equal(data.created, SIM_CREATED);
    assert.equal(data.model, 'llama3.2');
    assert.deepEqual(data.choices, [{ index: 0, message: { role: 'assistant', content: SIM_REPLY }, logprobs: null, finish_reason: 'stop' }]);
    assert.deepEqual(data.usage, USAGE);

    const upstream = lastChat();
    assert.equal(upstream.method, 'POST');
    assert.deepEqual(upstream.body, {
      model: 'llama3.2',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }],
      stream: false,
    });
    assert.equal(upstream.headers['content-type'], 'application/json');
    assert.equal(upstream.headers.accept, 'application/json');
    assert.equal(upstream.headers.authorization, undefined, 'Ollama needs no key and none is configured');

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(
      [row.provider, row.model_requested, row.model_served, row.status, row.stream],
      ['ollama', 'ollama/llama3.2', 'llama3.2', 200, 0],
    );
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [26, 12, 0]);
  });

  test('sends a configured key as a bearer token and honours a base URL with a trailing slash', async () => {
    await client.chat.completions.create({ model: 'ollamakey/llama3.2', messages: hello });
    assert.equal(lastChat().path, '/api/chat');
    assert.equal(lastChat().headers.authorization, `Bearer ${PROXY_KEY}`);
  });

  test('a prompt served from Ollama\'s cache (no prompt_eval_count) counts 0 prompt tokens', async () => {
    const data = await client.chat.completions.create({ model: 'ollama/sim-cached', messages: hello });
    assert.deepEqual(data.usage, { prompt_tokens: 0, completion_tokens: 12, total_tokens: 12 });
  });

  test('an answer without any counts reports no usage rather than zeros', async () => {
    const data = await client.chat.completions.create({ model: 'ollama/sim-nocounts', messages: hello });
    assert.equal(data.usage, undefined);
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
  });

  test('done_reason "length" becomes finish_reason "length"', async () => {
    const data = await client.chat.completions.create({ model: 'ollama/sim-length', messages: hello, max_tokens: 8 });
    assert.equal(data.choices[0]!.finish_reason, 'length');
    assert.deepEqual(lastChat().body!.options, { num_predict: 8 });
  });

  test('thinking is returned as reasoning_content, never mixed into the content', async () => {
    const data = await client.chat.completions.create({ model: 'ollama/sim-thinking', messages: hello });
    const message = data.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    assert.equal(message.content, SIM_REPLY);
    assert.equal(message.reasoning_content, 'The user greets me.');
  });
});

describe('streamed chat', () => {
  test('without include_usage: deltas reassemble, no usage chunk reaches the client, the log has the tokens', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'ollama/llama3.2', messages: hello, stream: true })
      .withResponse();
    const chunks = await collect(stream);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), SIM_REPLY);
    assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.choices.length === 1 && c.usage == null), 'no usage reaches a client that did not ask');
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    assert.ok(chunks.every((c) => c.model === 'llama3.2' && c.created === SIM_CREATED && c.object === 'chat.completion.chunk'));

    const upstream = lastChat();
    assert.deepEqual(upstream.body, { model: 'llama3.2', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    assert.equal(upstream.headers.accept, 'application/x-ndjson');

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.stream, 1);
    assert.deepEqual([row.status, row.prompt_tokens, row.completion_tokens], [200, 26, 12]);
  });

  test('with include_usage: the stream ends with one usage chunk carrying the exact counts', async () => {
    const chunks = await collect(
      await client.chat.completions.create({ model: 'ollama/llama3.2', messages: hello, stream: true, stream_options: { include_usage: true } }),
    );
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, USAGE);
    assert.equal(chunks.filter((c) => c.usage).length, 1);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
    assert.equal(lastChat().body!.stream_options, undefined, 'stream_options is not an Ollama field');
  });

  test('streamed thinking arrives as reasoning_content deltas and "length" as the finish reason', async () => {
    const thinking = await collect(await client.chat.completions.create({ model: 'ollama/sim-thinking', messages: hello, stream: true }));
    const reasoning = thinking.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    assert.equal(reasoning, 'The user greets me.');
    const length = await collect(await client.chat.completions.create({ model: 'ollama/sim-length', messages: hello, stream: true }));
    assert.equal(length.at(-1)!.choices[0]!.finish_reason, 'length');
  });
});

describe('tool calls', () => {
  test('a non-streamed tool call round trip translates tools, the call, and the history with the tool result', async () => {
    const first = await client.chat.completions.create({ model: 'ollama/sim-tool', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], tool_choice: 'auto' });
    assert.deepEqual(lastChat().body!.tools, [ollamaWeatherTool], 'strict is dropped, the rest is the same shape');
    assert.equal(lastChat().body!.tool_choice, undefined);
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.match(call.id, /^call_[0-9a-f]{24}$/);
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris', unit: 'celsius' });

    const second = await client.chat.completions.create({
      model: 'ollama/sim-tool',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '18C' },
      ],
    });
    assert.deepEqual(lastChat().body!.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } }] },
      { role: 'tool', content: '18C', tool_name: 'get_weather' },
    ]);
    assert.equal(second.choices[0]!.message.content, SIM_TOOL_REPLY);
    assert.equal(second.choices[0]!.finish_reason, 'stop');
  });

  test('a streamed tool call arrives as one complete delta the SDK assembles, then the round trip finishes', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const stream = client.chat.completions.stream({ model: 'ollama/sim-tool', messages, tools: [weatherTool] });
    const deltas: OpenAI.ChatCompletionChunk[] = [];
    stream.on('chunk', (chunk) => deltas.push(chunk));
    const final = await stream.finalChatCompletion();
    const toolDeltas = deltas.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(toolDeltas.length, 1);
    const delta = toolDeltas[0]!;
    assert.equal(delta.index, 0);
    assert.match(delta.id!, /^call_[0-9a-f]{24}$/);
    assert.equal(delta.type, 'function');
    assert.equal(delta.function!.name, 'get_weather');
    assert.deepEqual(JSON.parse(delta.function!.arguments!), { city: 'Paris', unit: 'celsius' });

    const message = final.choices[0]!.message;
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.equal(call.id, delta.id);
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris', unit: 'celsius' });

    const answer = await collect(await client.chat.completions.create({
      model: 'ollama/sim-tool', stream: true, tools: [weatherTool],
      messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: [{ type: 'text', text: '18C' }] }],
    }));
    assert.deepEqual(lastChat().body!.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } }] },
      { role: 'tool', content: '18C', tool_name: 'get_weather' },
    ]);
    assert.equal(answer.map((c) => c.choices[0]?.delta.content ?? '').join(''), SIM_TOOL_REPLY);
  });

  test('tool-call ids from newer Ollama versions are kept, and several calls get consecutive indexes', async () => {
    const data = await client.chat.completions.create({ model: 'ollama/sim-tool-ids', messages: hello, tools: [weatherTool] });
    assert.deepEqual(data.choices[0]!.message.tool_calls, [
      { id: 'call_sim0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_sim1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
    const chunks = await collect(await client.chat.completions.create({ model: 'ollama/sim-tool-ids', messages: hello, tools: [weatherTool], stream: true }));
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(toolDeltas.map((d) => [d.index, d.id]), [[0, 'call_sim0'], [1, 'call_sim1']]);
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'tool_calls');
  });

  test('a tool result whose call is not in the history is sent without tool_name', async () => {
    await client.chat.completions.create({
      model: 'ollama/llama3.2',
      messages: [{ role: 'user', content: 'Go on' }, { role: 'tool', tool_call_id: 'call_trimmed', content: 'done' }],
    });
    assert.deepEqual(lastChat().body!.messages, [{ role: 'user', content: 'Go on' }, { role: 'tool', content: 'done' }]);
  });

  test('tool_choice "none" is honoured by not sending the tools', async () => {
    await client.chat.completions.create({ model: 'ollama/llama3.2', messages: hello, tools: [weatherTool], tool_choice: 'none' });
    assert.equal(lastChat().body!.tools, undefined);
  });
});

describe('images', () => {
  test('a data URL becomes raw base64 in the user message\'s images', async () => {
    await client.chat.completions.create({
      model: 'ollama/llava:7b',
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'text', text: 'One word.' },
        ],
      }],
    });
    assert.deepEqual(lastChat().body!.messages, [{ role: 'user', content: 'What is in this image?\nOne word.', images: ['iVBORw0KGgo='] }]);
  });

  test('an http(s) image URL is refused with 400 naming the part, and nothing is sent upstream', async () => {
    const before = sim.chatRequests().length;
    const err = await rejection(client.chat.completions.create({
      model: 'ollama/llava:7b',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    }));
    assert.equal(err.status, 400);
    assert.equal(err.param, 'messages[0].content[1].image_url');
    assert.match(err.message, /does not fetch URLs/);
    assert.equal(sim.chatRequests().length, before);
  });
});

describe('upstream errors', () => {
  test('429 keeps its status and passes retry-after', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-429', messages: hello }));
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers?.get('retry-after'), '7');
    assert.equal(err.message, '429 Provider "ollama" answered 429: too many concurrent requests, please retry later');
  });

  test('402 (usage limit) keeps its status as insufficient_quota and is not retryable', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-402', messages: hello }));
    assert.equal(err.status, 402);
    assert.equal(err.code, 'insufficient_quota');
    assert.equal(err.headers?.get('x-should-retry'), 'false');
  });

  test('500 becomes a logged 502 upstream_error with Ollama\'s message', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-500', messages: hello }));
    assert.equal(err.status, 502);
    assert.equal(err.type, 'upstream_error');
    assert.match(err.message, /answered 500: llama runner process has terminated/);
    const row = await tg.logRow(err.requestID!);
    assert.deepEqual([row.status, row.error_code], [502, 'upstream_error']);
  });

  test('503 "server busy" becomes 503 overloaded', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-busy', messages: hello }));
    assert.equal(err.status, 503);
    assert.equal(err.code, 'overloaded');
  });

  test('an auth failure keeps its status and never echoes the upstream text carrying the key', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollamakey/sim-401', messages: hello }));
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, /sk-proxy/);
    assert.match(err.message, /rejected the gateway's credential/);
    assert.equal(err.headers?.get('x-should-retry'), 'false');
  });

  test('a model that was never pulled becomes 404 model_not_found', async () => {
    for (const model of ['ollama/phi4', 'ollama/sim-404']) {
      const err = await rejection(client.chat.completions.create({ model, messages: hello }));
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.equal(err.code, 'model_not_found');
      assert.equal(err.param, 'model');
      assert.match(err.message, /ollama pull/);
    }
  });

  test('a proxy\'s plain-text 404 stays a 404 upstream_error with its text', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-proxy404', messages: hello }));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'upstream_error');
    assert.match(err.message, /answered 404: 404 page not found/);
  });

  test('a 400 from Ollama keeps its status and message and is not retryable', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-notools', messages: hello, tools: [weatherTool] }));
    assert.equal(err.status, 400);
    assert.match(err.message, /does not support tools/);
    assert.equal(err.headers?.get('x-should-retry'), 'false');
  });

  test('an error line mid-stream ends the SSE stream with an error event the SDK throws', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'ollama/sim-mid-error', messages: hello, stream: true })
      .withResponse();
    const received: string[] = [];
    const err = await rejection((async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })());
    assert.match(err.message, /failed mid-stream: an error was encountered while running the model/);
    assert.ok(received.length >= 1, 'the chunks before the error were delivered');
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 502);
  });

  test('a reset mid-stream ends the stream with an error; a reset before the answer is a 502', async () => {
    const stream = await client.chat.completions.create({ model: 'ollama/sim-reset', messages: hello, stream: true });
    const err = await rejection(collect(stream));
    assert.equal(err.code, 'upstream_stream_truncated');
    assert.match(err.message, /Provider "ollama" ended the answer/);
    const early = await rejection(client.chat.completions.create({ model: 'ollama/sim-reset', messages: hello }));
    assert.equal(early.status, 502);
  });

  test('a body or stream line that is not JSON becomes 502 upstream_malformed_response', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollama/sim-malformed', messages: hello }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_malformed_response');
    const streamErr = await rejection(collect(await client.chat.completions.create({ model: 'ollama/sim-malformed', messages: hello, stream: true })));
    assert.equal(streamErr.code, 'upstream_malformed_response');
  });

  test('a stream that ends without its done line is reported as truncated', async () => {
    const err = await rejection(collect(await client.chat.completions.create({ model: 'ollama/sim-truncated', messages: hello, stream: true })));
    assert.equal(err.code, 'upstream_stream_truncated');
  });

  test('an Ollama that is not running gives 502 upstream_unreachable', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'ollamadown/llama3.2', messages: hello }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_unreachable');
  });
});

describe('parameter mapping', () => {
  test('sampling parameters go to options, JSON mode to format, and the dropped fields are not sent', async () => {
    await client.chat.completions.create({
      model: 'ollama/llama3.2',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Answer in JSON.' }] },
        { role: 'user', content: 'Weather?', name: 'alice' },
        { role: 'assistant', content: [{ type: 'text', text: '{"ok":' }, { type: 'text', text: 'true}' }] },
        { role: 'user', content: 'Again' },
      ],
      stop: 'END', temperature: 1.5, top_p: 0.9, max_completion_tokens: 50, max_tokens: 999, seed: 7,
      presence_penalty: 0.5, frequency_penalty: 0.25, response_format: { type: 'json_object' },
      user: 'u-1', metadata: { team: 'a' }, store: false, service_tier: 'auto', reasoning_effort: 'low', n: 1,
      logprobs: false, parallel_tool_calls: true, tool_choice: 'auto', logit_bias: {},
    });
    assert.deepEqual(lastChat().body, {
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '{"ok":\ntrue}' },
        { role: 'user', content: 'Again' },
      ],
      stream: false,
      format: 'json',
      options: { temperature: 1.5, top_p: 0.9, num_predict: 50, stop: ['END'], seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25 },
    });
  });

  test('a JSON schema becomes format, stop arrays pass as they are, and response_format text sends nothing', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    await client.chat.completions.create({
      model: 'ollama/llama3.2', messages: hello, stop: ['END', 'STOP'], temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    assert.deepEqual(lastChat().body!.format, schema);
    assert.deepEqual(lastChat().body!.options, { temperature: 0, stop: ['END', 'STOP'] });
    await client.chat.completions.create({ model: 'ollama/llama3.2', messages: hello, response_format: { type: 'text' } });
    assert.equal(lastChat().body!.format, undefined);
    assert.equal(lastChat().body!.options, undefined);
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['n above 1', { n: 2 }, 'n'],
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { logprobs: false, top_logprobs: 3 }, 'top_logprobs'],
    ['a logit bias', { logit_bias: { '50256': -100 } }, 'logit_bias'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    ['audio options', { audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    ['web search', { web_search_options: {} }, 'web_search_options'],
    ['deprecated functions', { functions: [{ name: 'f' }] }, 'functions'],
    ['deprecated function_call', { function_call: 'auto' }, 'function_call'],
    ['tool_choice "required"', { tools: [weatherTool], tool_choice: 'required' }, 'tool_choice'],
    ['a named tool_choice', { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } }, 'tool_choice'],
    ['parallel_tool_calls false', { tools: [weatherTool], parallel_tool_calls: false }, 'parallel_tool_calls'],
    ['an unknown response_format', { response_format: { type: 'grammar' } }, 'response_format.type'],
    ['a json_schema without a schema', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema.schema'],
    ['the function role', { messages: [{ role: 'user', content: 'hi' }, { role: 'function', name: 'f', content: 'x' }] }, 'messages[1].role'],
    ['an audio part', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'messages[0].content[0]'],
    ['an image that is not a data URL', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://host/cat.png' } }] }] }, 'messages[0].content[0].image_url'],
    ['an image in a system message', { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }, 'messages[0].content[0]'],
    ['tool arguments that are not an object', {
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '[1]' } }] }],
    }, 'messages[1].tool_calls[0].function.arguments'],
  ];
  for (const [what, fields, param] of refusals) {
    test(`refuses ${what} with 400 naming "${param}"`, async () => {
      const before = sim.chatRequests().length;
      const body = { model: 'ollama/llama3.2', messages: hello, ...fields } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
      const err = await rejection(client.chat.completions.create(body));
      assert.equal(err.status, 400);
      assert.equal(err.param, param);
      assert.equal(sim.chatRequests().length, before, 'nothing was sent upstream');
    });
  }
});

describe('model discovery', () => {
  test('GET /api/v1/models lists the pulled models as ollama/<name> from one unpaged /api/tags call; a down or failing Ollama is left out', async () => {
    const tagsBefore = sim.requests.filter((r) => r.path === '/api/tags').length;
    const models: OpenAI.Model[] = [];
    for await (const model of client.models.list()) models.push(model);
    const created = Math.floor(Date.parse(SIM_MODIFIED_AT) / 1000);
    // OpenAI's four fields; the Anthropic ones beside them (type, display_name, created_at) are tested with the Anthropic SDK.
    assert.deepEqual(
      models.filter((m) => m.id.startsWith('ollama/')).map(({ id, object, created, owned_by }) => ({ id, object, created, owned_by })),
      ['llama3.2:latest', 'llava:7b', 'qwen3:8b'].map((name) => ({ id: `ollama/${name}`, object: 'model', created, owned_by: 'ollama' })),
    );
    assert.ok(models.some((m) => m.id === 'ollamakey/qwen3:8b'));
    assert.ok(!models.some((m) => m.id.startsWith('ollamadown/') || m.id.startsWith('ollamabroken/')), models.map((m) => m.id).join(','));
    const tagCalls = sim.requests.filter((r) => r.path === '/api/tags').slice(tagsBefore);
    assert.equal(tagCalls.length, 2, 'one call per provider: Ollama does not page');
    assert.ok(tagCalls.every((r) => r.method === 'GET'));
    assert.deepEqual(tagCalls.map((r) => r.headers.authorization ?? '(none)').sort(), ['(none)', `Bearer ${PROXY_KEY}`]);
    const failures = tg.serverLog.filter((l) => l.includes('model discovery failed'));
    assert.ok(failures.some((l) => l.includes('ollamadown')), failures.join('\n'));
    assert.ok(failures.some((l) => l.includes('ollamabroken')), failures.join('\n'));
  });

  test('a provider whose list endpoint is down still serves chats addressed as provider/model', async () => {
    const data = await client.chat.completions.create({ model: 'ollamabroken/mistral:7b', messages: hello });
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    assert.equal(brokenSim.chatRequests().at(-1)!.body!.model, 'mistral:7b');
  });

  test('a bare model id resolves through the discovered catalog', async () => {
    const err = await rejection(client.chat.completions.create({ model: 'llava:7b', messages: hello }));
    assert.equal(err.status, 400, 'listed by ollama and ollamakey');
    assert.match(err.message, /ollama\/llava:7b, ollamakey\/llava:7b/);
  });
});
