/**
 * The Gemini provider through the whole in-process gateway, with the official `openai` SDK as the
 * client and the Gemini simulator as the upstream: request and answer translation (streams
 * included), tool calls, images, parameter decisions, error mapping and model discovery.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import {
  startGeminiSimulator, SIM_REPLY, SIM_SIGNATURE, SIM_TOOL_ANSWER, type GeminiSimulator, type RecordedGeminiRequest,
} from '../helpers/gemini-simulator.ts';
import { GeminiProvider } from '../../plugins/provider-router/providers/gemini/index.ts';
import { createUpstreamClient, type UpstreamClient } from '../../core/upstream/upstream-client.ts';

const KEY = 'gm-upstream-secret-key';
const USAGE = {
  prompt_tokens: 21, completion_tokens: 13, total_tokens: 34,
  prompt_tokens_details: { cached_tokens: 6 }, completion_tokens_details: { reasoning_tokens: 4 },
};
const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['C', 'F'] } }, required: ['city'], additionalProperties: false },
  },
};
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];

let sim: GeminiSimulator;
let downSim: GeminiSimulator;
let tg: TestGateway;
let client: OpenAI;

const lastChat = (): RecordedGeminiRequest => sim.chatRequests().at(-1)!;

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Runs `fn`, expecting the SDK to throw an `APIError`; returns it. */
async function apiError(fn: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof OpenAI.APIError, `expected an APIError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

before(async () => {
  sim = await startGeminiSimulator();
  downSim = await startGeminiSimulator({ failModelList: true });
  tg = await startTestGateway({
    providers: {
      gemini: { type: 'gemini', baseUrl: sim.baseUrl, apiKey: KEY },
      gdown: { type: 'gemini', baseUrl: downSim.baseUrl, apiKey: KEY },
      gbadkey: { type: 'gemini', baseUrl: `${sim.baseUrl}/`, apiKey: 'bad-key' },
    },
  });
  client = tg.client;
});

after(async () => {
  await tg?.close();
  await sim?.close();
  await downSim?.close();
});

describe('gemini: non-streamed completions', () => {
  test('translates the request, and the answer, usage and log row back', async () => {
    const { data, response } = await client.chat.completions.create({
      model: 'gemini/gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Say hello', name: 'alice' },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
      ],
      temperature: 0.3, top_p: 0.9, max_tokens: 100, stop: ['END'], seed: 7, presence_penalty: 0.5, frequency_penalty: 0.25,
      user: 'end-user-1', metadata: { team: 'a' }, store: false, logprobs: false, parallel_tool_calls: true, service_tier: 'auto',
    }).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.match(data.id, /^chatcmpl-/);
    assert.equal(data.model, 'gemini-2.5-flash');
    assert.equal(data.choices.length, 1);
    assert.deepEqual(data.choices[0]!.message.content, SIM_REPLY, 'the thought part is not content');
    assert.equal(data.choices[0]!.message.role, 'assistant');
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(data.usage, USAGE);

    const upstream = lastChat();
    assert.equal(upstream.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(upstream.query, {});
    assert.equal(upstream.headers['x-goog-api-key'], KEY);
    assert.equal(upstream.headers.authorization, undefined);
    assert.equal(upstream.headers['content-type'], 'application/json');
    assert.deepEqual(upstream.body, {
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Say hello' }] },
        { role: 'model', parts: [{ text: 'Hi.' }] },
        { role: 'user', parts: [{ text: 'Again' }] },
      ],
      generationConfig: {
        maxOutputTokens: 100, temperature: 0.3, topP: 0.9, seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.25, stopSequences: ['END'],
      },
    });

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(
      [row.status, row.provider, row.model_served, row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.stream],
      [200, 'gemini', 'gemini-2.5-flash', 21, 13, 6, 0],
    );
  });

  test('never doubles the models/ prefix, and resolves a bare id through the catalog', async () => {
    await client.chat.completions.create({ model: 'gemini/models/gemini-2.5-flash', messages });
    assert.equal(lastChat().path, '/v1beta/models/gemini-2.5-flash:generateContent');
    await client.chat.completions.create({ model: 'gemini-2.0-flash-lite', messages });
    assert.equal(lastChat().path, '/v1beta/models/gemini-2.0-flash-lite:generateContent');
  });

  test('refuses a model id that would rewrite the upstream path', async () => {
    const before = sim.chatRequests().length;
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/../files', messages }));
    assert.equal(err.status, 400);
    assert.equal((err.error as { param?: string }).param, 'model');
    assert.equal(sim.chatRequests().length, before);
  });

  test('maps MAX_TOKENS to length and n to candidateCount with one choice per candidate', async () => {
    const cut = await client.chat.completions.create({ model: 'gemini/sim-length', messages, max_completion_tokens: 5, max_tokens: 50 });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.deepEqual(lastChat().body!.generationConfig, { maxOutputTokens: 5 });

    const two = await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, n: 2 });
    assert.deepEqual(two.choices.map((c) => [c.index, c.message.content]), [[0, SIM_REPLY], [1, SIM_REPLY]]);
    assert.deepEqual(lastChat().body!.generationConfig, { candidateCount: 2 });
  });

  test('a blocked prompt is an empty answer with finish_reason content_filter', async () => {
    const data = await client.chat.completions.create({ model: 'gemini/sim-blocked', messages });
    assert.equal(data.choices[0]!.message.content, '');
    assert.equal(data.choices[0]!.finish_reason, 'content_filter');
    assert.equal(data.usage!.prompt_tokens, 21);
    assert.equal(data.usage!.completion_tokens, 0);
  });
});

describe('gemini: streams', () => {
  test('without include_usage: content reassembles, no usage chunk, the log row has the tokens', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gemini/gemini-2.5-flash', messages, stream: true })
      .withResponse();
    const chunks = await collect(stream);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), SIM_REPLY);
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    assert.ok(chunks.slice(1).every((c) => c.choices[0]!.delta.role === undefined), 'only the first delta carries the role');
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.choices.length === 1 && c.usage == null));
    assert.ok(chunks.every((c) => c.id === chunks[0]!.id && c.model === 'gemini-2.5-flash'));

    const upstream = lastChat();
    assert.equal(upstream.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.deepEqual(upstream.query, { alt: 'sse' });
    assert.equal(upstream.headers.accept, 'text/event-stream');
    assert.deepEqual(upstream.body, { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] });

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.status, row.stream, row.prompt_tokens, row.completion_tokens, row.cached_tokens], [200, 1, 21, 13, 6]);
  });

  test('with include_usage: the last chunk carries the final running-total usage', async () => {
    const chunks = await collect(await client.chat.completions.create({
      model: 'gemini/gemini-2.5-flash', messages, stream: true, stream_options: { include_usage: true },
    }));
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, USAGE);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
    assert.equal(chunks.filter((c) => c.usage).length, 1);
    assert.equal(lastChat().body!.stream_options, undefined);
  });

  test('several candidates stream as separate choices that each finish', async () => {
    const chunks = await collect(await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, stream: true, n: 2 }));
    for (const index of [0, 1]) {
      const mine = chunks.filter((c) => c.choices[0]?.index === index);
      assert.equal(mine.map((c) => c.choices[0]!.delta.content ?? '').join(''), SIM_REPLY);
      assert.equal(mine[0]!.choices[0]!.delta.role, 'assistant');
      assert.equal(mine.at(-1)!.choices[0]!.finish_reason, 'stop');
    }
  });

  test('a blocked prompt streams one content_filter chunk', async () => {
    const chunks = await collect(await client.chat.completions.create({ model: 'gemini/sim-blocked', messages, stream: true }));
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0]!.choices[0]!.finish_reason, 'content_filter');
  });
});

describe('gemini: tool calls', () => {
  const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris and Tokyo?' };

  test('a non-streamed round trip: function calls out, translated history and results back in', async () => {
    const first = await client.chat.completions.create({ model: 'gemini/sim-tool', messages: [question], tools: [WEATHER_TOOL], tool_choice: 'auto' });
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    assert.deepEqual(calls.map((c) => [c.type, c.function.name, JSON.parse(c.function.arguments)]), [
      ['function', 'get_weather', { city: 'Paris' }],
      ['function', 'get_weather', { city: 'Tokyo', unit: 'C' }],
    ]);
    assert.match(calls[0]!.id, /^call_[0-9a-f]{24}_sig_[A-Za-z0-9_-]+$/, 'the signature rides in an id of the usual alphabet');
    assert.match(calls[1]!.id, /^call_[0-9a-f]{24}$/);
    assert.deepEqual(lastChat().body!.tools, [{
      functionDeclarations: [{ name: 'get_weather', description: 'Current weather in a city', parametersJsonSchema: WEATHER_TOOL.function.parameters }],
    }]);
    assert.deepEqual(lastChat().body!.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });

    const final = await client.chat.completions.create({
      model: 'gemini/sim-tool',
      tools: [WEATHER_TOOL],
      messages: [
        question,
        choice.message,
        { role: 'tool', tool_call_id: calls[0]!.id, content: '{"temperature":18}' },
        { role: 'tool', tool_call_id: calls[1]!.id, content: [{ type: 'text', text: '24C' }] },
      ],
    });
    assert.equal(final.choices[0]!.message.content, SIM_TOOL_ANSWER);
    assert.equal(final.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(lastChat().body!.contents, [
      { role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIM_SIGNATURE },
          { functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'C' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temperature: 18 } } },
          { functionResponse: { name: 'get_weather', response: { content: '24C' } } },
        ],
      },
    ]);
  });

  test('a streamed tool call arrives as OpenAI deltas the SDK assembles', async () => {
    const stream = client.chat.completions.stream({ model: 'gemini/sim-tool', messages: [question], tools: [WEATHER_TOOL] });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    stream.on('chunk', (chunk) => deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? [])));
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), [
      ['get_weather', '{"city":"Paris"}'],
      ['get_weather', '{"city":"Tokyo","unit":"C"}'],
    ]);
    assert.match(calls[0]!.id, /_sig_/);
    assert.deepEqual(deltas[0], { index: 0, id: calls[0]!.id, type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.deepEqual(deltas[1], { index: 0, function: { arguments: '{"city":"Paris"}' } });
    assert.equal(deltas[2]!.index, 1);
    assert.equal(deltas[2]!.id, calls[1]!.id);

    const answer = await collect(await client.chat.completions.create({
      model: 'gemini/sim-tool', stream: true, tools: [WEATHER_TOOL],
      messages: [question, final.choices[0]!.message, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'sunny' }))],
    }));
    assert.equal(answer.map((c) => c.choices[0]?.delta.content ?? '').join(''), SIM_TOOL_ANSWER);
    const contents = lastChat().body!.contents as Array<{ parts: Array<Record<string, unknown>> }>;
    assert.equal(contents[1]!.parts[0]!.thoughtSignature, SIM_SIGNATURE);
    assert.equal(contents[1]!.parts[1]!.thoughtSignature, undefined);
    assert.deepEqual(contents[2]!.parts, [
      { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
      { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
    ]);
  });

  test('tool_choice maps to functionCallingConfig modes', async () => {
    const cases: Array<[OpenAI.ChatCompletionToolChoiceOption, unknown]> = [
      ['required', { mode: 'ANY' }],
      ['none', { mode: 'NONE' }],
      [{ type: 'function', function: { name: 'get_weather' } }, { mode: 'ANY', allowedFunctionNames: ['get_weather'] }],
    ];
    for (const [choice, config] of cases) {
      await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, tools: [WEATHER_TOOL], tool_choice: choice });
      assert.deepEqual(lastChat().body!.toolConfig, { functionCallingConfig: config });
    }
  });

  test('refuses tool choices and histories it cannot translate, naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
      [{ tool_choice: 'required' }, 'tool_choice'],
      [{ tools: [WEATHER_TOOL], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice'],
      [{ messages: [...messages, { role: 'tool', tool_call_id: 'call_unknown', content: 'x' }] }, 'messages[1].tool_call_id'],
      [{ messages: [...messages, { role: 'function', name: 'f', content: 'x' }] }, 'messages[1].role'],
      [{
        messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '[1]' } }] }],
      }, 'messages[1].tool_calls[0].function.arguments'],
    ];
    const before = sim.chatRequests().length;
    for (const [extra, param] of cases) {
      const err = await apiError(() => client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming));
      assert.equal(err.status, 400, param);
      assert.equal((err.error as { param?: string }).param, param);
    }
    assert.equal(sim.chatRequests().length, before, 'nothing was sent upstream');
  });
});

describe('gemini: images and other media', () => {
  test('a data URL becomes inlineData, audio and file data too', async () => {
    await client.chat.completions.create({
      model: 'gemini/gemini-2.5-flash',
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
        ],
      }],
    });
    assert.deepEqual(lastChat().body!.contents, [{
      role: 'user',
      parts: [
        { text: 'What is this?' },
        { inlineData: { mimeType: 'image/png', data: PNG } },
        { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      ],
    }]);
  });

  test('an http image URL, an uploaded file id and a text-only slot with an image are refused with the param', async () => {
    const cases: Array<[OpenAI.ChatCompletionMessageParam[], string]> = [
      [[{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }], 'messages[0].content[1].image_url'],
      [[{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }], 'messages[0].content[0].file'],
      [[{ role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } as never }] }], 'messages[0].content[0].input_audio'],
      [[{ role: 'system', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] as never }, ...messages], 'messages[0].content[0]'],
      [[{ role: 'user', content: [{ type: 'refusal', refusal: 'x' } as never] }], 'messages[0].content[0]'],
    ];
    const before = sim.chatRequests().length;
    for (const [msgs, param] of cases) {
      const err = await apiError(() => client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: msgs }));
      assert.equal(err.status, 400);
      assert.equal((err.error as { param?: string }).param, param);
    }
    assert.equal(sim.chatRequests().length, before);
  });
});

describe('gemini: parameters', () => {
  test('response_format and reasoning_effort map to generationConfig', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ response_format: { type: 'json_object' } }, { responseMimeType: 'application/json' }],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } }, { responseMimeType: 'application/json', responseJsonSchema: schema }],
      [{ response_format: { type: 'text' }, reasoning_effort: 'low' }, { thinkingConfig: { thinkingBudget: 1024 } }],
      [{ reasoning_effort: 'none', temperature: 2 }, { temperature: 2, thinkingConfig: { thinkingBudget: 0 } }],
      [{ stop: 'STOP', top_p: 1 }, { topP: 1, stopSequences: ['STOP'] }],
    ];
    for (const [extra, config] of cases) {
      await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      assert.deepEqual(lastChat().body!.generationConfig, config, JSON.stringify(extra));
    }
  });

  test('refuses parameters Gemini cannot honour with a 400 naming them', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
      [{ service_tier: 'flex' }, 'service_tier'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ reasoning_effort: 'extreme' }, 'reasoning_effort'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'a' } } }, 'response_format.json_schema.schema'],
      [{ response_format: { type: 'grammar' } }, 'response_format.type'],
      [{ frobnicate: true }, 'frobnicate'],
    ];
    const before = sim.chatRequests().length;
    for (const [extra, param] of cases) {
      const err = await apiError(() => client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming));
      assert.equal(err.status, 400, param);
      assert.equal((err.error as { param?: string }).param, param);
      assert.ok(err.message.includes(`"${param}"`), err.message);
    }
    assert.equal(sim.chatRequests().length, before);
  });
});

describe('gemini: upstream errors', () => {
  test('429 RESOURCE_EXHAUSTED keeps 429 and turns RetryInfo into retry-after headers', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-429', messages }));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers?.get('retry-after'), '12');
    assert.equal(err.headers?.get('retry-after-ms'), '12000');
    assert.equal(err.headers?.get('x-should-retry'), null);
    assert.match(err.message, /Provider "gemini" answered 429: You exceeded your current quota/);
  });

  test('a per-day quota 429 is not retryable', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-quota-day', messages }));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'insufficient_quota');
    assert.equal(err.headers?.get('x-should-retry'), 'false');
  });

  test('500 becomes 502, 503 UNAVAILABLE becomes 503 overloaded', async () => {
    const internal = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-500', messages }));
    assert.equal(internal.status, 502);
    assert.equal(internal.code, 'internal');
    const overloaded = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-overloaded', messages }));
    assert.equal(overloaded.status, 503);
    assert.equal(overloaded.code, 'overloaded');
    assert.match(overloaded.message, /overloaded/);
  });

  test('an unknown model is 404 model_not_found', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-404', messages }));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.equal((err.error as { param?: string }).param, 'model');
  });

  test('credential failures keep their status and never relay the upstream text', async () => {
    const invalid = await apiError(() => client.chat.completions.create({ model: 'gbadkey/gemini-2.5-flash', messages }));
    assert.equal(invalid.status, 400);
    assert.equal(invalid.code, 'upstream_authentication_error');
    assert.equal(invalid.headers?.get('x-should-retry'), 'false');
    assert.doesNotMatch(invalid.message, /bad-key|API key not valid/);

    const denied = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-403', messages }));
    assert.equal(denied.status, 403);
    assert.equal(denied.code, 'upstream_permission_error');
    assert.ok(!denied.message.includes(KEY), 'the key is not echoed');
  });

  test('an upstream INVALID_ARGUMENT stays 400 with its message and is not retryable', async () => {
    // Passes the gateway, but Gemini rejects it: a system prompt alone leaves `contents` empty.
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'system', content: 'only a system prompt' }] }));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_argument');
    assert.equal(err.headers?.get('x-should-retry'), 'false');
    assert.match(err.message, /contents is not specified/);
  });

  test('a mid-stream error event ends the stream with an SSE error the SDK throws', async () => {
    const seen: string[] = [];
    const { data: stream, response } = await client.chat.completions.create({ model: 'gemini/sim-mid-error', messages, stream: true }).withResponse();
    const err = await apiError(async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    });
    assert.equal(seen.join(''), 'Hello');
    assert.match(err.message, /failed mid-stream: An internal error has occurred/);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 502);
    assert.equal(row.error_code, 'internal');
  });

  test('a stream cut by a socket reset, or ended without a finish reason, is an error', async () => {
    for (const model of ['gemini/sim-reset', 'gemini/sim-truncated']) {
      const stream = await client.chat.completions.create({ model, messages, stream: true });
      const err = await apiError(() => collect(stream));
      assert.match(err.message, model.endsWith('reset') ? /ended the answer before it was complete/ : /ended the stream before the answer was complete/);
    }
    const reset = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-reset', messages }));
    assert.equal(reset.status, 502);
  });

  test('a malformed body or event is 502', async () => {
    const err = await apiError(() => client.chat.completions.create({ model: 'gemini/sim-malformed', messages }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_malformed_response');
    const stream = await client.chat.completions.create({ model: 'gemini/sim-malformed', messages, stream: true });
    const streamed = await apiError(() => collect(stream));
    assert.match(streamed.message, /stream event that is not JSON/);
  });
});

describe('gemini: model discovery', () => {
  test('GET /api/v1/models lists generateContent and embedContent models from every page, prefixed', async () => {
    const listed = await client.models.list();
    const ids = listed.data.map((m) => m.id).filter((id) => id.startsWith('g'));
    assert.deepEqual(ids.sort(), ['gemini/gemini-2.0-flash-lite', 'gemini/gemini-2.5-flash', 'gemini/gemini-2.5-pro', 'gemini/sim-tool', 'gemini/text-embedding-004']);
    const pages = sim.requests.filter((r) => r.method === 'GET' && r.headers['x-goog-api-key'] === KEY);
    assert.deepEqual(pages.slice(0, 3).map((r) => r.query.pageToken ?? null), [null, 'Mg', 'NA']);
    assert.ok(pages.every((r) => r.path === '/v1beta/models' && r.query.pageSize === '1000'));
  });

  test('a provider whose list endpoint is down still serves provider/model requests', async () => {
    const data = await client.chat.completions.create({ model: 'gdown/gemini-2.5-flash', messages });
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    assert.equal(downSim.chatRequests().length, 1);
  });

  test('listModels keeps display names, and testCredential reports a rejected key', async () => {
    const upstream: UpstreamClient = createUpstreamClient({
      connectTimeoutMs: 2_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, maxResponseBytes: 1_000_000, connectionsPerOrigin: 2,
    });
    try {
      const provider = new GeminiProvider('gemini', { type: 'gemini', baseUrl: sim.baseUrl, apiKey: KEY }, upstream);
      const models = await provider.listModels({ apiKey: KEY, baseUrl: sim.baseUrl, source: 'shared' });
      assert.deepEqual(models[0], { id: 'gemini-2.5-flash', created: 0, owned_by: 'google', display_name: 'Gemini 2.5 Flash' });
      assert.equal(models.length, 5);
      const bad = await provider.testCredential({ apiKey: 'bad-key', baseUrl: sim.baseUrl, source: 'user' });
      assert.equal(bad.ok, false);
      const down = await provider.testCredential({ apiKey: KEY, baseUrl: downSim.baseUrl, source: 'user' });
      assert.equal(down.ok, false);
    } finally {
      await upstream.close();
    }
  });
});
