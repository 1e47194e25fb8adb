/**
 * A chat answer a plugin gives itself (`Reply.answer`: a response cache's hit), written as an
 * upstream's would be: rendered by the exchange's dialect from the canonical completion, as one JSON
 * body, or as a stream of its chunks when the client asked for one, with the response hooks of the
 * plugins entered (`onResponseStart`, `onResponseChunk`, `onResponseComplete`) run as for an
 * upstream's answer. Nothing was generated upstream: its usage is 0 tokens and its cost 0.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../exchange.ts';
import type { ChatCompletion } from '../canonical/chat-types.ts';
import { chunksOfCompletion } from '../canonical/completion-assembler.ts';
import { mapCompletionText } from '../canonical/text-map.ts';
import { sendJson } from '../http/respond.ts';
import { servedModelName } from '../dialects/model-field.ts';
import { dialectOf } from './stream-relay.ts';
import type { ResponseHooks } from './relay-types.ts';

/** Writes `answer` to `res` in `ex`'s dialect; `headers` are the reply's own. */
export async function relayLocalAnswer(ex: Exchange, given: ChatCompletion, res: ServerResponse, hooks: ResponseHooks, headers: Record<string, string> | undefined): Promise<void> {
  const dialect = dialectOf(ex);
  // The plugins that rewrite answers' text rewrite this one too, whole.
  const { rewrite } = hooks;
  const answer = rewrite ? mapCompletionText(given, (piece, index) => rewrite(ex, piece, false, index) + rewrite(ex, '', true, index)) : given;
  const renderer = dialect.createRenderer(ex);
  ex.modelServed = servedModelName(answer.model);
  // No token was generated for it: the log row says 0 tokens at a cost of 0 (pricing prices only
  // what an upstream served, `ex.target`).
  ex.usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 };
  ex.cost = { totalNanos: 0, inputNanos: 0, cachedInputNanos: 0, cacheWriteNanos: 0, outputNanos: 0, unpriced: false, price: null };
  ex.status = 200;
  hooks.start(ex);
  if (!ex.stream) {
    const payload = renderer.completion({ completion: answer, raw: null });
    const final = renderer.finalAnswer?.();
    if (final !== undefined) await hooks.complete(ex, final);
    ex.firstByteAtPerfMs = performance.now();
    sendJson(res, 200, payload, ex.id, ex.responseHeaders, headers);
    return;
  }
  let out = '';
  for (const chunk of chunksOfCompletion(answer, true)) {
    hooks.chunk(ex, chunk);
    out += renderer.chunk({ chunk, raw: null });
  }
  out += renderer.end();
  const final = renderer.finalAnswer?.();
  if (final !== undefined) await hooks.complete(ex, final);
  if (res.destroyed) return;
  res.writeHead(200, Object.assign({}, ex.responseHeaders, headers, { 'content-type': dialect.streamContentType, 'cache-control': 'no-cache', 'x-request-id': ex.id }));
  ex.firstByteAtPerfMs = performance.now();
  res.end(out);
}
