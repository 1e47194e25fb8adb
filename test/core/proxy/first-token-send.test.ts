/**
 * A stream's first token leaves as soon as it is relayed (core/proxy/proxy.ts `firstTokenSender`), not with
 * the rest of an upstream batch, and a translated stream joins the rest of the batch into one HTTP
 * chunk (`batchedWriter`). The simulator writes a whole answer in one tick, so the gateway reads
 * it at once and relays its events in one run of the microtask queue, during which Node holds the
 * response's writes (`cork` until `process.nextTick`). Observed at the gateway's own socket: the data
 * of each `_write` / `_writev` it makes, in order (what reaches the kernel in one call).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../../helpers/openai-responses-simulator.ts';

type WriteCall = { socket: Socket; text: string };
const calls: WriteCall[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with `.call(socket)` and put back on the prototype
const original = { write: Socket.prototype._write, writev: Socket.prototype._writev! };

function chunkText(chunk: unknown): string {
  return typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : '';
}

let sim: Awaited<ReturnType<typeof startOpenAISimulator>>;
let responsesSim: ResponsesSimulator;
let tg: TestGateway;

before(async () => {
  sim = await startOpenAISimulator({ streamContentChunks: 12 });
  responsesSim = await startResponsesSimulator();
  tg = await startTestGateway({
    providers: {
      openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-first-token' },
      // OpenAI's own type: Responses requests pass through (relayed as they come, observed on the side).
      native: { type: 'openai', baseUrl: responsesSim.baseUrl, apiKey: 'sk-first-token' },
    },
  });
  Socket.prototype._write = function (this: Socket, chunk, encoding, cb) {
    calls.push({ socket: this, text: chunkText(chunk) });
    return original.write.call(this, chunk, encoding, cb);
  };
  Socket.prototype._writev = function (this: Socket, chunks, cb) {
    calls.push({ socket: this, text: chunks.map((c) => chunkText(c.chunk)).join('') });
    return original.writev.call(this, chunks, cb);
  };
});

after(async () => {
  Socket.prototype._write = original.write;
  Socket.prototype._writev = original.writev;
  await tg?.close();
  await sim?.close();
  await responsesSim?.close();
});

for (const [name, path, body] of [
  ['a translated stream (Chat Completions)', '/chat/completions', { model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }],
  ['a native stream (Responses, passed through)', '/responses', { model: 'native/gpt-4o-mini', stream: true, input: 'Say hello', store: false }],
] as const) {
  test(`${name}: the first token is written before the rest of the batch`, async () => {
    calls.length = 0;
    const { status, text } = await tg.post(path, body);
    assert.equal(status, 200);
    const port = Number(new URL(tg.gateway.origin).port);
    // The gateway's side of the client's connection: the socket whose local port is the gateway's.
    const answer = calls.filter((c) => c.socket.localPort === port).map((c) => c.text);
    assert.ok(answer.length >= 2, `the answer left in ${answer.length} write(s): ${JSON.stringify(answer).slice(0, 300)}`);
    const [first] = answer;
    assert.match(first!, /^HTTP\/1\.1 200/, 'the first write carries the headers');
    assert.match(first!, /"(content|delta)":"[^"]+"/, 'and the first token');
    const end = lastEventOf(text);
    assert.ok(!first!.includes(end), `the end of the stream (${end.slice(0, 60)}) left in a later write`);
    assert.ok(answer.slice(1).join('').includes(end));
    if (path === '/chat/completions') {
      // Translated: the rest of the batch is joined into one HTTP chunk (then the terminating one).
      const rest = answer.slice(1).join('');
      assert.equal(chunkSizeLines(rest), 2, `the rest left in ${chunkSizeLines(rest)} HTTP chunks`);
    }
  });
}

/** HTTP/1.1 chunk-size lines in raw chunked bytes (the terminating `0` included); SSE data escapes its CRs. */
function chunkSizeLines(raw: string): number {
  return (raw.match(/(?:^|\r\n)[0-9a-f]+\r\n/g) ?? []).length;
}

/** The stream's last data line, e.g. `data: [DONE]` or the Responses `response.completed` event. */
function lastEventOf(streamText: string): string {
  const events = streamText.trim().split('\n\n');
  return events.at(-1)!.split('\n').at(-1)!;
}
