/**
 * The OpenAI content-event fast path (`openai-content-chunk.ts`): what it reads is what `JSON.parse`
 * reads, member for member and in the same order, and what it declines is left to `JSON.parse`: on the
 * reference's events, on escapes, on near misses, and on 20,000 random mutations of real events
 * (whatever it accepts must be valid JSON that parses to the same object), each read both whole (a
 * fresh reader) and against the template a reader keeps from the stream's previous event.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContentChunkReader, MAX_FAST_EVENT_CHARS } from '../../plugins/provider-router/providers/openai/content-chunk.ts';

/** How OpenAI serializes a content event today (reference §1.3 plus `service_tier`). */
const OPENAI_EVENT = '{"id":"chatcmpl-CZ1a2b3c","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-mini-2024-07-18",'
  + '"service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":" Hello"},"logprobs":null,'
  + '"finish_reason":null}],"usage":null,"obfuscation":"aZ3kQ"}';
/** The reference's example and the simulator's shape: no service tier, no obfuscation. */
const REFERENCE_EVENT = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_sim",'
  + '"choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}';
/** An OpenAI-compatible server's leaner event: no fingerprint, no logprobs, no usage member. */
const LEAN_EVENT = '{"id":"x","object":"chat.completion.chunk","created":0,"model":"llama3","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';

/**
 * Reads `data` with a fresh reader (the whole event is matched) and with a reader that has read
 * `previous` (the template path when `data` starts like it); returns both results.
 */
function readBothWays(data: string, previous: string = REFERENCE_EVENT): [whole: unknown, afterPrevious: unknown] {
  const reader = new ContentChunkReader();
  reader.read(previous);
  return [new ContentChunkReader().read(data), reader.read(data)];
}

/** Neither way of reading declines `data`, and both give JSON.parse's object. */
function assertSameAsJsonParse(data: string, previous?: string): void {
  const parsed: unknown = JSON.parse(data);
  for (const fast of readBothWays(data, previous)) {
    assert.notEqual(fast, undefined, `fast path declined ${data}`);
    assert.deepEqual(fast, parsed);
    assert.equal(JSON.stringify(fast), JSON.stringify(parsed), 'same members in the same order');
  }
}

/** Both ways of reading decline `data`. */
function assertDeclined(data: string): void {
  for (const previous of [REFERENCE_EVENT, OPENAI_EVENT]) assert.deepEqual(readBothWays(data, previous), [undefined, undefined], data);
}

describe('readContentChunk', () => {
  test('reads OpenAI content events as JSON.parse does, with and without the optional members', () => {
    for (const data of [OPENAI_EVENT, REFERENCE_EVENT, LEAN_EVENT]) {
      assertSameAsJsonParse(data);
      assertSameAsJsonParse(data, data);
    }
    assertSameAsJsonParse(REFERENCE_EVENT.replace('"fp_sim"', 'null'));
    assertSameAsJsonParse(OPENAI_EVENT.replace('"content":" Hello"', '"content":""'), OPENAI_EVENT);
    // The later events of one stream: same template, another content, obfuscation, optional members.
    const later = [' world', '!', '', 'é😀'].map((content, i) => OPENAI_EVENT.replace('" Hello"', JSON.stringify(content)).replace('"aZ3kQ"', `"${'x'.repeat(i)}"`));
    for (const data of later) assertSameAsJsonParse(data, OPENAI_EVENT);
    assertSameAsJsonParse(OPENAI_EVENT.replace(',"logprobs":null', '').replace(',"usage":null', '').replace(',"obfuscation":"aZ3kQ"', ''), OPENAI_EVENT);
    // Another stream's header after the template was kept: read whole, and its own template kept.
    const other = REFERENCE_EVENT.replace('chatcmpl-1', 'chatcmpl-2');
    const reader = new ContentChunkReader();
    reader.read(REFERENCE_EVENT);
    assert.equal(reader.read(other)?.id, 'chatcmpl-2');
    assert.equal(reader.read(REFERENCE_EVENT.replace('"Hel"', '"lo"'))?.id, 'chatcmpl-1');
  });

  test('decodes every JSON escape in the content, id and model', () => {
    const contents = ['line\\nbreak', 'a \\"quote\\"', 'back\\\\slash', 'caf\\u00e9', '\\ud83d\\ude00 emoji', 'tab\\t\\/\\b\\f\\r', 'raw é and 😀'];
    for (const content of contents) assertSameAsJsonParse(OPENAI_EVENT.replace('" Hello"', `"${content}"`), OPENAI_EVENT);
    assertSameAsJsonParse(OPENAI_EVENT.replace('"chatcmpl-CZ1a2b3c"', '"id\\u0041"').replace('"gpt-4o-mini-2024-07-18"', '"m\\/1"'));
    assert.equal(new ContentChunkReader().read(OPENAI_EVENT.replace('" Hello"', '"a\\nb"'))?.choices[0]?.delta.content, 'a\nb');
  });

  test('declines every other event, which JSON.parse then reads', () => {
    const others = [
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}',
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}',
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}',
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}',
      '{"error":{"message":"overloaded","type":"server_error"}}',
      REFERENCE_EVENT.replace('"index":0', '"index":1'),
      REFERENCE_EVENT.replace('"usage":null', '"usage":null,"extra":1'),
      REFERENCE_EVENT.replace('"delta":{"content":"Hel"}', '"delta":{"content":"Hel","refusal":null}'),
      REFERENCE_EVENT.replace('"finish_reason":null}]', '"finish_reason":null},{"index":1,"delta":{"content":"x"},"finish_reason":null}]'),
      REFERENCE_EVENT.replace('"created":1700000000', '"created": 1700000000'),
      REFERENCE_EVENT.replace('"created":1700000000', '"created":1.5'),
      ` ${REFERENCE_EVENT}`,
    ];
    for (const data of others) {
      assertDeclined(data);
      JSON.parse(data); // valid JSON all the same: the decoder's slow path reads it
    }
  });

  test('leaves an event longer than MAX_FAST_EVENT_CHARS to JSON.parse, so a huge one costs what the JSON parser costs', () => {
    const sized = (chars: number) => OPENAI_EVENT.replace('" Hello"', JSON.stringify('x'.repeat(chars - OPENAI_EVENT.length + 6)));
    assert.equal(sized(MAX_FAST_EVENT_CHARS).length, MAX_FAST_EVENT_CHARS);
    assertSameAsJsonParse(sized(MAX_FAST_EVENT_CHARS), OPENAI_EVENT);
    assertDeclined(sized(MAX_FAST_EVENT_CHARS + 1));
    assertDeclined(sized(1_000_000));
  });

  test('never accepts text that is not valid JSON', () => {
    const invalid = [
      REFERENCE_EVENT.replace('"Hel"', '"He\u0001l"'), // raw control character
      REFERENCE_EVENT.replace('"Hel"', '"He\nl"'),
      REFERENCE_EVENT.replace('"Hel"', '"He\\xl"'), // not a JSON escape
      REFERENCE_EVENT.replace('"Hel"', '"He\\u12"'),
      REFERENCE_EVENT.replace('"created":1700000000', '"created":01700000000'), // leading zero
      REFERENCE_EVENT.replace('"Hel"', '"Hel'),
      REFERENCE_EVENT.slice(0, -1),
      `${REFERENCE_EVENT}}`,
    ];
    for (const data of invalid) {
      assertDeclined(data);
      assert.throws(() => JSON.parse(data), SyntaxError);
    }
  });

  test('on 20,000 random mutations of real events, whatever it accepts parses to the same object', () => {
    // A small deterministic generator (mulberry32), so a failure can be replayed.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const alphabet = ['"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '7', 'n', 'u', 'a', '\u0000', '\n', 'é', '\ud83d', 'null', '\\u00e9', '\\"'];
    const seeds = [OPENAI_EVENT, REFERENCE_EVENT, LEAN_EVENT];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      let data = seeds[i % seeds.length]!;
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (data.length + 1));
        const piece = alphabet[Math.floor(random() * alphabet.length)]!;
        const kind = random();
        if (kind < 0.34) data = data.slice(0, at) + piece + data.slice(at);
        else if (kind < 0.67) data = data.slice(0, at) + data.slice(at + 1);
        else data = data.slice(0, at) + piece + data.slice(at + 1);
      }
      // Whole, and after the unmutated event (the template path when the mutation is past the content's start).
      for (const fast of readBothWays(data, seeds[i % seeds.length])) {
        if (fast === undefined) continue;
        accepted++;
        let parsed: unknown;
        assert.doesNotThrow(() => { parsed = JSON.parse(data); }, `accepted invalid JSON: ${JSON.stringify(data)}`);
        assert.deepEqual(fast, parsed, data);
        assert.equal(JSON.stringify(fast), JSON.stringify(parsed), data);
      }
    }
    // Mutations inside the content or the id keep the shape: the check above ran on many of them.
    assert.ok(accepted > 2_000, `only ${accepted} mutations were accepted`);
  });
});
