/**
 * The anthropic-messages dialect, requests and errors: Messages requests → canonical requests (every
 * mapping and every refusal with its message and param), gateway errors → Anthropic error bodies, and
 * the dialect's declaration. Rendering is tested in anthropic-messages-render.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicMessages } from '../../../core/dialects/anthropic-messages/index.ts';
import { chatRequestOf } from '../../../core/canonical/canonical-request.ts';
import { GatewayError, gatewayError, upstreamError } from '../../../core/errors.ts';
const base = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 256 };
const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });

function canonical(body: Record<string, unknown>, operation = 'messages.create') {
  return chatRequestOf(anthropicMessages.parseRequest({ ...base, ...body }, operation).canonical)!;
}

/** The 400 a translated request gets: thrown at once (invalid), or recorded as untranslatable. */
function rejection(body: Record<string, unknown>, operation = 'messages.create'): { status: number; message: string; param: string | null } {
  let err: unknown;
  try {
    err = anthropicMessages.parseRequest(body, operation).untranslatable;
  } catch (thrown) {
    err = thrown;
  }
  if (!err) throw new Error('accepted');
  assert.ok(err instanceof GatewayError);
  return { status: err.status, message: err.message, param: err.param };
}

describe('anthropic-messages request → canonical request', () => {
  const tool = { name: 'get_weather', description: 'Weather now', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
  const fn = { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: tool.input_schema } };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['a string system prompt becomes a leading system message', { system: 'Be brief.', messages: [user('hi')] },
      { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }],
    ['one system text block becomes a string, its cache_control dropped', { system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }], messages: [user('hi')] },
      { messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }] }],
    ['several system text blocks become text parts', { system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }], messages: [user('hi')] },
      { messages: [{ role: 'system', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] }, { role: 'user', content: 'hi' }] }],
    ['system entries inside messages stay in place', { messages: [user('a'), { role: 'system', content: [{ type: 'text', text: 'rule' }] }, user('b')] },
      { messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'rule' }, { role: 'user', content: 'b' }] }],
    ['a single text block becomes string content', { messages: [user([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }])] },
      { messages: [{ role: 'user', content: 'hi' }] }],
    ['images become image_url parts (base64 as a data URL, url as is)', {
      messages: [user([{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } }, { type: 'image', source: { type: 'url', url: 'https://x.test/a.jpg' } }])],
    }, { messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } }, { type: 'image_url', image_url: { url: 'https://x.test/a.jpg' } }] }] }],
    ['assistant tool_use blocks become tool_calls, thinking blocks are dropped', {
      messages: [user('weather?'), assistant([{ type: 'thinking', thinking: 'hm', signature: 'sig' }, { type: 'redacted_thinking', data: 'x' }, { type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }])],
    }, { messages: [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }] }],
    ['an assistant turn of tool calls only has null content', { messages: [assistant([{ type: 'tool_use', id: 't', name: 'f', input: {} }])] },
      { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }] }],
    ['an assistant turn of thinking only is left out', { messages: [user('a'), assistant([{ type: 'thinking', thinking: 'hm', signature: 's' }]), user('b')] },
      { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }],
    ['tool results become tool messages before the rest of the user turn', {
      messages: [user([{ type: 'text', text: 'and then?' }, { type: 'tool_result', tool_use_id: 'a', content: 'sunny' }, { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }] }, { type: 'tool_result', tool_use_id: 'c', content: 'boom', is_error: true }, { type: 'tool_result', tool_use_id: 'd' }])],
    }, { messages: [{ role: 'tool', tool_call_id: 'a', content: 'sunny' }, { role: 'tool', tool_call_id: 'b', content: 'line 1\nline 2' }, { role: 'tool', tool_call_id: 'c', content: 'Error: boom' }, { role: 'tool', tool_call_id: 'd', content: '' }, { role: 'user', content: 'and then?' }] }],
    ['images inside a tool result move to the user message after the tool messages', {
      messages: [user([{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'shot:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }])],
    }, { messages: [{ role: 'tool', tool_call_id: 'a', content: 'shot:' }, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }],
    ['tools become function tools and tool_choice auto stays auto', { messages: [user('x')], tools: [tool, { name: 'noop', input_schema: { type: 'object' }, type: 'custom' }], tool_choice: { type: 'auto' } },
      { tools: [fn, { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } }], tool_choice: 'auto' }],
    ['tool_choice any becomes required, disable_parallel_tool_use becomes parallel_tool_calls false', { messages: [user('x')], tools: [tool], tool_choice: { type: 'any', disable_parallel_tool_use: true } },
      { tools: [fn], tool_choice: 'required', parallel_tool_calls: false }],
    ['tool_choice tool becomes a named function', { messages: [user('x')], tools: [tool], tool_choice: { type: 'tool', name: 'get_weather' } },
      { tools: [fn], tool_choice: { type: 'function', function: { name: 'get_weather' } } }],
    ['tool_choice none stays none', { messages: [user('x')], tools: [tool], tool_choice: { type: 'none' } }, { tools: [fn], tool_choice: 'none' }],
    ['sampling, stops and the user id are mapped, top_k and unknown fields dropped', {
      messages: [user('x')], temperature: 0.3, top_p: 0.9, top_k: 40, stop_sequences: ['END'], metadata: { user_id: 'u-1' }, service_tier: 'auto', container: 'c',
    }, { temperature: 0.3, top_p: 0.9, stop: ['END'], user: 'u-1' }],
    ['stream true asks for usage in the stream', { messages: [user('x')], stream: true }, { stream: true, stream_options: { include_usage: true } }],
    ['disabled thinking adds no reasoning effort', { messages: [user('x')], thinking: { type: 'disabled' } }, {}],
  ];
  for (const [title, body, expected] of cases) {
    test(`maps: ${title}`, () => {
      const defaults = { model: base.model, max_tokens: base.max_tokens, messages: [{ role: 'user', content: 'x' }] };
      assert.deepEqual(canonical(body), { ...defaults, ...expected });
    });
  }

  const efforts: Array<[number, string]> = [[1024, 'low'], [4095, 'low'], [4096, 'medium'], [16383, 'medium'], [16384, 'high'], [32000, 'high']];
  for (const [budget, effort] of efforts) {
    test(`maps a thinking budget of ${budget} tokens to reasoning_effort "${effort}"`, () => {
      assert.equal(canonical({ messages: [user('x')], thinking: { type: 'enabled', budget_tokens: budget } }).reasoning_effort, effort);
    });
  }

  test('keeps the validated client body whole for native pass-through', () => {
    const body = { ...base, messages: [user('x')], top_k: 5, anthropic_only: { a: 1 }, stream: true };
    const parsed = anthropicMessages.parseRequest(body, 'messages.create');
    assert.equal(parsed.body, body);
    assert.equal(parsed.stream, true);
    assert.equal(parsed.wantsStreamUsage, true);
  });

  test('count_tokens needs no max_tokens and never streams', () => {
    const parsed = anthropicMessages.parseRequest({ model: 'a/b', messages: [user('x')], stream: true }, 'messages.count_tokens');
    assert.deepEqual(parsed.canonical, { model: 'a/b', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(parsed.stream, false);
  });

  const refusals: Array<[string, Record<string, unknown>, string, string]> = [
    ['a missing max_tokens', { model: 'a/b', messages: [user('x')] }, 'Missing required field "max_tokens".', 'max_tokens'],
    ['a max_tokens below 1', { ...base, max_tokens: 0, messages: [user('x')] }, 'Invalid value for "max_tokens": must be >= 1.', 'max_tokens'],
    ['an unknown role', { ...base, messages: [{ role: 'tool', content: 'x' }] }, 'Invalid value for "messages[0].role": must be one of "user", "assistant", "system".', 'messages[0].role'],
    ['a block without a type', { ...base, messages: [user([{ text: 'x' }])] }, 'Missing required field "messages[0].content[0].type".', 'messages[0].content[0].type'],
    ['a text block whose text is not a string', { ...base, messages: [user([{ type: 'text', text: 3 }])] }, 'Invalid value for "messages[0].content[0].text": must be string.', 'messages[0].content[0].text'],
    ['a system block without text', { ...base, system: [{ type: 'text' }], messages: [user('x')] }, 'Missing required field "system[0].text".', 'system[0].text'],
    ['a document block', { ...base, messages: [user('a'), assistant('b'), user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } }])] },
      'Invalid value for "messages[2].content[0].type": "document" blocks cannot be translated to the gateway\'s canonical request; a user turn may hold text, image and tool_result blocks.', 'messages[2].content[0].type'],
    ['a tool_use block in a user turn', { ...base, messages: [user([{ type: 'tool_use', id: 't', name: 'f', input: {} }])] },
      'Invalid value for "messages[0].content[0].type": "tool_use" blocks cannot be translated to the gateway\'s canonical request; a user turn may hold text, image and tool_result blocks.', 'messages[0].content[0].type'],
    ['a server-tool block in an assistant turn', { ...base, messages: [assistant([{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }])] },
      'Invalid value for "messages[0].content[0].type": "server_tool_use" blocks cannot be translated to the gateway\'s canonical request; an assistant turn may hold text, tool_use, thinking and redacted_thinking blocks.', 'messages[0].content[0].type'],
    ['an image block in a system entry', { ...base, messages: [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }] },
      'Invalid value for "messages[0].content[0].type": "image" blocks cannot be translated to the gateway\'s canonical request; a system turn may hold text blocks.', 'messages[0].content[0].type'],
    ['a file image source', { ...base, messages: [user([{ type: 'image', source: { type: 'file', file_id: 'f' } }])] },
      'Invalid value for "messages[0].content[0].source.type": "file" image sources cannot be translated to the gateway\'s canonical request; use "base64" or "url".', 'messages[0].content[0].source.type'],
    ['a base64 image without data', { ...base, messages: [user([{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }])] },
      'Missing required field "messages[0].content[0].source.data".', 'messages[0].content[0].source.data'],
    ['a document inside a tool result', { ...base, messages: [user([{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'document' }] }])] },
      'Invalid value for "messages[0].content[0].content[0].type": "document" blocks in a tool result cannot be translated to the gateway\'s canonical request; use text or image blocks.', 'messages[0].content[0].content[0].type'],
    ['a tool_use without an id', { ...base, messages: [assistant([{ type: 'tool_use', name: 'f', input: {} }])] }, 'Missing required field "messages[0].content[0].id".', 'messages[0].content[0].id'],
    ['a server tool', { ...base, messages: [user('x')], tools: [tool, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] },
      'Invalid value for "tools[1]": "web_search_20250305" is a server tool, which runs only at Anthropic and cannot be translated to the gateway\'s canonical request.', 'tools[1]'],
    ['a client tool without input_schema', { ...base, messages: [user('x')], tools: [{ name: 'f' }] }, 'Missing required field "tools[0].input_schema".', 'tools[0].input_schema'],
    ['tool_choice tool without a name', { ...base, messages: [user('x')], tools: [tool], tool_choice: { type: 'tool' } },
      'Missing required field "tool_choice.name" (required when "tool_choice.type" is "tool").', 'tool_choice.name'],
  ];
  for (const [title, body, message, param] of refusals) {
    test(`refuses ${title} with a 400 naming the field`, () => {
      assert.deepEqual(rejection(body), { status: 400, message, param });
    });
  }
});

describe('anthropic-messages parts only a native upstream can take', () => {
  test('a document block and a server tool are left out of the canonical request, kept in the body, and recorded', () => {
    const body = {
      ...base,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } }, { type: 'text', text: 'Summarize' }])],
    };
    const parsed = anthropicMessages.parseRequest(body, 'messages.create');
    assert.deepEqual(chatRequestOf(parsed.canonical)!.messages, [{ role: 'user', content: 'Summarize' }]);
    assert.equal(chatRequestOf(parsed.canonical)!.tools, undefined);
    assert.deepEqual(parsed.body, body);
    assert.equal(parsed.untranslatable?.param, 'messages[0].content[0].type');
  });

  test('a missing required field is refused at once, native or not', () => {
    assert.throws(() => anthropicMessages.parseRequest({ ...base, messages: [user([{ type: 'text' }])] }, 'messages.create'), GatewayError);
  });
});

describe('anthropic-messages error bodies', () => {
  const cases: Array<[string, GatewayError, string]> = [
    ['400 invalid request', gatewayError('invalid_request', { message: 'Bad field.' }), 'invalid_request_error'],
    ['401 invalid key', gatewayError('invalid_api_key'), 'authentication_error'],
    ['402 budget exceeded', gatewayError('budget_exceeded'), 'billing_error'],
    ['403 permission denied', gatewayError('permission_denied'), 'permission_error'],
    ['404 model not found', gatewayError('model_not_found'), 'not_found_error'],
    ['405 method not allowed', gatewayError('method_not_allowed'), 'invalid_request_error'],
    ['413 request too large', gatewayError('request_too_large'), 'request_too_large'],
    ['422 from an upstream', upstreamError({ status: 422, message: 'Unprocessable.' }), 'invalid_request_error'],
    ['429 rate limited', gatewayError('rate_limit_exceeded'), 'rate_limit_error'],
    ['500 internal error', gatewayError('internal_error'), 'api_error'],
    ['502 upstream error', gatewayError('upstream_error'), 'api_error'],
    ['502 with the code overloaded', upstreamError({ status: 502, code: 'overloaded', message: 'Overloaded.' }), 'overloaded_error'],
    ['503 shutting down', gatewayError('shutting_down'), 'overloaded_error'],
    ['503 overloaded upstream', upstreamError({ status: 503, code: 'overloaded', message: 'Overloaded.' }), 'overloaded_error'],
    ['504 upstream timeout', gatewayError('upstream_timeout'), 'timeout_error'],
    ['529 overloaded', upstreamError({ status: 529, message: 'Overloaded.' }), 'overloaded_error'],
  ];
  for (const [title, err, type] of cases) {
    test(`renders ${title} as error type ${type} with the contract's message`, () => {
      assert.deepEqual(anthropicMessages.errorBody(err), { type: 'error', error: { type, message: err.message } });
    });
  }
});

describe('anthropic-messages dialect declaration', () => {
  test('declares both routes, with and without /v1, the Anthropic headers to pass through and the SSE content type', () => {
    assert.equal(anthropicMessages.id, 'anthropic-messages');
    assert.deepEqual(anthropicMessages.routes.map((r) => [r.method, r.path, r.operation, r.hasBody]), [
      ['POST', '/api/v1/messages', 'messages.create', true],
      ['POST', '/api/v1/messages/count_tokens', 'messages.count_tokens', true],
      ['POST', '/api/messages', 'messages.create', true],
      ['POST', '/api/messages/count_tokens', 'messages.count_tokens', true],
    ]);
    assert.deepEqual(anthropicMessages.passthroughHeaders, ['anthropic-version', 'anthropic-beta']);
    assert.equal(anthropicMessages.streamContentType, 'text/event-stream; charset=utf-8');
    for (const route of anthropicMessages.routes) assert.equal(route.doc.tag.name, 'Messages');
  });
});
