/**
 * The choice between native pass-through and translation (docs/architecture.md "Dialects"): when the
 * provider speaks the client's dialect natively, the client's own body goes upstream with only the
 * model and the credential replaced, plus the dialect's allow-listed headers; otherwise the canonical
 * request is translated by the provider, and a part of the client's body the canonical request could
 * not carry (`ex.untranslatable`) is refused with its 400. A native pass-through with a shared key
 * refuses what the body names that only the caller's own credential may forward
 * (`ex.ownCredentialOnly`: a stored item the gateway does not hold); the router then tries the
 * request's other deployments, as for any deployment that cannot take it.
 *
 * An embeddings exchange (its `ex.request` an `EmbeddingRequest`) follows the same choice: native
 * pass-through to a provider that speaks the client's dialect (`openai-embeddings`, or `gemini` for
 * Gemini's embed methods), else the provider's own `buildEmbeddingCall`, after the 400 for what the
 * canonical call could not carry (Gemini's `taskType`); a provider with neither (Anthropic) is refused
 * with a 400 naming it and the configured providers that embed.
 */
import type { Exchange } from '../../../core/exchange.ts';
import type { ModelCall, UpstreamCall } from '../../../core/upstream/upstream-call.ts';
import type { ChatCallOptions, Provider } from '../providers/base.ts';
import { capOutputTokens } from '../../../core/tokens/worst-case.ts';
import { embeddingsUnsupported } from '../../../core/errors.ts';
import { isEmbeddingRequest } from '../../../core/canonical/canonical-request.ts';

/** The allow-listed dialect headers the client sent, by lowercase name. */
function dialectHeaders(ex: Exchange, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = ex.headers[name];
    if (typeof value === 'string') picked[name] = value;
    else if (Array.isArray(value)) picked[name] = value.join(',');
  }
  return picked;
}

/** What `upstreamCallFor` was given, kept on the call it built so the call can be built again. */
interface CallInputs {
  ex: Exchange;
  provider: Provider;
  options: ChatCallOptions;
  embedders: readonly string[];
}

/** A chat call as `upstreamCallFor` returns it: with its inputs, read by `rebuild` and `withOutputCap`. */
type RebuildableCall = UpstreamCall & { builtFrom: CallInputs };

/**
 * The upstream call for a model-call exchange routed to `provider`, able to rebuild itself from the
 * exchange as it stands (`rebuild`, for a plugin that changed the body it forwards) and with a lower
 * output limit (`withOutputCap`, used by a budget that can pay for less than was asked; not on an
 * embeddings call, which generates nothing). `embedders` are the ids of the configured providers
 * that embed, named in the 400 for one that does not.
 *
 * `rebuild` and `withOutputCap` are two functions shared by every call, reading the call's
 * `builtFrom`, not two closures made per request: on Node 22+ (V8's Maglev compiler), the closures
 * made here for every request kept each request's objects alive through young-generation GCs, and
 * promoted them (2.3 KiB a request at one connection on Node 24, 0.06 without;
 * docs/performance-history.md, seventh round).
 */
export function upstreamCallFor(ex: Exchange, provider: Provider, options: ChatCallOptions, embedders: readonly string[] = []): ModelCall {
  const call = buildCall(ex, provider, options, embedders);
  if (call.kind === 'embeddings') return call;
  const rebuildable = call as RebuildableCall;
  rebuildable.builtFrom = { ex, provider, options, embedders };
  rebuildable.rebuild = rebuild;
  rebuildable.withOutputCap = withOutputCap;
  return rebuildable;
}

/** `UpstreamCall.rebuild`: called as the call's method, so `this` is the call. */
function rebuild(this: RebuildableCall): ModelCall {
  const { ex, provider, options, embedders } = this.builtFrom;
  return upstreamCallFor(ex, provider, options, embedders);
}

/** `UpstreamCall.withOutputCap`: called as the call's method, so `this` is the call. */
function withOutputCap(this: RebuildableCall, tokens: number): ModelCall {
  const { ex, provider, options, embedders } = this.builtFrom;
  capOutputTokens(ex, tokens);
  return upstreamCallFor(ex, provider, options, embedders);
}

function buildCall(ex: Exchange, provider: Provider, options: ChatCallOptions, embedders: readonly string[]): ModelCall {
  const { dialect, clientBody } = ex;
  if (dialect && clientBody && provider.speaksNatively(dialect.id, options.model, ex.operation)) {
    // A shared key must not carry what names another account's data upstream (an unknown item id).
    if (ex.ownCredentialOnly && options.credential.source !== 'user') throw ex.ownCredentialOnly;
    const headers = dialectHeaders(ex, dialect.passthroughHeaders);
    return provider.buildNativeCall(dialect.id, Object.assign({}, options, { operation: ex.operation, body: clientBody, stream: ex.stream, headers, query: ex.query }));
  }
  const request = ex.request!;
  if (isEmbeddingRequest(request)) {
    if (!provider.buildEmbeddingCall) throw embeddingsUnsupported(provider.name, embedders);
    // A dialect whose embeddings body holds more than the canonical call (Gemini's taskType) refuses it here.
    if (ex.untranslatable) throw ex.untranslatable;
    return provider.buildEmbeddingCall(request, options);
  }
  if (ex.untranslatable) throw ex.untranslatable;
  return provider.buildChatCall(request, options);
}
