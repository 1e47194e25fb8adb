/**
 * The proxy step: dispatch an `UpstreamCall`, then relay the answer to the client in its dialect.
 * The upstream's answer is decoded into canonical chunks, observed (usage, served model, generated
 * text, the chunk hooks) and rendered by the exchange's dialect (`core/dialects/`); on a native
 * pass-through (`call.passthrough`) the upstream's bytes are relayed unchanged and only observed.
 * Streams flow chunk by chunk with backpressure (a full client socket pauses the upstream read until
 * `drain`); nothing is buffered whole except a bounded non-streamed body.
 *
 * An embeddings call (`call.kind === 'embeddings'`) shares the dispatch and the error mapping, then
 * is answered by its own small relay (`embeddings-relay.ts`); streams by `stream-relay.ts`, observed
 * by `observe.ts`.
 *
 * When the dialect's answer is one object (`ResponseRenderer.finalAnswer`, `DecodedChunk.final`), the
 * `onResponseComplete` hooks get it and are awaited before the answer's last bytes are written: a
 * client that acts on the final event finds what they recorded (the Responses state store).
 *
 * Errors before the response headers are thrown (the pipeline renders them in the dialect's shape).
 * After the stream's headers are sent, an error ends the stream with the dialect's error event, and
 * `ex.status` / `ex.errorCode` record it for the log.
 */
import { sendJson } from '../http/respond.ts';
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../exchange.ts';
import type { ModelCall, UpstreamCall } from '../upstream/upstream-call.ts';
import { readBodyText } from '../upstream/upstream-client.ts';
import { settleUsage } from '../tokens/token-estimate.ts';
import { credentialsOf, redactError, redactText } from './redact.ts';
import type { ResponseRenderer } from '../dialects/dialect.ts';
import { servedModelName } from '../dialects/model-field.ts';
import { relayEmbeddings } from './embeddings-relay.ts';
import { cutError } from './stream-cut.ts';
import { createCompletionAssembler } from '../canonical/completion-assembler.ts';
import { mapCompletionText } from '../canonical/text-map.ts';
import { collectGenerated, readUsage } from './observe.ts';
import { cancellationOf, dialectOf, relayNativeStream, relayStream, shutdownCut } from './stream-relay.ts';
import type { ObservingHooks, ProxyDeps, ResponseHooks } from './relay-types.ts';

export type { ProxyDeps, ResponseHooks } from './relay-types.ts';

/** An upstream error body that may reach a native client as it is: a JSON object, not about the credential. */
function relayable(status: number, text: string): boolean {
  return status !== 401 && status !== 403 && text.startsWith('{') && isJson(text);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Dispatches `call` and writes the answer to `res`. Throws `GatewayError` only before headers are sent. */
export async function proxy(ex: Exchange, call: ModelCall, res: ServerResponse, responseHooks: ResponseHooks, deps: ProxyDeps): Promise<void> {
  const upstream = await deps.upstream.send(call, cancellationOf(ex));
  ex.upstreamStatus = upstream.statusCode;
  // An upstream may quote the key it was sent; no upstream text reaches the client or the log with it.
  const secrets = credentialsOf(call);
  if (upstream.statusCode < 200 || upstream.statusCode > 299) {
    const text = redactText(await readBodyText(upstream.body, deps.maxResponseBytes, call.provider).catch(() => ''), secrets);
    const error = redactError(call.codec.decodeError(upstream.statusCode, text, upstream.headers), secrets);
    // The client speaks the upstream's dialect: its own words and status go back unchanged, except
    // where they could quote the credential (401, 403) or are not the upstream's error body.
    if (call.passthrough && call.kind !== 'embeddings' && call.relayErrors === false) throw error;
    if (call.passthrough && relayable(upstream.statusCode, text)) throw error.relayed(upstream.statusCode, text);
    throw error;
  }
  const renderer = dialectOf(ex).createRenderer(ex);
  const provider = call.provider;
  const hooks: ObservingHooks = {
    start: responseHooks.start, chunk: responseHooks.chunk, complete: responseHooks.complete, wantsAnswer: responseHooks.wantsAnswer, rewrite: responseHooks.rewrite,
    usage: (into, report) => readUsage(into, report, provider, deps.log), secrets,
    assembler: responseHooks.wantsAnswer && call.kind !== 'embeddings' && call.stream ? createCompletionAssembler() : null,
  };
  let relayed = false;
  try {
    if (call.kind === 'embeddings') await relayEmbeddings(ex, call, res, hooks, renderer, upstream.body, deps);
    else if (!call.stream) await relayCompletion(ex, call, res, hooks, renderer, upstream.body, deps);
    // A plugin that rewrites the answer's text gets it decoded, so a native stream is rendered anew.
    else if (call.passthrough && !hooks.rewrite) await relayNativeStream(ex, call, res, hooks, renderer, streamBody(call, upstream.body), deps);
    else await relayStream(ex, call, res, hooks, renderer, streamBody(call, upstream.body), deps);
    relayed = true;
  } finally {
    // The upstream accepted the request, so it bills it: an answer that ended early (cut by the
    // upstream, a timeout, the client leaving, the shutdown; `stream-cut.ts`) is billed for what was
    // generated so far, counted locally, and a body cut before it was read for its prompt.
    if (!relayed || endedEarly(ex)) await settleUsage(ex, deps.tokens, true);
  }
}

/** True when the answer did not end whole: the client left, or the relay recorded an error after the head. */
function endedEarly(ex: Exchange): boolean {
  return ex.clientAborted || ex.errorCode !== null || shutdownCut(ex) !== null;
}

/** A stream's body as the codec reads it: transcoded first when the upstream frames it its own way (`ResponseCodec.transcode`). */
function streamBody(call: UpstreamCall, body: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  return call.codec.transcode ? call.codec.transcode(body) : body;
}

async function relayCompletion(
  ex: Exchange, call: UpstreamCall, res: ServerResponse, hooks: ObservingHooks, renderer: ResponseRenderer,
  body: AsyncIterable<Buffer>, deps: ProxyDeps,
): Promise<void> {
  const text = redactText(await readBodyText(body, deps.maxResponseBytes, call.provider).catch((err: unknown) => {
    throw cutError(call.provider, err);
  }), hooks.secrets);
  const decoded = call.codec.decodeResponse(text);
  const { completion } = decoded;
  ex.modelServed = servedModelName(completion.model);
  if (completion.usage) hooks.usage(ex, completion.usage);
  if (ex.usage === null || ex.usage.completionTokens === 0) {
    for (const choice of completion.choices) collectGenerated(ex.generated, choice.message);
    await settleUsage(ex, deps.tokens);
  }
  // The text rewritten (a guardrail) before anything is sent; a native answer is then rendered anew.
  const { rewrite } = hooks;
  const answer = rewrite ? { completion: mapCompletionText(completion, (piece, index) => rewrite(ex, piece, false, index) + rewrite(ex, '', true, index)), raw: null } : decoded;
  if (hooks.wantsAnswer) ex.answer = answer.completion;
  ex.status = 200;
  hooks.start(ex);
  const native = call.passthrough && !rewrite;
  const payload = native ? text : renderer.completion(answer);
  const final = native ? decoded.final : renderer.finalAnswer?.();
  if (final !== undefined) await hooks.complete(ex, final);
  ex.firstByteAtPerfMs = performance.now();
  sendJson(res, 200, payload, ex.id, ex.responseHeaders);
}
