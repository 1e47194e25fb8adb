import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUtf8StreamDecoder } from '../../../core/proxy/utf8-stream.ts';

/** Decodes `chunks` as one stream and returns the whole text. */
function decodeAll(chunks: Buffer[]): string {
  const decoder = createUtf8StreamDecoder();
  return chunks.map((c) => decoder.decode(c)).join('') + decoder.end();
}

test('decodes ASCII chunks as they come', () => {
  assert.equal(decodeAll([Buffer.from('data: {"a":1}\n\n'), Buffer.from('data: [DONE]\n\n')]), 'data: {"a":1}\n\ndata: [DONE]\n\n');
});

test('joins a character split across chunks at every byte', () => {
  const text = 'data: {"content":"héllo 世界 🎉"}\n\n';
  const bytes = Buffer.from(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.equal(decodeAll([bytes.subarray(0, cut), bytes.subarray(cut)]), text, `cut at byte ${cut}`);
  }
});

test('drops a leading byte order mark, as TextDecoder does', () => {
  assert.equal(decodeAll([Buffer.from('\ufeffdata: x\n\n')]), 'data: x\n\n');
});

test('ends an incomplete character with U+FFFD', () => {
  const euro = Buffer.from('€');
  assert.equal(decodeAll([Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)])]), 'a\ufffd');
});
