/**
 * The openai-responses dialect, requests: Responses requests → canonical requests (every mapping and
 * every refusal with its message and param), previous_response_id, errors and the dialect's
 * declaration. Rendering is tested in openai-responses-render*.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openAIResponses } from '../../../core/dialects/openai-responses/index.ts';
import { chatRequestOf } from '../../../core/canonical/canonical-request.ts';
import { toCanonical } from '../../../core/dialects/openai-responses/to-canonical.ts';
import type { ResponseCreateParams } from '../../../core/dialects/openai-responses/types.ts';
import { GatewayError, gatewayError } from '../../../core/errors.ts';

const base = { model: 'openai/gpt-5-mini' };
const user = (content: unknown) => ({ role: 'user', content });
const text = (t: string) => ({ type: 'input_text', text: t });
const call = (callId: string, name: string, args: string) => ({ type: 'function_call', call_id: callId, name, arguments: args });
const chatCall = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

function canonical(body: Record<string, unknown>) {
  return openAIResponses.parseRequest({ ...base, ...body }, 'responses.create').canonical;
}

/** The 400 a translated request gets: thrown at once (invalid), or recorded as untranslatable. */
function rejection(body: Record<string, unknown>): { status: number; message: string; param: string | null } {
  let err: unknown;
  try {
    err = openAIResponses.parseRequest({ ...base, ...body }, 'responses.create').untranslatable;
  } catch (thrown) {
    err = thrown;
  }
  if (!err) throw new Error('accepted');
  assert.ok(err instanceof GatewayError);
  return { status: err.status, message: err.message, param: err.param };
}

describe('openai-responses request → canonical request', () => {
  const params = { type: 'object', properties: { city: { type: 'string' } } };
  const tool = { type: 'function', name: 'get_weather', description: 'Weather now', parameters: params, strict: true };
  const fn = { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: params, strict: true } };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['a string input becomes one user message', { input: 'hi' }, { messages: [{ role: 'user', content: 'hi' }] }],
    ['instructions become a leading system message', { instructions: 'Be brief.', input: 'hi' },
      { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }],
    ['developer and system items become system messages in place', {
      input: [{ role: 'developer', content: 'rule 1' }, { type: 'message', role: 'system', content: [text('rule 2')] }, user('hi')],
    }, { messages: [{ role: 'system', content: 'rule 1' }, { role: 'system', content: 'rule 2' }, { role: 'user', content: 'hi' }] }],
    ['one input_text part becomes string content, several become text parts', { input: [user([text('a')]), user([text('b'), text('c')])] },
      { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'b' }, { type: 'text', text: 'c' }] }] }],
    ['input_image parts become image_url parts with their detail ("original" left to the upstream)', {
      input: [user([text('look'), { type: 'input_image', image_url: 'https://x.test/a.jpg', detail: 'low' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBO', detail: 'original' }])],
    }, { messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x.test/a.jpg', detail: 'low' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } }] }] }],
    ['assistant history (output_text, refusal) becomes assistant text', {
      input: [user('a'), { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Sure.', annotations: [] }] }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] }],
    }, { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'Sure.' }, { role: 'assistant', content: 'No.' }] }],
    ['consecutive function calls join the turn\'s assistant text as one message; reasoning items are dropped', {
      input: [user('weather?'), { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' }, { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        call('call_1', 'get_weather', '{"city":"Paris"}'), { type: 'reasoning', id: 'rs_2', summary: [] }, call('call_2', 'get_weather', '{"city":"Rome"}')],
    }, { messages: [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: 'Checking.', tool_calls: [chatCall('call_1', 'get_weather', '{"city":"Paris"}'), chatCall('call_2', 'get_weather', '{"city":"Rome"}')] }] }],
    ['function calls without assistant text make an assistant message with null content', { input: [user('x'), call('c1', 'f', '{}'), call('c2', 'g', '{}')] },
      { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [chatCall('c1', 'f', '{}'), chatCall('c2', 'g', '{}')] }] }],
    ['function call outputs become tool messages (text parts joined by newlines)', {
      input: [call('c1', 'f', '{}'), call('c2', 'g', '{}'), { type: 'function_call_output', call_id: 'c1', output: 'sunny' }, { type: 'function_call_output', call_id: 'c2', output: [text('line 1'), text('line 2')] }, user('and then?')],
    }, { messages: [{ role: 'assistant', content: null, tool_calls: [chatCall('c1', 'f', '{}'), chatCall('c2', 'g', '{}')] }, { role: 'tool', tool_call_id: 'c1', content: 'sunny' }, { role: 'tool', tool_call_id: 'c2', content: 'line 1\nline 2' }, { role: 'user', content: 'and then?' }] }],
    ['images in function call outputs follow the run of tool messages in a user message', {
      input: [call('c1', 'shot', '{}'), call('c2', 'shot', '{}'), { type: 'function_call_output', call_id: 'c1', output: [text('shot:'), { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] }, { type: 'function_call_output', call_id: 'c2', output: 'none' }],
    }, { messages: [{ role: 'assistant', content: null, tool_calls: [chatCall('c1', 'shot', '{}'), chatCall('c2', 'shot', '{}')] }, { role: 'tool', tool_call_id: 'c1', content: 'shot:' }, { role: 'tool', tool_call_id: 'c2', content: 'none' }, { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }],
    ['function tools become chat function tools and tool_choice auto stays auto', { input: 'x', tools: [tool, { type: 'function', name: 'noop', parameters: null, strict: null }], tool_choice: 'auto' },
      { tools: [fn, { type: 'function', function: { name: 'noop' } }], tool_choice: 'auto' }],
    ['tool_choice none, required and parallel_tool_calls are copied', { input: 'x', tools: [tool], tool_choice: 'required', parallel_tool_calls: false },
      { tools: [fn], tool_choice: 'required', parallel_tool_calls: false }],
    ['tool_choice none stays none', { input: 'x', tool_choice: 'none' }, { tool_choice: 'none' }],
    ['tool_choice function becomes a named chat function', { input: 'x', tools: [tool], tool_choice: { type: 'function', name: 'get_weather' } },
      { tools: [fn], tool_choice: { type: 'function', function: { name: 'get_weather' } } }],
    ['max_output_tokens, temperature, top_p and reasoning.effort are mapped', { input: 'x', max_output_tokens: 500, temperature: 0.2, top_p: 0.9, reasoning: { effort: 'high', summary: 'auto' } },
      { max_completion_tokens: 500, temperature: 0.2, top_p: 0.9, reasoning_effort: 'high' }],
    ['text.format json_schema becomes response_format json_schema', { input: 'x', text: { format: { type: 'json_schema', name: 'answer', schema: params, strict: true }, verbosity: 'low' } },
      { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: params, strict: true } } }],
    ['text.format json_object becomes response_format json_object, text adds nothing', { input: 'x', text: { format: { type: 'json_object' } } },
      { response_format: { type: 'json_object' } }],
    ['OpenAI-only fields are dropped', {
      input: 'x', metadata: { a: '1' }, store: false, include: ['reasoning.encrypted_content'], prompt_cache_key: 'k', truncation: 'auto', user: 'u', safety_identifier: 's', service_tier: 'flex', text: { format: { type: 'text' } },
    }, {}],
    ['stream true asks for usage in the stream', { input: 'x', stream: true }, { stream: true, stream_options: { include_usage: true } }],
  ];
  for (const [title, body, expected] of cases) {
    test(`maps: ${title}`, () => {
      assert.deepEqual(canonical(body), { model: base.model, messages: [{ role: 'user', content: 'x' }], ...expected });
    });
  }

  test('leaves previous_response_id out of the canonical request and returns it for the gateway to expand', () => {
    const body = { ...base, previous_response_id: 'resp_123', input: [{ type: 'function_call_output', call_id: 'c1', output: 'ok' }] } as ResponseCreateParams;
    const mapping = toCanonical(body);
    assert.deepEqual(mapping, { request: { model: base.model, messages: [{ role: 'tool', tool_call_id: 'c1', content: 'ok' }] }, untranslatable: null, previousResponseId: 'resp_123', firstReference: null });
    assert.equal(openAIResponses.parseRequest(body, 'responses.create').body.previous_response_id, 'resp_123');
    assert.equal(toCanonical({ ...base, input: 'x' }).previousResponseId, null);
  });

  test('an unexpanded previous_response_id (no response store) is untranslatable, never sent without its conversation', () => {
    const parsed = openAIResponses.parseRequest({ ...base, previous_response_id: 'resp_123', input: 'go on' }, 'responses.create');
    assert.equal(parsed.untranslatable?.param, 'previous_response_id');
    assert.match(parsed.untranslatable.message, /response store \(plugin "response-store"\)/);
    assert.equal(openAIResponses.parseRequest({ ...base, input: 'go on' }, 'responses.create').untranslatable, null);
  });

  test('an item_reference left in the body is for the caller\'s own credential only: 404 item_not_found for the first one', () => {
    const parsed = openAIResponses.parseRequest({ ...base, input: [user('x'), { type: 'item_reference', id: 'msg_a' }, { type: 'item_reference', id: 'msg_b' }] }, 'responses.create');
    assert.deepEqual([parsed.ownCredentialOnly?.status, parsed.ownCredentialOnly?.code, parsed.ownCredentialOnly?.param], [404, 'item_not_found', 'input']);
    assert.match(parsed.ownCredentialOnly!.message, /^Item with id 'msg_a' not found\./);
    assert.equal(openAIResponses.parseRequest({ ...base, input: [user('x')] }, 'responses.create').ownCredentialOnly, null);
    assert.equal(openAIResponses.parseRequest({ ...base, input: 'x' }, 'responses.create').ownCredentialOnly, null);
  });
});

describe('openai-responses untranslatable parts', () => {
  const CANNOT = 'cannot be translated to the gateway\'s canonical request';
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['a built-in tool', { input: 'x', tools: [{ type: 'function', name: 'f', parameters: {} }, { type: 'web_search' }] },
      `Invalid value for "tools[1]": "web_search" tools ${CANNOT} (only "function" and "namespace" tools can); they work only with an OpenAI upstream. To have the gateway leave them out instead, send the header "x-tollgate-optional-tools: web_search".`, 'tools[1]'],
    ['a custom tool', { input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }] },
      `Invalid value for "tools[0]": "custom" tools ${CANNOT} (only "function" and "namespace" tools can); they work only with an OpenAI upstream. To have the gateway leave them out instead, send the header "x-tollgate-optional-tools: custom".`, 'tools[0]'],
    ['an image uploaded to the Files API', { input: [user([{ type: 'input_image', file_id: 'file-1', detail: 'auto' }])] },
      `Invalid value for "input[0].content[0].file_id": images uploaded to OpenAI's Files API ${CANNOT}; send "image_url" (a URL or a data URL).`, 'input[0].content[0].file_id'],
    ['an input_file part', { input: [user([text('read'), { type: 'input_file', file_id: 'file-1' }])] },
      `Invalid value for "input[0].content[1].type": "input_file" parts ${CANNOT}; files (input_file) are read only by an OpenAI upstream.`, 'input[0].content[1].type'],
    ['an image in a system message', { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x.test/a.png' }] }, user('x')] },
      `Invalid value for "input[0].content[0].type": "input_image" parts ${CANNOT}; a system message may hold input_text parts.`, 'input[0].content[0].type'],
    ['an item_reference', { input: [{ type: 'item_reference', id: 'msg_1' }, user('x')] },
      `Invalid value for "input[0].type": "item_reference" items point at items OpenAI stored and ${CANNOT}; send the items themselves.`, 'input[0].type'],
    ['a built-in tool call item', { input: [user('x'), { type: 'web_search_call', id: 'ws_1', status: 'completed' }] },
      `Invalid value for "input[1].type": "web_search_call" items ${CANNOT}; it can carry message, function_call, function_call_output and reasoning items.`, 'input[1].type'],
    ['a file in a function call output', { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_url: 'https://x.test/a.pdf' }] }] },
      `Invalid value for "input[0].output[0].type": "input_file" parts in a function call output ${CANNOT}; use input_text or input_image parts.`, 'input[0].output[0].type'],
    ['a tool_choice of another kind', { input: 'x', tool_choice: { type: 'web_search_preview' } },
      `Invalid value for "tool_choice": "web_search_preview" ${CANNOT}; use "auto", "none", "required" or {"type":"function","name"}.`, 'tool_choice'],
    ['background mode', { input: 'x', background: true },
      `Invalid value for "background": background responses ${CANNOT}; they are served only by an OpenAI upstream.`, 'background'],
    ['a stored prompt', { input: 'x', prompt: { id: 'pmpt_1' } }, `Invalid value for "prompt": a stored prompt ${CANNOT}; it is served only by an OpenAI upstream.`, 'prompt'],
    ['a request without input', { instructions: 'S' }, 'Missing required field "input" (a translated request needs at least one input item).', 'input'],
  ];
  for (const [title, body, message, param] of cases) {
    test(`records ${title} as a 400 and leaves it out of the canonical request`, () => {
      assert.deepEqual(rejection(body), { status: 400, message, param });
    });
  }

  test('records the first untranslatable part and still maps the rest', () => {
    const parsed = openAIResponses.parseRequest({ ...base, input: [user([text('hi'), { type: 'input_file', file_id: 'f' }])], tools: [{ type: 'web_search' }, { type: 'function', name: 'f' }] }, 'responses.create');
    assert.equal(parsed.untranslatable?.param, 'input[0].content[1].type');
    assert.deepEqual(chatRequestOf(parsed.canonical)!.messages, [{ role: 'user', content: 'hi' }]);
    assert.deepEqual(chatRequestOf(parsed.canonical)!.tools, [{ type: 'function', function: { name: 'f' } }]);
  });

  test('leaves out the built-in tools the client marks optional (x-tollgate-optional-tools), and only those', () => {
    const tools = [{ type: 'web_search' }, { type: 'function', name: 'f' }, { type: 'file_search', vector_store_ids: ['vs'] }];
    const parse = (header: string) => openAIResponses.parseRequest({ ...base, input: 'hi', tools }, 'responses.create', { 'x-tollgate-optional-tools': header });
    const some = parse('web_search, image_generation');
    assert.deepEqual(chatRequestOf(some.canonical)!.tools, [{ type: 'function', function: { name: 'f' } }]);
    assert.equal(some.untranslatable?.param, 'tools[2]', 'file_search was not marked optional');
    assert.deepEqual(some.body.tools, tools, 'the client body (native pass-through) keeps them');
    const all = parse('*');
    assert.equal(all.untranslatable, null);
    assert.deepEqual(chatRequestOf(all.canonical)!.tools, [{ type: 'function', function: { name: 'f' } }]);
  });

  const invalid: Array<[string, Record<string, unknown>, string, string]> = [
    ['a body without model', { model: undefined, input: 'x' }, 'Missing required field "model".', 'model'],
    ['an input that is neither a string nor items', { input: 3 }, 'Invalid value for "input": must be string,array.', 'input'],
    ['a function call without call_id', { input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'Missing required field "input[0].call_id".', 'input[0].call_id'],
    ['a function call output without output', { input: [{ type: 'function_call_output', call_id: 'c' }] }, 'Missing required field "input[0].output".', 'input[0].output'],
    ['a message item without role', { input: [{ type: 'message', content: 'x' }] }, 'Missing required field "input[0].role".', 'input[0].role'],
    ['an input_image without image_url or file_id', { input: [user([{ type: 'input_image', detail: 'auto' }])] }, 'Missing required field "input[0].content[0].image_url".', 'input[0].content[0].image_url'],
    ['a function tool without name', { input: 'x', tools: [{ type: 'function', parameters: {} }] }, 'Missing required field "tools[0].name".', 'tools[0].name'],
    ['a function tool_choice without name', { input: 'x', tool_choice: { type: 'function' } }, 'Missing required field "tool_choice.name" (required when "tool_choice.type" is "function").', 'tool_choice.name'],
    ['a json_schema format without schema', { input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }, 'Missing required field "text.format.schema".', 'text.format.schema'],
  ];
  for (const [title, body, message, param] of invalid) {
    test(`refuses ${title} at once`, () => {
      assert.deepEqual(rejection(body), { status: 400, message, param });
    });
  }
});

describe('openai-responses declaration and errors', () => {
  test('declares POST /api/v1/responses, the openai-beta header and a streaming client that wants usage', () => {
    assert.equal(openAIResponses.id, 'openai-responses');
    assert.deepEqual(openAIResponses.routes.map((r) => [r.method, r.path, r.operation, r.hasBody]), [['POST', '/api/v1/responses', 'responses.create', true]]);
    assert.deepEqual(openAIResponses.routes[0]!.doc.tag, { name: 'Responses', description: 'OpenAI Responses API (Codex CLI, the Vercel AI SDK).' });
    assert.deepEqual(openAIResponses.passthroughHeaders, ['openai-beta']);
    const parsed = openAIResponses.parseRequest({ ...base, input: 'x', stream: true, store: false }, 'responses.create');
    assert.deepEqual([parsed.stream, parsed.wantsStreamUsage, parsed.untranslatable], [true, true, null]);
    assert.deepEqual(parsed.body, { ...base, input: 'x', stream: true, store: false });
  });

  test('caps the output with max_output_tokens', () => {
    assert.deepEqual(openAIResponses.capOutput({ ...base, input: 'x', max_output_tokens: 4000 }, 256), { ...base, input: 'x', max_output_tokens: 256 });
  });

  test('renders errors in OpenAI\'s shape', () => {
    const err = gatewayError('budget_exceeded', { message: 'Budget spent.' });
    assert.deepEqual(openAIResponses.errorBody(err), { error: { message: 'Budget spent.', type: 'budget_exceeded', code: 'budget_exceeded', param: null } });
  });
});
