/**
 * The openai-responses dialect, streams: canonical chunks → Responses SSE events (order, sequence
 * numbers, item ids and output indexes, deltas against done texts), read back by the openai SDK's own
 * stream accumulator, and mid-stream failures (`error` + `response.failed`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { openAIResponses } from '../../../core/dialects/openai-responses/index.ts';
import type { ChatCompletionChunk } from '../../../core/canonical/chat-types.ts';
import { gatewayError } from '../../../core/errors.ts';
import { chunk, counts, events, exchange, toolDelta } from './openai-responses-fixtures.ts';

/** Reasoning, text, two tool calls in fragments, the finish chunk and the usage chunk. */
function renderRealisticStream(finishReason = 'tool_calls'): string {
  const ex = exchange({ stream: true, clientWantsUsage: true });
  const renderer = openAIResponses.createRenderer(ex);
  const usageChunk: ChatCompletionChunk = {
    ...chunk({}), choices: [], usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, completion_tokens_details: { reasoning_tokens: 12 } },
  };
  const sequence = [
    chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'The user ' }), chunk({ reasoning: 'wants weather.' }),
    chunk({ content: 'Hel' }), chunk({ content: 'lo.' }),
    toolDelta(0, '', 'call_a', 'get_weather'), toolDelta(0, '{"city":'), toolDelta(0, '"Paris"}'),
    toolDelta(1, '{"tz"', 'call_b', 'get_time'), toolDelta(1, ':"CET"}'),
    chunk({}, finishReason), usageChunk,
  ];
  const rendered = sequence.map((c) => renderer.chunk({ chunk: c, raw: null }));
  assert.deepEqual(events(rendered[0]!).map((e) => e.type), ['response.created', 'response.in_progress'], 'an empty role chunk starts the response and opens no item');
  assert.equal(rendered.at(-1), '', 'a usage-only chunk sends nothing');
  ex.usage = counts(120, 30, 80); // what the proxy observed from the usage chunk
  return rendered.join('') + renderer.end();
}

/** The openai SDK's stream helper reading `sse` as if from POST /v1/responses. */
function sdkStream(sse: string) {
  const client = new OpenAI({
    apiKey: 'tg-test', baseURL: 'http://gateway.test/api/v1', maxRetries: 0,
    fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }),
  });
  return client.responses.stream({ model: 'openai/gpt-5-mini', input: 'weather?' });
}

describe('openai-responses stream rendering', () => {
  test('renders reasoning, text and two tool calls as Responses events in order', () => {
    const all = events(renderRealisticStream());
    assert.deepEqual(all.map((e) => e.type), [
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(all.map((e) => e.sequence_number), all.map((_, i) => i));
  });

  test('numbers the items by position and keeps each item\'s id and output_index from added to done', () => {
    const all = events(renderRealisticStream());
    const added = all.filter((e) => e.type === 'response.output_item.added') as unknown as Array<{ output_index: number; item: { id: string; type: string; status?: string } }>;
    assert.deepEqual(added.map((e) => [e.output_index, e.item.type, e.item.status]), [[0, 'reasoning', undefined], [1, 'message', 'in_progress'], [2, 'function_call', 'in_progress'], [3, 'function_call', 'in_progress']]);
    const prefixes = ['rs_', 'msg_', 'fc_', 'fc_'];
    added.forEach((e, i) => assert.match(e.item.id, new RegExp(`^${prefixes[i]}[0-9a-f]{24}$`)));
    for (const { output_index: index, item } of added) {
      const ofItem = all.filter((e) => e.item_id === item.id);
      assert.ok(ofItem.length >= 2, `deltas and done events for ${item.id}`);
      for (const e of ofItem) assert.equal(e.output_index, index, `${e.type} of ${item.id}`);
      const done = all.find((e) => e.type === 'response.output_item.done' && e.output_index === index) as unknown as { item: { id: string } };
      assert.equal(done.item.id, item.id);
    }
    assert.deepEqual(added.slice(2).map((e) => e.item), [
      { id: added[2]!.item.id, type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_a', name: 'get_weather' },
      { id: added[3]!.item.id, type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_b', name: 'get_time' },
    ]);
  });

  test('sends deltas that add up to the done texts and the final response', () => {
    const all = events(renderRealisticStream());
    const joined = (type: string, index: number) => all.filter((e) => e.type === type && e.output_index === index).map((e) => e.delta).join('');
    const done = (type: string, index: number) => all.find((e) => e.type === type && e.output_index === index)!;
    assert.equal(joined('response.reasoning_summary_text.delta', 0), 'The user wants weather.');
    assert.equal(done('response.reasoning_summary_text.done', 0).text, 'The user wants weather.');
    assert.equal(joined('response.output_text.delta', 1), 'Hello.');
    assert.equal(done('response.output_text.done', 1).text, 'Hello.');
    assert.deepEqual(done('response.content_part.done', 1).part, { type: 'output_text', text: 'Hello.', annotations: [], logprobs: [] });
    assert.equal(joined('response.function_call_arguments.delta', 2), '{"city":"Paris"}');
    assert.deepEqual(done('response.function_call_arguments.done', 3), { type: 'response.function_call_arguments.done', sequence_number: done('response.function_call_arguments.done', 3).sequence_number, item_id: (done('response.output_item.done', 3).item as { id: string }).id, output_index: 3, name: 'get_time', arguments: '{"tz":"CET"}' });
    const delta = all.find((e) => e.type === 'response.output_text.delta')!;
    assert.deepEqual(Object.keys(delta), ['type', 'sequence_number', 'item_id', 'output_index', 'content_index', 'delta', 'logprobs']);
    const final = all.at(-1)!.response as { id: string; status: string; output: Array<{ type: string; status?: string }>; usage: unknown; output_text: string };
    assert.equal(final.id, (all[0]!.response as { id: string }).id);
    assert.match(final.id, /^resp_[0-9a-f]{24}$/);
    assert.equal(final.status, 'completed');
    assert.equal(final.output_text, 'Hello.');
    assert.deepEqual(final.output.map((item) => [item.type, item.status]), [['reasoning', undefined], ['message', 'completed'], ['function_call', 'completed'], ['function_call', 'completed']]);
    assert.deepEqual(final.usage, { input_tokens: 120, input_tokens_details: { cached_tokens: 80 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 150 });
  });

  test('starts with an in-progress response without output', () => {
    const [created, inProgress] = events(renderRealisticStream());
    const response = created!.response as Record<string, unknown>;
    assert.deepEqual([response.status, response.output, response.usage, response.model, response.object], ['in_progress', [], null, 'gpt-5-mini-2025-08-07', 'response']);
    assert.deepEqual(inProgress!.response, response);
  });

  test('is accumulated by the openai SDK\'s ResponseStream into the text and both function calls', async () => {
    const stream = sdkStream(renderRealisticStream());
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.snapshot));
    const response = await stream.finalResponse();
    assert.deepEqual(deltas, ['Hel', 'Hello.']);
    assert.equal(response.output_text, 'Hello.');
    assert.equal(response.status, 'completed');
    const calls = response.output.flatMap((item) => (item.type === 'function_call' ? [[item.call_id, item.name, JSON.parse(item.arguments)]] : []));
    assert.deepEqual(calls, [['call_a', 'get_weather', { city: 'Paris' }], ['call_b', 'get_time', { tz: 'CET' }]]);
    const reasoning = response.output[0];
    assert.ok(reasoning?.type === 'reasoning');
    assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: 'The user wants weather.' }]);
    assert.equal(response.usage?.output_tokens_details.reasoning_tokens, 12);
  });

  test('ends a stream cut by the output limit with response.incomplete', async () => {
    const all = events(renderRealisticStream('length'));
    const last = all.at(-1)!;
    assert.equal(last.type, 'response.incomplete');
    const response = last.response as { status: string; incomplete_details: unknown; completed_at: unknown };
    assert.deepEqual([response.status, response.incomplete_details, response.completed_at], ['incomplete', { reason: 'max_output_tokens' }, null]);
    const final = await sdkStream(renderRealisticStream('length')).finalResponse();
    assert.deepEqual([final.status, final.incomplete_details], ['incomplete', { reason: 'max_output_tokens' }]);
  });

  test('marks the message that was being written when the limit cut it as incomplete', () => {
    const renderer = openAIResponses.createRenderer(exchange({ stream: true }));
    const all = events([chunk({ content: 'Once upon' }), chunk({}, 'length')].map((c) => renderer.chunk({ chunk: c, raw: null })).join('') + renderer.end());
    const done = all.find((e) => e.type === 'response.output_item.done')!.item as { status: string };
    assert.equal(done.status, 'incomplete');
    assert.equal((all.at(-1)!.response as { output: Array<{ status: string }> }).output[0]!.status, 'incomplete');
  });

  test('gives a tool call without an id a call_ id, and sends a late fragment at its own output_index', () => {
    const renderer = openAIResponses.createRenderer(exchange({ stream: true }));
    const text = [toolDelta(0, '{"a"', undefined, 'f'), chunk({ content: 'x' }), toolDelta(0, ':1}')].map((c) => renderer.chunk({ chunk: c, raw: null })).join('') + renderer.end();
    const all = events(text);
    const item = all.find((e) => e.type === 'response.output_item.added')!.item as { call_id: string };
    assert.match(item.call_id, /^call_[0-9a-f]{24}$/);
    const late = all.filter((e) => e.type === 'response.function_call_arguments.delta').at(-1)!;
    assert.deepEqual([late.output_index, late.delta], [0, ':1}']);
    const final = all.at(-1)!.response as { output: Array<{ arguments?: string }> };
    assert.equal(final.output[0]!.arguments, '{"a":1}');
  });

  test('ends a stream that had no chunk with a complete empty response', () => {
    const all = events(openAIResponses.createRenderer(exchange({ stream: true, usage: counts(3, 0) })).end());
    assert.deepEqual(all.map((e) => [e.type, e.sequence_number]), [['response.created', 0], ['response.in_progress', 1], ['response.completed', 2]]);
    assert.equal((all[0]!.response as { model: string }).model, 'gpt-5-mini');
    assert.deepEqual((all[2]!.response as { output: unknown[] }).output, []);
  });
});

describe('openai-responses mid-stream failures', () => {
  const err = gatewayError('upstream_timeout', { message: 'Upstream "openai" timed out (body).' });

  function failedStream(): string {
    const renderer = openAIResponses.createRenderer(exchange({ stream: true }));
    return [chunk({ content: 'Hel' })].map((c) => renderer.chunk({ chunk: c, raw: null })).join('') + renderer.error(err);
  }

  test('ends a failed stream with an error event and response.failed, numbered on', () => {
    const all = events(failedStream());
    assert.deepEqual(all.map((e) => e.type), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'error', 'response.failed']);
    assert.deepEqual(all.map((e) => e.sequence_number), [0, 1, 2, 3, 4, 5, 6]);
    const error = { type: 'upstream_error', code: 'upstream_timeout', message: 'Upstream "openai" timed out (body).', param: null };
    assert.deepEqual(all[5], { type: 'error', sequence_number: 5, code: error.code, message: error.message, param: null, error });
    const response = all[6]!.response as { status: string; error: unknown; output: Array<{ status: string; content: unknown[] }> };
    assert.deepEqual([response.status, response.error], ['failed', { code: 'upstream_timeout', message: error.message }]);
    assert.deepEqual([response.output[0]!.status, response.output[0]!.content], ['incomplete', [{ type: 'output_text', text: 'Hel', annotations: [], logprobs: [] }]]);
  });

  test('makes the openai SDK raise an APIError with the gateway\'s message and code', async () => {
    await assert.rejects(sdkStream(failedStream()).finalResponse(), (thrown: unknown) => {
      assert.ok(thrown instanceof APIError);
      assert.equal(thrown.code, 'upstream_timeout');
      assert.match(thrown.message, /timed out \(body\)/);
      return true;
    });
  });

  test('starts the response first when the stream fails before any chunk', () => {
    const all = events(openAIResponses.createRenderer(exchange({ stream: true })).error(err));
    assert.deepEqual(all.map((e) => e.type), ['response.created', 'response.in_progress', 'error', 'response.failed']);
  });
});
