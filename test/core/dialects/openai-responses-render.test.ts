/**
 * The openai-responses dialect, non-streamed answers: canonical completions → `response` objects
 * (text, tool calls, reasoning, incomplete answers, usage arithmetic), read back by the openai SDK,
 * and the OpenAPI schemas checked against what is rendered. Streams are tested in
 * openai-responses-stream.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openAIResponses } from '../../../core/dialects/openai-responses/index.ts';
import type { ChatCompletion } from '../../../core/canonical/chat-types.ts';
import { completion, counts, exchange } from './openai-responses-fixtures.ts';

const render = (c: ChatCompletion, fields: Parameters<typeof exchange>[0] = { usage: counts(10, 5) }) =>
  JSON.parse(openAIResponses.createRenderer(exchange(fields)).completion({ completion: c, raw: null }));

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

describe('openai-responses completion rendering', () => {
  test('renders text as a completed response with a message item, ids and usage', () => {
    const response = render(completion({ content: 'Hello!' }, 'stop'), { usage: counts(10, 5), startedAtMs: 1_700_000_000_500 });
    assert.match(response.id, /^resp_[0-9a-f]{24}$/);
    assert.match(response.output[0].id, /^msg_[0-9a-f]{24}$/);
    assert.ok(Number.isInteger(response.completed_at));
    const { id: _id, completed_at: _at, output, ...rest } = response;
    assert.deepEqual(output, [{ id: output[0].id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }] }]);
    assert.deepEqual(rest, {
      object: 'response', created_at: 1_700_000_000, status: 'completed', error: null, incomplete_details: null, instructions: null, max_output_tokens: null,
      model: 'gpt-5-mini-2025-08-07', output_text: 'Hello!', parallel_tool_calls: true, previous_response_id: null, reasoning: { effort: null, summary: null },
      store: true, temperature: null, text: { format: { type: 'text' } }, tool_choice: 'auto', tools: [], top_p: null, truncation: 'disabled',
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 },
      metadata: {},
    });
  });

  test('echoes the request\'s settings from the client body', () => {
    const tools = [{ type: 'function', name: 'f', parameters: {} }];
    const clientBody = { model: 'openai/gpt-5-mini', instructions: 'S', input: 'x', tools, tool_choice: 'required', temperature: 0.5, top_p: 0.8, max_output_tokens: 99, parallel_tool_calls: false, previous_response_id: 'resp_0', store: false, metadata: { k: 'v' }, reasoning: { effort: 'low' }, text: { format: { type: 'json_object' } } };
    const r = render(completion({ content: '{}' }, 'stop'), { clientBody });
    assert.deepEqual([r.instructions, r.tools, r.tool_choice, r.temperature, r.top_p, r.max_output_tokens, r.parallel_tool_calls, r.previous_response_id, r.store, r.metadata, r.reasoning, r.text],
      ['S', tools, 'required', 0.5, 0.8, 99, false, 'resp_0', false, { k: 'v' }, { effort: 'low' }, { format: { type: 'json_object' } }]);
  });

  test('renders tool calls as function_call items whose call_id is the canonical id, after the text', () => {
    const r = render(completion({ content: 'Checking.', tool_calls: [call('call_1', 'get_weather', '{"city":"Paris"}'), call('', 'get_time', '')] }, 'tool_calls'));
    assert.equal(r.status, 'completed');
    assert.deepEqual(r.output.map((item: { type: string }) => item.type), ['message', 'function_call', 'function_call']);
    const [, first, second] = r.output;
    assert.match(first.id, /^fc_[0-9a-f]{24}$/);
    assert.deepEqual({ ...first, id: 'x' }, { id: 'x', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_1', name: 'get_weather' });
    assert.match(second.call_id, /^call_[0-9a-f]{24}$/, 'a call without an id gets one');
    assert.equal(second.arguments, '');
  });

  test('renders a turn of tool calls only without a message item', () => {
    const r = render(completion({ content: null, tool_calls: [call('c', 'f', '{}')] }, 'tool_calls'));
    assert.deepEqual(r.output.map((item: { type: string }) => item.type), ['function_call']);
    assert.equal(r.output_text, '');
  });

  test('renders an empty answer as one empty message', () => {
    assert.deepEqual(render(completion({ content: '' }, 'stop')).output[0].content, [{ type: 'output_text', text: '', annotations: [], logprobs: [] }]);
  });

  for (const field of ['reasoning_content', 'reasoning']) {
    test(`renders ${field} as a leading reasoning item with one summary part`, () => {
      const r = render(completion({ content: '42', [field]: 'Think.' }, 'stop'));
      assert.match(r.output[0].id, /^rs_[0-9a-f]{24}$/);
      assert.deepEqual({ ...r.output[0], id: 'x' }, { id: 'x', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }] });
      assert.equal(r.output[1].content[0].text, '42');
    });
  }

  test('renders a refusal as output text', () => {
    assert.equal(render(completion({ content: null, refusal: 'I cannot help.' }, 'stop')).output_text, 'I cannot help.');
  });

  const outcomes: Array<[string | null, string, unknown]> = [
    ['stop', 'completed', null], ['tool_calls', 'completed', null], [null, 'completed', null],
    ['length', 'incomplete', { reason: 'max_output_tokens' }], ['content_filter', 'incomplete', { reason: 'content_filter' }],
  ];
  for (const [finish, status, details] of outcomes) {
    test(`renders finish_reason ${JSON.stringify(finish)} as status "${status}"`, () => {
      const r = render(completion({ content: 'x' }, finish));
      assert.deepEqual([r.status, r.incomplete_details, r.output[0].status], [status, details, status]);
      if (status === 'incomplete') assert.equal(r.completed_at, null);
    });
  }

  test('keeps cached tokens inside input_tokens and takes reasoning tokens from the completion', () => {
    const c = completion({ content: 'x' }, 'stop');
    c.usage = { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, completion_tokens_details: { reasoning_tokens: 150 } };
    assert.deepEqual(render(c, { usage: counts(1000, 200, 600, 100) }).usage,
      { input_tokens: 1000, input_tokens_details: { cached_tokens: 600 }, output_tokens: 200, output_tokens_details: { reasoning_tokens: 150 }, total_tokens: 1200 });
  });

  test('falls back on the completion\'s usage when the exchange has none, and on zeros without either', () => {
    const c = completion({ content: 'x' }, 'stop');
    c.usage = { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } };
    assert.deepEqual(render(c, { usage: null }).usage,
      { input_tokens: 50, input_tokens_details: { cached_tokens: 20 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 57 });
    c.usage = null;
    assert.equal(render(c, { usage: null }).usage.total_tokens, 0);
  });

  test('is read by the openai SDK as a Response with its output_text and function calls', async () => {
    const body = openAIResponses.createRenderer(exchange({ usage: counts(12, 8) }))
      .completion({ completion: completion({ content: 'Hi there.', tool_calls: [call('call_9', 'lookup', '{"q":"x"}')] }, 'tool_calls'), raw: null });
    const client = new OpenAI({ apiKey: 'tg-test', baseURL: 'http://gateway.test/api/v1', fetch: async () => new Response(body, { headers: { 'content-type': 'application/json' } }) });
    const response = await client.responses.create({ model: 'openai/gpt-5-mini', input: 'hi' });
    assert.equal(response.output_text, 'Hi there.');
    const calls = response.output.filter((item) => item.type === 'function_call');
    assert.deepEqual(calls.map((item) => [item.call_id, item.name, JSON.parse(item.arguments)]), [['call_9', 'lookup', { q: 'x' }]]);
    assert.equal(response.usage?.total_tokens, 20);
  });
});

describe('openai-responses OpenAPI schemas', () => {
  test('documents schemas that compile as JSON Schema 2020-12 and accept what the dialect takes and renders', () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas = openAIResponses.routes[0]!.doc.schemas as Record<string, object>;
    const check = (name: string, value: unknown) => assert.ok(ajv.validate(schemas[name]!, value), `${name}: ${ajv.errorsText()}`);
    check('ResponsesRequest', { model: 'openai/gpt-5-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }] }], tools: [{ type: 'function', name: 'f', parameters: {} }], stream: true });
    check('ResponsesRequest', { model: 'openai/gpt-5-mini', input: 'x', tool_choice: { type: 'function', name: 'f' } });
    check('ResponsesResponse', render(completion({ content: 'x', reasoning: 'r', tool_calls: [call('c', 'f', '{}')] }, 'length')));
  });
});
