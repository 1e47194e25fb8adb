/**
 * What the router hands the core: one upstream HTTP call plus the codec that turns the upstream's
 * answer into canonical OpenAI shapes. Providers build these (the provider router's provider files);
 * the core dispatches them without knowing which provider it talks to.
 */
import type { ChatCompletion, ChatCompletionChunk } from '../canonical/chat-types.ts';
import type { EmbeddingResult } from '../canonical/embedding-types.ts';
import type { GatewayError } from '../errors.ts';
import type { Exchange, Target } from '../exchange.ts';

/** How the upstream frames a stream: SSE (`text/event-stream`) or NDJSON (one JSON object per line). */
export type StreamFraming = 'sse' | 'ndjson';

/** A plain HTTP request to an upstream. */
export interface UpstreamRequest {
  /** Provider id, for error messages and metrics. */
  provider: string;
  /** `scheme://host[:port]`, e.g. `https://api.openai.com`. */
  origin: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  method: 'GET' | 'POST';
  /** Lowercase header names. Carries the credential: never log it. */
  headers: Record<string, string>;
  body: string | null;
  /**
   * Headers computed right before each dispatch, from the request as it will be sent, added to
   * `headers` (AWS SigV4 signs the method, path, headers, body and the time, so a signature cannot be
   * made when the call is built, and a retried call needs a fresh one). Absent: `headers` as they are.
   * Rejects with a `GatewayError` when no signature can be made (no credentials).
   */
  authorize?: (this: void, request: UpstreamRequest) => Promise<Record<string, string>>;
}

/** A chat-shaped model call (a completion or a stream): the request plus how to read its answer. */
export interface UpstreamCall extends UpstreamRequest {
  /** Absent or `completion`: what tells it from an `EmbeddingsCall`. */
  kind?: 'completion';
  /** Whether the upstream will stream its answer. */
  stream: boolean;
  /**
   * True for a native pass-through (the client's dialect is the upstream's own): the answer's bytes
   * are relayed unchanged and `codec` only observes them for usage, the served model and the text.
   */
  passthrough?: boolean;
  codec: ResponseCodec;
  /**
   * On a native pass-through, false when the upstream's error bodies are not in the client's dialect
   * (Bedrock's `{"message"}` to a Messages client): its errors are then rendered by the dialect from
   * the mapped error instead of relayed. Default true.
   */
  relayErrors?: boolean;
  /**
   * The same call with the request's output limit lowered to `tokens` per choice, in the client's
   * dialect and in the provider's own field (set by the router; a budget that can pay for less than
   * the request asked uses it). Absent when the call cannot be rebuilt. Call it on the call
   * (`call.withOutputCap(n)`), not detached: the router's one shared function reads the call.
   */
  withOutputCap?: (tokens: number) => ModelCall;
  /**
   * Set by the router on the call it returns: what to try when this attempt fails before anything
   * reached the client (`core/proxy/upstream-attempts.ts`). Absent: one attempt only.
   */
  fallback?: FallbackPlan;
  /**
   * The same call built again from the exchange as it now stands, for a plugin that changed what is
   * sent (`ex.clientBody`, `ex.request`) in `beforeUpstream` (set by the router). Absent when the call
   * cannot be rebuilt. Call it on the call (`call.rebuild()`), as `withOutputCap`.
   */
  rebuild?: () => ModelCall;
}

/**
 * An embeddings call: one non-streamed JSON answer whose codec decodes it to canonical vectors. The
 * proxy relays it with `relayEmbeddings` (`core/proxy/embeddings-relay.ts`).
 */
export interface EmbeddingsCall extends UpstreamRequest {
  kind: 'embeddings';
  /** True for a native pass-through: the answer's bytes go to the client unchanged, only observed. */
  passthrough?: boolean;
  codec: EmbeddingsCodec;
  /** Never set: an embeddings call generates no output, so there is no output limit to lower. */
  withOutputCap?: never;
  /** As `UpstreamCall.fallback`. */
  fallback?: FallbackPlan;
}

/** Every call the router may hand the core. */
export type ModelCall = UpstreamCall | EmbeddingsCall;

/** How to read an embeddings answer. */
export interface EmbeddingsCodec {
  /** A non-2xx answer as the contract's error, as for chat. `bodyText` may be empty or not JSON. */
  decodeError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError;
  /** A 2xx body as canonical vectors. Throws `GatewayError` (502) when it is not a valid answer. */
  decodeEmbeddings(bodyText: string): EmbeddingResult;
}

/** A framed stream event: SSE `event`/`data`, or one NDJSON line as `data`. */
export interface FramedEvent {
  event: string | undefined;
  data: string;
}

/** A canonical chunk plus, when the upstream's own bytes are already canonical, those bytes. */
export interface DecodedChunk {
  chunk: ChatCompletionChunk;
  /** The upstream's JSON text for this chunk if it can be forwarded unchanged; null to re-serialize. */
  raw: string | null;
  /**
   * On a native pass-through, the answer object this event completes in the client's dialect (the
   * `response` of a Responses `response.completed`), for `Plugin.onResponseComplete`; else absent.
   */
  final?: unknown;
}

export interface DecodedResponse {
  completion: ChatCompletion;
  /** The upstream's body if it can be forwarded unchanged; null to re-serialize `completion`. */
  raw: string | null;
  /** On a native pass-through of a dialect whose answer is one object, that object parsed; else absent. */
  final?: unknown;
}

/**
 * A provider's reading of its answers. `decodeError` and `createStreamDecoder` are callable detached
 * (`this: void`): a codec built from another (a token count's, an OpenAI-compatible server's) reuses them.
 */
export interface ResponseCodec {
  readonly framing: StreamFraming;
  /**
   * A stream answer in a binary framing of the upstream's own (AWS's event stream), rewritten read by
   * read into `framing` before anything else reads it; on a native pass-through what it yields is what
   * the client receives. Pulled lazily (backpressure holds); throws `GatewayError` for bytes that are
   * not valid framing. Absent: the upstream's bytes are already in `framing`.
   */
  transcode?(this: void, body: AsyncIterable<Buffer>): AsyncIterable<Buffer>;
  /** A non-2xx answer as the contract's error. `bodyText` may be empty or not JSON. */
  decodeError(this: void, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError;
  /** A 2xx non-streamed body. Throws `GatewayError` (502) when it is not a valid answer. */
  decodeResponse(bodyText: string): DecodedResponse;
  /** A decoder for one stream (decoders keep per-stream state). */
  createStreamDecoder(this: void): StreamDecoder;
}

export interface StreamDecoder {
  /**
   * Decodes one framed event, appending canonical chunks to `out`. Returns `true` when the upstream
   * signalled the end of the stream (`[DONE]`, `message_stop`, `done: true`). Throws `GatewayError`
   * for an in-band error event or an event that is not valid.
   */
  decode(event: FramedEvent, out: DecodedChunk[]): boolean;
  /**
   * The upstream closed the body. Appends any final chunks; throws `GatewayError` if the stream was
   * cut short (no terminator and no finish reason).
   */
  finish(out: DecodedChunk[]): void;
}

/** What a failed attempt tells the plan. */
export interface FailedAttempt {
  error: GatewayError;
  /** The upstream's own HTTP status (before the gateway mapped it, e.g. 500 → 502); null without an answer. */
  upstreamStatus: number | null;
  /** Attempts made so far for this request, the failed one included. */
  attempts: number;
}

/**
 * The router's answer to "what next?" after a failed attempt. `next` resolves to the call for the
 * next attempt (having set `ex.target` to its deployment, and waited any backoff, honouring
 * `ex.signal`), or null to give up: the failed attempt's error then answers the client. It MUST NOT
 * throw for a deployment it cannot use; it skips it.
 */
export interface FallbackPlan {
  next(ex: Exchange, failed: FailedAttempt): Promise<ModelCall | null>;
  /**
   * Where later attempts may go (provider and model of each other deployment), so a reservation can
   * cover the dearest one: a fallback may serve and bill at its own price.
   */
  readonly targets: readonly Target[];
}
