/** Incremental framing of upstream streams: events split anywhere, comments, CRLF, NDJSON. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNdjsonFramer, createSseFramer, sseData, sseError, SSE_DONE } from '../../../core/proxy/sse.ts';
import type { FramedEvent } from '../../../core/upstream/upstream-call.ts';

function feedAll(framer: ReturnType<typeof createSseFramer>, pieces: string[]): FramedEvent[] {
  const out: FramedEvent[] = [];
  for (const piece of pieces) framer.feed(piece, out);
  framer.end(out);
  return out;
}

describe('SSE framer', () => {
  const stream = 'data: {"a":1}\n\n: keep-alive\n\nevent: ping\ndata: {}\n\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n';
  const expected: FramedEvent[] = [
    { event: undefined, data: '{"a":1}' },
    { event: 'ping', data: '{}' },
    { event: undefined, data: 'line1\nline2' },
    { event: undefined, data: '[DONE]' },
  ];

  test('frames whole events, skipping comments and joining multi-line data', () => {
    assert.deepEqual(feedAll(createSseFramer(), [stream]), expected);
  });

  test('gives the same events however the bytes are split', () => {
    for (const size of [1, 2, 3, 7, 13]) {
      const pieces: string[] = [];
      for (let i = 0; i < stream.length; i += size) pieces.push(stream.slice(i, i + size));
      assert.deepEqual(feedAll(createSseFramer(), pieces), expected, `split every ${size} chars`);
    }
  });

  test('accepts CRLF line endings', () => {
    assert.deepEqual(feedAll(createSseFramer(), ['data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n']), [expected[0], expected[3]]);
  });

  test('delivers a last event that lacks its blank line at end of input', () => {
    assert.deepEqual(feedAll(createSseFramer(), ['data: {"a":1}\n\ndata: tail']), [expected[0], { event: undefined, data: 'tail' }]);
  });
});

describe('NDJSON framer', () => {
  test('frames lines split across reads and ignores blank lines', () => {
    const framer = createNdjsonFramer();
    const out: FramedEvent[] = [];
    framer.feed('{"a":1}\n{"b"', out);
    assert.deepEqual(out.map((e) => e.data), ['{"a":1}']);
    framer.feed(':2}\n\n{"c":3}', out);
    framer.end(out);
    assert.deepEqual(out.map((e) => e.data), ['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});

describe('SSE encoding', () => {
  test('writes data events, the [DONE] terminator and error events as openai-node reads them', () => {
    assert.equal(sseData('{"x":1}'), 'data: {"x":1}\n\n');
    assert.equal(SSE_DONE, 'data: [DONE]\n\n');
    assert.equal(sseError({ error: { message: 'm', type: 't', code: 'c', param: null } }), 'data: {"error":{"message":"m","type":"t","code":"c","param":null}}\n\n');
  });
});
