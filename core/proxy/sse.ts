/**
 * Server-sent events: incremental framing of upstream bytes (parsing by `eventsource-parser`, which
 * follows the WHATWG spec: comments, keep-alives, CRLF, multi-line data) and the encoding of what the
 * gateway writes to clients.
 */
import { createParser } from 'eventsource-parser';
import type { FramedEvent } from '../upstream/upstream-call.ts';
import { gatewayError, type ErrorBody } from '../errors.ts';

/**
 * Longest single event (or NDJSON line) a framer buffers, in characters: 8 Mi. An upstream that sends
 * an event without its end would otherwise grow the buffer until the stream's byte cap; a real event
 * (one chunk of an answer) is a few KiB.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

function eventTooLarge(maxEventChars: number) {
  return gatewayError('upstream_response_too_large', { message: `The upstream sent a stream event longer than ${maxEventChars} characters.` });
}

/** Incremental framer: feed decoded text as it arrives; complete events are appended to `out`. */
export interface Framer {
  feed(text: string, out: FramedEvent[]): void;
  /** End of input: a final event without its trailing blank line is still delivered. */
  end(out: FramedEvent[]): void;
}

/**
 * Creates an SSE framer. Comment lines (`: keep-alive`) are skipped. `feed` throws `GatewayError`
 * `upstream_response_too_large` (502) once one event exceeds `maxEventChars`.
 */
export function createSseFramer(maxEventChars = MAX_EVENT_CHARS): Framer {
  let sink: FramedEvent[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent: (message) => {
      sink.push({ event: message.event, data: message.data });
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
  });
  return {
    feed(text, out) {
      if (overflow) throw eventTooLarge(maxEventChars);
      sink = out;
      parser.feed(text);
      if (overflow) throw eventTooLarge(maxEventChars);
    },
    end(out) {
      // The spec drops an event cut off before its blank line; upstreams that close right after their
      // last event (no trailing blank line) are common enough that the gateway delivers it.
      sink = out;
      parser.feed('\n\n');
      parser.reset();
    },
  };
}

/** Creates an NDJSON framer: one event per non-empty line. `feed` throws like the SSE framer's beyond `maxEventChars`. */
export function createNdjsonFramer(maxEventChars = MAX_EVENT_CHARS): Framer {
  let pending = '';
  return {
    feed(text, out) {
      pending += text;
      let start = 0;
      let nl: number;
      while ((nl = pending.indexOf('\n', start)) !== -1) {
        const line = pending.slice(start, nl).trim();
        if (line) out.push({ event: undefined, data: line });
        start = nl + 1;
      }
      pending = pending.slice(start);
      if (pending.length > maxEventChars) throw eventTooLarge(maxEventChars);
    },
    end(out) {
      const line = pending.trim();
      pending = '';
      if (line) out.push({ event: undefined, data: line });
    },
  };
}

/** One SSE data event carrying `json` (already serialized). */
export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** The terminator OpenAI clients expect. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** The final event of a stream that failed after its headers were sent (what openai-node raises as APIError). */
export function sseError(body: ErrorBody): string {
  return sseData(JSON.stringify(body));
}
