/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`), the framing of Bedrock's
 * `InvokeModelWithResponseStream` and `ConverseStream` answers, rewritten into SSE text read by read
 * (`ResponseCodec.transcode`). Each message is a 4-byte total length, a 4-byte headers length, a
 * prelude CRC32, the headers, the payload and a message CRC32; the messages are cut from the byte
 * stream by that total length here, and decoded (both checksums, the typed headers) by
 * `@smithy/eventstream-codec`, the AWS SDK's own codec. A message carries `:message-type` (`event`,
 * `exception` or `error`), `:event-type` or `:exception-type`, and a JSON payload.
 *
 * Sources: https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html (the message layout);
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html
 * (the `chunk` event and the stream's exceptions).
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { malformedResponse } from '../canonical.ts';

/** One decoded message: its kind, its event or exception name, and its payload as text. */
export interface AwsStreamMessage {
  /** `event`, `exception` or `error`. */
  messageType: string;
  /** `:event-type` of an event, `:exception-type` of an exception, `:error-code` of an error. */
  name: string;
  /** The payload (JSON), or for an `error` message its `:error-message` header. */
  payload: string;
}

/** The codec's smallest message (prelude, its CRC and the message CRC), and the most one message may hold. */
const MIN_MESSAGE_BYTES = 16;
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function headerText(headers: Record<string, { type: string; value: unknown }>, name: string): string {
  const header = headers[name];
  return header && header.type === 'string' ? String(header.value) : '';
}

/** Decodes one whole message. Throws 502 `upstream_malformed_response` on a bad checksum or header. */
function decodeMessage(bytes: Buffer, provider: string): AwsStreamMessage {
  let message;
  try {
    message = codec.decode(bytes);
  } catch (err) {
    throw malformedResponse(provider, `an event-stream message that is not valid (${(err as Error).message})`);
  }
  const headers = message.headers as Record<string, { type: string; value: unknown }>;
  const messageType = headerText(headers, ':message-type') || 'event';
  if (messageType === 'error') {
    return { messageType, name: headerText(headers, ':error-code'), payload: headerText(headers, ':error-message') };
  }
  const name = headerText(headers, messageType === 'exception' ? ':exception-type' : ':event-type');
  return { messageType, name, payload: Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength).toString('utf8') };
}

/**
 * Cuts the byte stream into messages and yields, per read, the SSE text `toSse` makes of the messages
 * that read completed (nothing for a read that completed none). Throws 502 for a message whose
 * length is impossible or over 16 MiB, or a body that ends inside a message.
 */
export async function* transcodeEventStream(
  body: AsyncIterable<Buffer>, provider: string, toSse: (message: AwsStreamMessage) => string,
): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const read of body) {
    pending = pending.length === 0 ? read : Buffer.concat([pending, read]);
    let out = '';
    while (pending.length >= 4) {
      const total = pending.readUInt32BE(0);
      if (total < MIN_MESSAGE_BYTES || total > MAX_MESSAGE_BYTES) throw malformedResponse(provider, `an event-stream message of ${total} bytes`);
      if (pending.length < total) break;
      out += toSse(decodeMessage(pending.subarray(0, total), provider));
      pending = pending.subarray(total);
    }
    if (out) yield Buffer.from(out, 'utf8');
  }
  if (pending.length > 0) throw malformedResponse(provider, 'an event stream that ends inside a message');
}

/** One SSE event. */
export function sseEvent(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
