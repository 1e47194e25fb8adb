/**
 * Chat request validation: the first bad field named as OpenAI's dotted `param`, with a clear message.
 * Large bodies parsed on a worker thread (the event loop turns meanwhile) with the same errors, and
 * the process-wide count of body bytes in flight.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeParseWorkers, createBodyBytesInFlight, createBodyValidator, parseJsonBodyOffThread, pointerToParam, PARSE_OFF_THREAD_BYTES } from '../../../core/http/request-body.ts';
import { chatCompletionRequestSchema } from '../../../core/dialects/openai-chat/request-schema.ts';
import { GatewayError } from '../../../core/errors.ts';

// The parse workers started from source (through tsx) would keep this file's process alive.
after(() => closeParseWorkers());

const validate = createBodyValidator(chatCompletionRequestSchema);
const ok = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function rejection(body: unknown): { message: string; param: string | null; status: number } {
  try {
    validate(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return { message: err.message, param: err.param, status: err.status };
  }
  throw new Error('accepted');
}

describe('chat completion request validation', () => {
  test('pointerToParam writes JSON pointers the way OpenAI names params', () => {
    assert.equal(pointerToParam('/messages/0/content/1/image_url'), 'messages[0].content[1].image_url');
    assert.equal(pointerToParam('/model'), 'model');
    assert.equal(pointerToParam(''), '');
  });

  const accepted: Array<[string, unknown]> = [
    ['the minimal request', ok],
    ['nullable optional fields set to null', { ...ok, stream: null, max_tokens: null, temperature: null, stop: null }],
    ['unknown fields (passed through to the provider)', { ...ok, reasoning_effort: 'low', metadata: { a: 'b' } }],
    ['content parts and tool calls', { ...ok, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }, { role: 'assistant', content: null, tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: '1', content: 'r' }] }],
  ];
  for (const [name, body] of accepted) test(`accepts ${name}`, () => assert.equal(validate(body), body));

  const rejected: Array<[string, unknown, string, string | null]> = [
    ['a body that is not an object', [1], 'The request body must be object.', null],
    ['a missing model', { messages: ok.messages }, 'Missing required field "model".', 'model'],
    ['a model that is not a string', { ...ok, model: 4 }, 'Invalid value for "model": must be string.', 'model'],
    ['a tool call without its function', { ...ok, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: '1', type: 'function' }] }] }, 'Missing required field "messages[0].tool_calls[0].function".', 'messages[0].tool_calls[0].function'],
    ['content that is a number', { ...ok, messages: [{ role: 'user', content: 4 }] }, 'Invalid value for "messages[0].content": must be string.', 'messages[0].content'],
    ['a tool without a name', { ...ok, tools: [{ type: 'function', function: {} }] }, 'Missing required field "tools[0].function.name".', 'tools[0].function.name'],
    ['empty messages', { ...ok, messages: [] }, 'Invalid value for "messages": must NOT have fewer than 1 items.', 'messages'],
    ['an unknown role', { ...ok, messages: [{ role: 'bot', content: 'x' }] }, 'Invalid value for "messages[0].role": must be one of "developer", "system", "user", "assistant", "tool", "function".', 'messages[0].role'],
    ['a message without role', { ...ok, messages: [{ content: 'x' }] }, 'Missing required field "messages[0].role".', 'messages[0].role'],
    ['stream that is not a boolean', { ...ok, stream: 'yes' }, 'Invalid value for "stream": must be boolean.', 'stream'],
    ['a temperature out of range', { ...ok, temperature: 3 }, 'Invalid value for "temperature": must be <= 2.', 'temperature'],
    ['max_tokens of zero', { ...ok, max_tokens: 0 }, 'Invalid value for "max_tokens": must be >= 1.', 'max_tokens'],
  ];
  for (const [name, body, message, param] of rejected) {
    test(`rejects ${name} with 400 naming the field`, () => assert.deepEqual(rejection(body), { message, param, status: 400 }));
  }
});

describe('large bodies parsed off the event loop', () => {
  const big = (content: string) => Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }));

  test('a body of PARSE_OFF_THREAD_BYTES or more is parsed while the event loop goes on turning', async () => {
    const content = 'x'.repeat(2 * PARSE_OFF_THREAD_BYTES);
    let turned = false;
    setImmediate(() => (turned = true));
    const value = (await parseJsonBodyOffThread(big(content))) as { messages: Array<{ content: string }> };
    assert.equal(value.messages[0]!.content, content);
    assert.ok(turned, 'the event loop turned before the parse ended: it ran elsewhere');
  });

  test('several big bodies at once each get their own value back, in any order', async () => {
    const contents = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(PARSE_OFF_THREAD_BYTES + 10));
    const values = (await Promise.all(contents.map((c) => parseJsonBodyOffThread(big(c))))) as Array<{ messages: Array<{ content: string }> }>;
    assert.deepEqual(values.map((v) => v.messages[0]!.content[0]), ['a', 'b', 'c', 'd', 'e']);
  });

  test('invalid or too deeply nested big bodies get the same 400s as small ones', async () => {
    const pad = ' '.repeat(PARSE_OFF_THREAD_BYTES);
    await assert.rejects(parseJsonBodyOffThread(Buffer.from(`{"model": ${pad}`)), (err: unknown) =>
      err instanceof GatewayError && err.status === 400 && /not valid JSON/.test(err.message));
    await assert.rejects(parseJsonBodyOffThread(Buffer.from(`${pad}${'['.repeat(100)}${']'.repeat(100)}`)), (err: unknown) =>
      err instanceof GatewayError && err.status === 400 && /more than 64 levels deep/.test(err.message));
  });
});

describe('body bytes in flight', () => {
  test('holds take bytes up to the cap, refuse what does not fit without taking it, and give everything back', () => {
    const inFlight = createBodyBytesInFlight(100);
    const a = inFlight.hold('user:1');
    const b = inFlight.hold('user:2');
    assert.equal(a.grow(60), null);
    assert.equal(b.grow(50)?.code, 'bodies_in_flight_full', 'over the cap');
    assert.equal(inFlight.bytes, 60, 'a refused grow takes nothing');
    assert.equal(b.grow(40), null);
    a.release();
    a.release();
    assert.equal(inFlight.bytes, 40, 'release is idempotent');
    b.release();
    assert.equal(inFlight.bytes, 0);
  });

  test('a principal holds at most its share; others still fit, and its share is free again once released', () => {
    const inFlight = createBodyBytesInFlight(100, 40);
    const first = inFlight.hold('user:1');
    assert.equal(first.grow(30), null);
    const second = inFlight.hold('user:1');
    const refused = second.grow(20);
    assert.equal(refused?.code, 'bodies_in_flight_full');
    assert.match(refused.message, /maxBodyBytesInFlightPerUser/, 'the caller\'s share, not the process\'s');
    assert.equal(inFlight.hold('user:2').grow(40), null, 'another user fits');
    assert.equal(second.grow(10), null, 'up to the share');
    first.release();
    assert.equal(second.grow(20), null);
  });
});
