/** Joining a stream's canonical chunks into one answer, and splitting an answer into a stream's chunks. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunksOfCompletion, createCompletionAssembler } from '../../../core/canonical/completion-assembler.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../../core/canonical/chat-types.ts';

const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 7, model: 'm' };
const chunk = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletionChunk['usage']): ChatCompletionChunk => (usage ? { ...head, choices, usage } : { ...head, choices });

test('joins text, refusals and tool calls split across chunks, by choice and call index; the last usage wins', () => {
  const assembler = createCompletionAssembler();
  assert.equal(assembler.completion(), null);
  for (const c of [
    chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: null }, { index: 1, delta: { role: 'assistant', refusal: 'No' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_', arguments: '{"ci' } }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'weather', arguments: 'ty":"Oslo"}' } }, { index: 1, id: 'call_2', function: { name: 'now', arguments: '{}' } }] }, finish_reason: 'tool_calls' }]),
    chunk([{ index: 1, delta: { refusal: '.' }, finish_reason: 'stop' }]),
    chunk([], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
  ]) assembler.add(c);
  assert.deepEqual(assembler.completion(), {
    id: 'chatcmpl-1', object: 'chat.completion', created: 7, model: 'm',
    choices: [
      {
        index: 0, finish_reason: 'tool_calls',
        message: {
          role: 'assistant', content: 'Hello',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
      },
      { index: 1, finish_reason: 'stop', message: { role: 'assistant', content: '', refusal: 'No.' } },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  });
});

test('an answer split into chunks joins back into the same answer', () => {
  const answer: ChatCompletion = {
    id: 'chatcmpl-2', object: 'chat.completion', created: 9, model: 'm',
    choices: [{
      index: 0, finish_reason: 'tool_calls',
      message: { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
    }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  };
  const chunks = chunksOfCompletion(answer, true);
  assert.equal(chunks.at(-1)!.choices.length, 0, 'usage comes in its own last chunk');
  assert.equal(chunks.filter((c) => c.choices.some((choice) => choice.finish_reason)).length, 1);
  const assembler = createCompletionAssembler();
  for (const c of chunks) assembler.add(c);
  assert.deepEqual(assembler.completion(), answer);
  assert.equal(chunksOfCompletion(answer, false).some((c) => c.usage), false);
});
