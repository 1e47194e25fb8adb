/**
 * UTF-8 text of a byte stream read chunk by chunk (an upstream's SSE or NDJSON body). A `TextDecoder`
 * per stream and its streaming `decode` cost more than the framing of a short event; most chunks end
 * on a character boundary (an event ends in `\n`), and those are sliced directly (`Buffer#toString`).
 * A decoder is made the first time a chunk ends inside a character (or the stream starts with a BOM,
 * which `TextDecoder` drops as the SSE spec asks) and carries the stream from then on.
 */

import { TextDecoder } from 'node:util';

const STREAM = { stream: true } as const;

export interface Utf8StreamDecoder {
  /** The text of `buf`, a partial character at its end held back for the next chunk. */
  decode(buf: Buffer): string;
  /** What is held back at the end of the stream (U+FFFD for an incomplete character). */
  end(): string;
}

export function createUtf8StreamDecoder(): Utf8StreamDecoder {
  let decoder: TextDecoder | null = null;
  let first = true;
  return {
    decode(buf) {
      if (decoder === null) {
        const startsWithBom = first && buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
        first = false;
        if (!startsWithBom && (buf.length === 0 || buf[buf.length - 1]! < 0x80)) return buf.toString('utf8');
        decoder = new TextDecoder('utf-8');
      }
      return decoder.decode(buf, STREAM);
    },
    end() {
      return decoder === null ? '' : decoder.decode();
    },
  };
}
