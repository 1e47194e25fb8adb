/**
 * The relay of an embeddings answer (`EmbeddingsCall`): one bounded JSON body, decoded by the
 * provider's codec to canonical vectors (`EmbeddingResult`), observed (served model, input tokens),
 * then answered in the client's dialect, or byte for byte on a native pass-through.
 *
 * A small relay of its own rather than a branch of the chat one (`proxy.ts`): an embeddings answer
 * has no choices, no generated text and no stream, and its usage is input tokens alone. Dispatch,
 * the upstream's error answers and a client's disconnect are handled by `proxy()` exactly as for chat.
 * When the upstream reports no usage (Gemini), the inputs are counted locally (`completeUsage`) and
 * the log row is marked estimated.
 */
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http/respond.ts';
import { MAX_REPORTED_TOKENS } from '../canonical/chat-types.ts';
import type { Exchange } from '../exchange.ts';
import type { EmbeddingsCall } from '../upstream/upstream-call.ts';
import { readBodyText } from '../upstream/upstream-client.ts';
import { settleUsage } from '../tokens/token-estimate.ts';
import { internalError } from '../errors.ts';
import type { ResponseRenderer } from '../dialects/dialect.ts';
import { servedModelName } from '../dialects/model-field.ts';
import type { ProxyDeps, ResponseHooks } from './relay-types.ts';

/** Reads, observes and answers an embeddings body. Throws `GatewayError` before the headers are sent. */
export async function relayEmbeddings(
  ex: Exchange, call: EmbeddingsCall, res: ServerResponse, hooks: ResponseHooks, renderer: ResponseRenderer,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  const text = await readBodyText(body, deps.maxResponseBytes, call.provider);
  const result = call.codec.decodeEmbeddings(text);
  ex.modelServed = servedModelName(result.model);
  // A count that is not a sane token count is treated as missing and counted locally (as for chat).
  const reported = result.promptTokens;
  if (reported !== null && Number.isSafeInteger(reported) && reported >= 0 && reported <= MAX_REPORTED_TOKENS) {
    ex.usage = { promptTokens: reported, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 };
  }
  await settleUsage(ex, deps.tokens);
  let payload = text;
  if (!call.passthrough) {
    if (!renderer.embeddings) throw internalError(new Error(`dialect "${ex.dialect?.id}" renders no embeddings`));
    payload = renderer.embeddings(result);
  }
  ex.status = 200;
  hooks.start(ex);
  ex.firstByteAtPerfMs = performance.now();
  sendJson(res, 200, payload, ex.id, ex.responseHeaders);
}
