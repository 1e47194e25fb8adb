/**
 * The anthropic-messages dialect, answers: canonical completions and chunks → Messages JSON and SSE
 * events, mid-stream errors, and the OpenAPI schemas checked against what is rendered. Renderers get
 * hand-made exchanges, as the proxy would hand them over (usage observed before end()).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { anthropicMessages } from '../../../core/dialects/anthropic-messages/index.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionChunkChoice, ChatMessage, TokenCounts } from '../../../core/canonical/chat-types.ts';
import { gatewayError } from '../../../core/errors.ts';
import type { Exchange } from '../../../core/exchange.ts';

const user = (content: unknown) => ({ role: 'user', content });

let ids = 0;
function exchange(fields: Partial<Exchange> = {}): Exchange {
  return {
    id: `req_${++ids}`, operation: 'messages.create', method: 'POST', path: '/api/v1/messages',
    headers: {}, params: {}, query: {}, startedAtMs: 0, startedAtPerfMs: performance.now(), signal: new AbortController().signal,
    dialect: anthropicMessages, request: null, clientBody: null, untranslatable: null, refusal: null, stream: false, clientWantsUsage: false, principal: null,
    target: { provider: 'openai', model: 'gpt-4o-mini' }, modelServed: null,
    usage: null, usageEstimated: false, usageReport: null, promptTokensEstimate: null, generated: [], upstreamStatus: null,
    cost: null, status: 200, errorCode: null, firstByteAtPerfMs: null, clientAborted: false,
    responseHeaders: {}, logFields: null, states: [],
    ...fields,
  };
}

const counts = (promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0): TokenCounts =>
  ({ promptTokens, completionTokens, cachedTokens, cacheWriteTokens });

function completion(message: Partial<ChatMessage>, finishReason: string | null): ChatCompletion {
  return {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

describe('anthropic-messages completion rendering', () => {
  const render = (c: ChatCompletion, usage: TokenCounts | null = counts(10, 5)) =>
    JSON.parse(anthropicMessages.createRenderer(exchange({ usage })).completion({ completion: c, raw: null }));

  test('renders text as a message with Anthropic usage and an msg_ id', () => {
    const message = render(completion({ content: 'Hello!' }, 'stop'));
    assert.match(message.id, /^msg_[0-9a-f]{24}$/);
    assert.deepEqual({ ...message, id: 'x' }, {
      id: 'x', type: 'message', role: 'assistant', model: 'gpt-4o-mini-2024-07-18', content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
  });

  const stops: Array<[string | null, string]> = [
    ['stop', 'end_turn'], ['length', 'max_tokens'], ['tool_calls', 'tool_use'], ['function_call', 'tool_use'], ['content_filter', 'refusal'], [null, 'end_turn'], ['something_new', 'end_turn'],
  ];
  for (const [finish, stop] of stops) {
    test(`renders finish_reason ${JSON.stringify(finish)} as stop_reason "${stop}"`, () => {
      assert.equal(render(completion({ content: 'x' }, finish)).stop_reason, stop);
    });
  }

  test('takes cache reads and writes out of input_tokens', () => {
    assert.deepEqual(render(completion({ content: 'x' }, 'stop'), counts(1000, 200, 600, 100)).usage,
      { input_tokens: 300, output_tokens: 200, cache_read_input_tokens: 600, cache_creation_input_tokens: 100 });
  });

  test('falls back on the completion\'s usage when the exchange has none', () => {
    const c = completion({ content: 'x' }, 'stop');
    c.usage = { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57, prompt_tokens_details: { cached_tokens: 20 } };
    assert.deepEqual(render(c, null).usage, { input_tokens: 30, output_tokens: 7, cache_read_input_tokens: 20, cache_creation_input_tokens: 0 });
  });

  test('renders tool calls as tool_use blocks with parsed input ({} when empty or invalid)', () => {
    const call = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: args } });
    const message = render(completion({ content: 'Let me check.', tool_calls: [call('call_1', '{"city":"Paris"}'), call('call_2', ''), call('call_3', '{"cut'), call('', '[1]')] }, 'tool_calls'));
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content.slice(0, 4), [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_1', name: 'f', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'f', input: {} },
      { type: 'tool_use', id: 'call_3', name: 'f', input: {} },
    ]);
    assert.match(message.content[4].id, /^toolu_[0-9a-f]{24}$/);
    assert.deepEqual(message.content[4].input, {});
  });

  for (const field of ['reasoning_content', 'reasoning']) {
    test(`renders ${field} as a leading thinking block with an empty signature`, () => {
      assert.deepEqual(render(completion({ content: '42', [field]: 'Think.' }, 'stop')).content,
        [{ type: 'thinking', thinking: 'Think.', signature: '' }, { type: 'text', text: '42' }]);
    });
  }
});

/** SSE text → [event name, parsed data] pairs, checking that each `event:` matches its `data.type`. */
function events(text: string): Array<[string, Record<string, unknown>]> {
  return text.split('\n\n').filter(Boolean).map((block) => {
    const match = /^event: (\w+)\ndata: (.*)$/s.exec(block);
    assert.ok(match, `not an SSE event: ${block}`);
    const data = JSON.parse(match[2]!);
    assert.equal(data.type, match[1]);
    return [match[1]!, data];
  });
}

function chunk(delta: ChatCompletionChunkChoice['delta'], finishReason: string | null = null): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}
const toolDelta = (index: number, args: string, id?: string, name?: string) =>
  chunk({ tool_calls: [{ index, ...(id ? { id, type: 'function' as const } : {}), function: { ...(name ? { name } : {}), arguments: args } }] });

describe('anthropic-messages stream rendering', () => {
  test('renders text, two tool calls in fragments and the final usage as Messages events', () => {
    const ex = exchange({ stream: true });
    const renderer = anthropicMessages.createRenderer(ex);
    const usageChunk: ChatCompletionChunk = { ...chunk({}), choices: [], usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 } };
    const sequence = [
      chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo.' }),
      toolDelta(0, '', 'call_a', 'get_weather'), toolDelta(0, '{"city":'), toolDelta(0, '"Paris"}'),
      toolDelta(1, '{"tz"', 'call_b', 'get_time'), toolDelta(1, ':"CET"}'),
      chunk({}, 'tool_calls'), usageChunk,
    ];
    const rendered = sequence.map((c) => renderer.chunk({ chunk: c, raw: null }));
    assert.equal(rendered.at(-1), '', 'a usage-only chunk sends nothing');
    ex.usage = counts(120, 30, 80, 10); // what the proxy observed from the usage chunk
    const all = events(rendered.join('') + renderer.end());
    const start = all[0]![1] as { message: { id: string } };
    assert.match(start.message.id, /^msg_[0-9a-f]{24}$/);
    const zero = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    const delta = (index: number, d: Record<string, unknown>) => ['content_block_delta', { type: 'content_block_delta', index, delta: d }];
    assert.deepEqual(all, [
      ['message_start', { type: 'message_start', message: { id: start.message.id, type: 'message', role: 'assistant', model: 'gpt-4o-mini-2024-07-18', content: [], stop_reason: null, stop_sequence: null, usage: zero } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      delta(0, { type: 'text_delta', text: 'Hel' }),
      delta(0, { type: 'text_delta', text: 'lo.' }),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} } }],
      delta(1, { type: 'input_json_delta', partial_json: '{"city":' }),
      delta(1, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} } }],
      delta(2, { type: 'input_json_delta', partial_json: '{"tz"' }),
      delta(2, { type: 'input_json_delta', partial_json: ':"CET"}' }),
      ['content_block_stop', { type: 'content_block_stop', index: 2 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 30, output_tokens: 30, cache_read_input_tokens: 80, cache_creation_input_tokens: 10 } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
    const argsOf = (index: number) => all
      .filter(([name, data]) => name === 'content_block_delta' && data.index === index)
      .map(([, data]) => (data.delta as { partial_json: string }).partial_json).join('');
    assert.deepEqual(JSON.parse(argsOf(1)), { city: 'Paris' });
    assert.deepEqual(JSON.parse(argsOf(2)), { tz: 'CET' });
  });

  test('renders reasoning deltas as a thinking block before the text block', () => {
    const renderer = anthropicMessages.createRenderer(exchange({ stream: true, usage: counts(5, 3) }));
    const text = [chunk({ reasoning_content: 'Let me ' }), chunk({ reasoning: 'think.' }), chunk({ content: 'Done.' }, 'stop')]
      .map((c) => renderer.chunk({ chunk: c, raw: null })).join('') + renderer.end();
    const all = events(text).map(([name, data]) => (name === 'message_start' ? [name] : [name, data]));
    assert.deepEqual(all.slice(1, 8), [
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Done.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    ]);
    assert.deepEqual((all[8]![1] as { delta: unknown }).delta, { stop_reason: 'end_turn', stop_sequence: null });
  });

  test('gives a tool call without an id a toolu_ id', () => {
    const renderer = anthropicMessages.createRenderer(exchange({ stream: true }));
    const all = events(renderer.chunk({ chunk: chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }), raw: null }));
    assert.match((all[1]![1] as { content_block: { id: string } }).content_block.id, /^toolu_[0-9a-f]{24}$/);
  });

  test('ends a stream that had no chunk with a complete empty message', () => {
    const all = events(anthropicMessages.createRenderer(exchange({ stream: true })).end());
    assert.deepEqual(all.map(([name]) => name), ['message_start', 'message_delta', 'message_stop']);
    assert.equal((all[0]![1] as { message: { model: string } }).message.model, 'gpt-4o-mini');
  });

  test('ends a failed stream with one error event in Anthropic\'s shape', () => {
    const renderer = anthropicMessages.createRenderer(exchange({ stream: true }));
    const err = gatewayError('upstream_timeout', { message: 'Upstream "openai" timed out (body).' });
    assert.equal(renderer.error(err), 'event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"Upstream \\"openai\\" timed out (body)."}}\n\n');
  });
});

describe('anthropic-messages OpenAPI schemas', () => {
  test('documents schemas that compile as JSON Schema 2020-12 and accept what the dialect takes and renders', () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas = Object.assign({}, ...anthropicMessages.routes.map((r) => r.doc.schemas)) as Record<string, object>;
    const check = (name: string, value: unknown) => assert.ok(ajv.validate(schemas[name]!, value), `${name}: ${ajv.errorsText()}`);
    check('AnthropicMessagesRequest', { model: 'anthropic/claude-sonnet-4-5', max_tokens: 256, messages: [user([{ type: 'text', text: 'x' }])], system: 'S', stream: true });
    check('AnthropicCountTokensRequest', { model: 'a/b', messages: [user('x')] });
    const rendered = anthropicMessages.createRenderer(exchange({ usage: counts(3, 1) })).completion({ completion: completion({ content: 'x' }, 'stop'), raw: null });
    check('AnthropicMessage', JSON.parse(rendered));
  });
});
