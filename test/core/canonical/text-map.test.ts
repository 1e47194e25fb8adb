/** Rewriting request texts in every dialect's body and in the canonical forms, copy on write. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapCanonicalRequestText, mapCompletionText } from '../../../core/canonical/text-map.ts';
import { dialects } from '../../../core/dialects/index.ts';

const upper = (text: string) => text.toUpperCase();
const dialect = (id: string) => dialects.find((d) => d.id === id)!;
const deepFrozen = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFrozen(v);
    Object.freeze(value);
  }
  return value;
};

test('the canonical request: every message text, parts too; ids, images and tool arguments stay', () => {
  const request = deepFrozen({
    model: 'm',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:x' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":"b"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ],
  });
  assert.deepEqual(mapCanonicalRequestText(request as never, upper), {
    model: 'm',
    messages: [
      { role: 'system', content: 'BE BRIEF' },
      { role: 'user', content: [{ type: 'text', text: 'HI' }, { type: 'image_url', image_url: { url: 'data:x' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":"b"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'RESULT' },
    ],
  });
  assert.equal(mapCanonicalRequestText(request as never, (text) => text), request, 'nothing changed: the same object');
  assert.deepEqual(mapCanonicalRequestText({ model: 'e', input: ['a', 'b'] } as never, upper), { model: 'e', input: ['A', 'B'] });
});

test('an Anthropic Messages body: system, text blocks and tool results; thinking and tool input stay', () => {
  const body = deepFrozen({
    model: 'claude', max_tokens: 5, system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'tool_use', id: 't', name: 'f', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'out' }] }, { type: 'text', text: 'more' }] },
    ],
  });
  assert.deepEqual(dialect('anthropic-messages').mapRequestText(body, upper), {
    model: 'claude', max_tokens: 5, system: [{ type: 'text', text: 'SYS' }],
    messages: [
      { role: 'user', content: 'HELLO' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'tool_use', id: 't', name: 'f', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'OUT' }] }, { type: 'text', text: 'MORE' }] },
    ],
  });
});

test('a Responses body: instructions, input text parts and function outputs; calls stay', () => {
  const body = deepFrozen({
    model: 'gpt', instructions: 'ins',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{"k":"v"}' },
      { type: 'function_call_output', call_id: 'c', output: 'o' },
    ],
  });
  assert.deepEqual(dialect('openai-responses').mapRequestText(body, upper), {
    model: 'gpt', instructions: 'INS',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'Q' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{"k":"v"}' },
      { type: 'function_call_output', call_id: 'c', output: 'O' },
    ],
  });
  assert.deepEqual(dialect('openai-responses').mapRequestText({ model: 'gpt', input: 'plain' }, upper), { model: 'gpt', input: 'PLAIN' });
});

test('an answer: each choice\'s text and refusal, with its index', () => {
  const seen: number[] = [];
  const answer = mapCompletionText({
    id: 'x', object: 'chat.completion', created: 1, model: 'm',
    choices: [
      { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'a' } },
      { index: 1, finish_reason: 'stop', message: { role: 'assistant', content: null, refusal: 'no' } },
    ],
  }, (text, index) => {
    seen.push(index);
    return `${text}!`;
  });
  assert.deepEqual(answer.choices.map((c) => [c.message.content, c.message.refusal]), [['a!', undefined], [null, 'no!']]);
  assert.deepEqual(seen, [0, 1]);
});
