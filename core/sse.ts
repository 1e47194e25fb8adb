/**
 * Server-sent events: incremental framing of upstream bytes (parsing by `eventsource-parser`, which
 * follows the WHATWG spec: comments, keep-alives, CRLF, multi-line data) and the encoding of what the
 * gateway writes to clients.
 */
import { createParser } from 'eventsource-parser';
import type { FramedEvent } from './upstream-call.ts';
import type { ErrorBody } from './errors.ts';

/** Incremental framer: feed decoded text as it arrives; complete events are appended to `out`. */
export interface Framer {
  feed(text: string, out: FramedEvent[]): void;
  /** End of input: a final event without its trailing blank line is still delivered. */
  end(out: FramedEvent[]): void;
}

/** Creates an SSE framer. Comment lines (`: keep-alive`) are skipped. */
export function createSseFramer(): Framer {
  let sink: FramedEvent[] = [];
  const parser = createParser({
    onEvent: (message) => {
      sink.push({ event: message.event, data: message.data });
    },
  });
  return {
    feed(text, out) {
      sink = out;
      parser.feed(text);
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

/** Creates an NDJSON framer: one event per non-empty line. */
export function createNdjsonFramer(): Framer {
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
