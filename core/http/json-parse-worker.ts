/**
 * The worker thread that parses large request bodies (`request-body.ts`, `parseJsonBodyOffThread`):
 * `JSON.parse` of a 32 MiB body holds the event loop for tens of milliseconds, and twenty at once held
 * it for seconds (`/healthz` unanswered). Here the parse and the depth check run beside the loop; the
 * main thread only receives the value as a structured clone. That deserialization (and the schema
 * check after it) still costs the main thread time in proportion to the value's size: cheaper than
 * `JSON.parse` for text-heavy bodies (one long string is copied, not scanned), not much cheaper for a
 * body of millions of tiny values. Bounding that is open work (count the values here and refuse).
 *
 * Protocol: the parent posts `{ id, bytes }` (the body's UTF-8, its buffer transferred); the worker
 * answers `{ id, value }`, or `{ id, error }` with the parser's reason, or `{ id, tooDeep: true }`
 * when the value nests deeper than `MAX_JSON_DEPTH`. One message at a time, in order.
 */
import { parentPort } from 'node:worker_threads';
import { MAX_JSON_DEPTH, jsonDepthExceeds, type JsonParseReply, type JsonParseRequest } from './request-body.ts';

parentPort?.on('message', ({ id, bytes }: JsonParseRequest) => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    parentPort!.postMessage({ id, error: (err as Error).message } satisfies JsonParseReply);
    return;
  }
  const reply: JsonParseReply = jsonDepthExceeds(value, MAX_JSON_DEPTH) ? { id, tooDeep: true } : { id, value };
  parentPort!.postMessage(reply);
});
