/**
 * The common event of an OpenAI chat stream, read without `JSON.parse`.
 *
 * Why: most events of a stream carry one piece of text and are serialized by OpenAI the same way
 * every time (reference §1.3, `docs/provider-wire-formats.md`):
 * `{"id":"chatcmpl-…","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini",
 * "service_tier":"default","system_fingerprint":"fp_…","choices":[{"index":0,"delta":{"content":"Hel"},
 * "logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"…"}`. Every event is decoded before
 * it is relayed (usage, the served model, the generated text, in-band errors); the generic
 * `JSON.parse` of one such event takes ~1.1 µs on Node 20 and 24 and allocates ~400–500 bytes.
 *
 * How: the events of one stream differ only after `"content":` (the id, model, fingerprint are the
 * same), so a `ContentChunkReader` (one per stream) matches the first content event against the whole
 * shape, keeps the text before its content as a template, and reads each later event that starts with
 * that template by checking the rest with one capture-free regex and taking out the content: ~0.3 µs
 * and ~300 bytes (the chunk's own objects).
 *
 * What it accepts: exactly that shape, members in that order, no whitespace, at most
 * `MAX_FAST_EVENT_CHARS` characters; `service_tier`, `system_fingerprint` (a string or null),
 * `logprobs: null`, `usage: null` and `obfuscation` may each be absent. Strings hold no raw control
 * character and only JSON's own escapes, and `created` is an integer of at most 15 digits without a
 * leading zero, so whatever is accepted is valid JSON, and the
 * object returned is the one `JSON.parse` returns (same members, same order). Anything else (the
 * role delta, tool calls, the finish and usage events, an error, another serializer's spacing or
 * order) returns undefined and the caller parses it as JSON: the fast path loses speed on a change of
 * format, never correctness. `test/providers/openai-content-chunk.test.ts` checks the equality on the
 * reference's events and on mutated ones.
 */
import type { ChatCompletionChunk, ChatCompletionChunkChoice } from '../../../../core/canonical/chat-types.ts';

/**
 * Longer events go to `JSON.parse`: content events are a few hundred characters, and on megabytes the
 * regexes are several times slower than the JSON parser (8 MB: ~80 ms against ~7), so this bounds
 * what an upstream can make them cost.
 */
export const MAX_FAST_EVENT_CHARS = 4096;

/** A JSON string literal (quotes included) with no raw control character and only valid escapes. */
const STRING = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
/**
 * A content event up to its content literal (the template). Groups: 1 id, 2 created, 3 model,
 * 4 service_tier, 5 system_fingerprint.
 */
const HEAD = new RegExp(
  String.raw`^\{"id":(${STRING}),"object":"chat\.completion\.chunk","created":(0|[1-9]\d{0,14}),"model":(${STRING}),` +
  String.raw`(?:"service_tier":(${STRING}),)?(?:"system_fingerprint":(${STRING}|null),)?"choices":\[\{"index":0,"delta":\{"content":`,
);

/** The rest of a content event from its content literal on (no captures: `test` allocates nothing). */
const TAIL = new RegExp(String.raw`${STRING}\}(?:,"logprobs":null)?,"finish_reason":null\}\](?:,"usage":null)?(?:,"obfuscation":${STRING})?\}$`, 'y');
const LOGPROBS = ',"logprobs":null';
const FINISH_REASON = ',"finish_reason":null}]';
const USAGE = ',"usage":null';
const OBFUSCATION = ',"obfuscation":"';
const QUOTE = 0x22;
const LOWER_L = 0x6c;

/**
 * The value of a string literal (quotes included). Through `JSON.parse`, not a slice, even without
 * escapes (~80 ns): V8's JSON parser interns short strings, so a token that recurs ("the", " a") is one
 * string for every stream instead of a new one per event, and copies longer ones, where a slice would
 * be a view keeping the whole upstream read alive. Contents outlive their read, in the exchange's
 * generated text until it ends: with slices, streams kept ~0.4 KiB more each past a scavenge.
 */
function literalValue(literal: string): string {
  return JSON.parse(literal) as string;
}

/** The members of a content event before `choices`: the same on every event of a stream. */
interface ChunkHeader {
  id: string;
  created: number;
  model: string;
  serviceTier: string | undefined;
  /** undefined: absent; null: `"system_fingerprint":null`. */
  fingerprint: string | null | undefined;
}

/** The chunk as JSON.parse builds it: members added in the event's order, down to JSON.stringify. */
function chunkOf(header: ChunkHeader, content: string, logprobs: boolean, usage: boolean, obfuscation: string | undefined): ChatCompletionChunk {
  const choice = { index: 0, delta: { content } } as ChatCompletionChunkChoice;
  if (logprobs) choice.logprobs = null;
  choice.finish_reason = null;
  const chunk = { id: header.id, object: 'chat.completion.chunk', created: header.created, model: header.model } as ChatCompletionChunk;
  if (header.serviceTier !== undefined) chunk.service_tier = header.serviceTier;
  if (header.fingerprint !== undefined) chunk.system_fingerprint = header.fingerprint;
  chunk.choices = [choice];
  if (usage) chunk.usage = null;
  if (obfuscation !== undefined) chunk.obfuscation = obfuscation;
  return chunk;
}

/** True when `data` from `at` on is a content literal and the rest of a content event (`TAIL`). */
function tailFits(data: string, at: number): boolean {
  TAIL.lastIndex = at;
  return TAIL.test(data);
}

/**
 * The chunk of a content event whose content literal starts at `at` and whose rest passed `tailFits`.
 * The content and the members after it are read from the end, one character telling which optional
 * member is there (`"` closing `obfuscation`, `l` ending a `null`): no quote is raw inside a JSON
 * string, so no member's text can be found inside the content.
 */
function readTail(data: string, at: number, header: ChunkHeader): ChatCompletionChunk {
  let end = data.length - 1; // the chunk's closing brace
  let obfuscation: string | undefined;
  if (data.charCodeAt(end - 1) === QUOTE) {
    const member = data.lastIndexOf(OBFUSCATION, end);
    // Random padding, dropped with the chunk: a slice will do when it has no escape.
    const start = member + OBFUSCATION.length;
    obfuscation = data.indexOf('\\', start) === -1 ? data.slice(start, end - 1) : literalValue(data.slice(start - 1, end));
    end = member;
  }
  const usage = data.charCodeAt(end - 1) === LOWER_L;
  if (usage) end -= USAGE.length;
  end -= FINISH_REASON.length;
  const logprobs = data.charCodeAt(end - 1) === LOWER_L;
  if (logprobs) end -= LOGPROBS.length;
  end -= 1; // the delta's closing brace
  return chunkOf(header, literalValue(data.slice(at, end)), logprobs, usage, obfuscation);
}

/** Reads the content events of one stream (see the file's TSDoc). */
export class ContentChunkReader {
  /** The text before the content literal of the last event read whole, and its members; null before the first. */
  private known: { template: string; header: ChunkHeader } | null = null;

  /**
   * The chunk `JSON.parse(data)` would return when `data` is an OpenAI content-delta event serialized
   * as OpenAI does (see the file's TSDoc); undefined for any other text. Never throws.
   */
  read(data: string): ChatCompletionChunk | undefined {
    if (data.length > MAX_FAST_EVENT_CHARS) return undefined;
    const known = this.known;
    // `lastIndexOf(t, 0) === 0` is `startsWith(t)`; V8's optimized `startsWith` compares ~7× slower here.
    if (known !== null && data.lastIndexOf(known.template, 0) === 0 && tailFits(data, known.template.length)) {
      return readTail(data, known.template.length, known.header);
    }
    return this.readWhole(data);
  }

  private readWhole(data: string): ChatCompletionChunk | undefined {
    const match = HEAD.exec(data);
    if (match === null) return undefined;
    const template = match[0];
    if (!tailFits(data, template.length)) return undefined;
    const [, id, created, model, serviceTier, fingerprint] = match;
    const header: ChunkHeader = {
      id: literalValue(id!),
      created: Number(created),
      model: literalValue(model!),
      serviceTier: serviceTier === undefined ? undefined : literalValue(serviceTier),
      fingerprint: fingerprint === undefined ? undefined : fingerprint === 'null' ? null : literalValue(fingerprint),
    };
    // The template is a view of this read, which it keeps alive while the stream lasts: one read per stream.
    this.known = { template, header };
    return readTail(data, template.length, header);
  }
}
