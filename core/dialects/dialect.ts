/**
 * The dialect contract. A dialect is one API surface clients speak (OpenAI Chat Completions,
 * Anthropic Messages, OpenAI Responses, embeddings): its routes, its request schema, the mapping of
 * its request to the canonical (OpenAI chat-shaped) request, and the rendering of canonical answers,
 * stream chunks and errors back into its own shapes. Plugins see only canonical data, so budgets,
 * limits, pricing, metrics and the log work for every dialect without knowing which one it was.
 *
 * Adding a dialect is adding a folder under `core/dialects/` that exports a `Dialect`, and one line
 * in `core/dialects/index.ts`. See `docs/architecture.md` ("Dialects").
 *
 * Native pass-through: when the target provider declares the request's dialect native
 * (`Provider.nativeDialects`), the client's own body is forwarded with only the model and the
 * credential replaced, plus the dialect's `passthroughHeaders`; the upstream's bytes are relayed
 * unchanged and the provider's decoder only observes them for usage and text. The renderer is then
 * used for nothing but an error that ends a stream cut short.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CanonicalRequest } from '../canonical/canonical-request.ts';
import type { EmbeddingResult } from '../canonical/embedding-types.ts';
import type { GatewayError } from '../errors.ts';
import type { Exchange } from '../exchange.ts';
import type { DecodedChunk, DecodedResponse } from '../upstream/upstream-call.ts';
import type { RouteDeclaration } from '../routes.ts';
import type { TextMap } from '../canonical/text-map.ts';

/** A client's request as the dialect read it. */
export interface ParsedRequest {
  /**
   * The canonical request that plugins and translating providers read (`Exchange.request`): a chat
   * request, or the `EmbeddingRequest` of a dialect operation that embeds (`openai-embeddings`).
   */
  canonical: CanonicalRequest;
  /** The client's own body (validated), forwarded on native pass-through. */
  body: Readonly<Record<string, unknown>>;
  /** True when the client asked for a streamed answer. */
  stream: boolean;
  /** True when a streaming client asked for usage in the stream (OpenAI `stream_options.include_usage`). */
  wantsStreamUsage: boolean;
  /**
   * The first part of the body the canonical request could not carry (left out of it), as the 400 a
   * translation gives; thrown only when the request is translated, never on native pass-through.
   */
  untranslatable?: GatewayError | null;
  /**
   * What the body names that only the caller's own provider credential may forward on a native
   * pass-through (a stored item the gateway does not hold: with a shared key it might open another
   * account's item upstream), as the error a call with a shared key gets; null or absent when none.
   */
  ownCredentialOnly?: GatewayError | null;
}

/** Turns canonical answers into the dialect's wire shapes, for one exchange. */
export interface ResponseRenderer {
  /** The JSON body answering a non-streamed canonical completion. */
  completion(decoded: DecodedResponse): string;
  /** The stream text for one canonical chunk (`''` to send nothing). Runs after the chunk hooks. */
  chunk(decoded: DecodedChunk): string;
  /** The text that ends a complete stream; `ex.usage` is final when it runs. */
  end(): string;
  /** The one event that ends a stream which failed after its headers were sent. */
  error(err: GatewayError): string;
  /** The JSON body answering an embeddings call (a dialect with an embeddings operation has it). */
  embeddings?(result: EmbeddingResult): string;
  /**
   * The answer object `completion()` or `end()` last rendered (the JSON value the client receives, or
   * the one the stream's terminal event carries), for dialects whose answers are one object (the
   * Responses API's `response`); undefined before either ran. Feeds `Plugin.onResponseComplete`.
   */
  finalAnswer?(): unknown;
}

/** One API surface clients speak. */
export interface Dialect {
  /** Stable id, e.g. `openai-chat`, `anthropic-messages`; providers name it in `nativeDialects`. */
  readonly id: string;
  /** The endpoints of this dialect; each has a JSON body the dialect parses. */
  readonly routes: readonly RouteDeclaration[];
  /** Request headers (lowercase) forwarded unchanged on native pass-through, e.g. `anthropic-beta`. */
  readonly passthroughHeaders: readonly string[];
  /**
   * Where a client of this dialect puts its API key, as the 401 for a request without one names it
   * (`"x-goog-api-key: <key>" or "?key=<key>"`); absent: the gateway's `Authorization: Bearer` or `x-api-key`.
   */
  readonly keyAdvice?: string;
  /** Response content type of a stream in this dialect. */
  readonly streamContentType: string;
  /**
   * Validates a parsed JSON body for `operation` and maps it to the canonical request. Throws
   * `GatewayError` 400 (`invalid_request`, `param` naming the field) when it breaks the schema.
   * `headers` (lowercase names) carry the client's wishes about the translation, where a dialect has any;
   * `params` are the route's decoded path parameters (Gemini names the model in the path).
   */
  parseRequest(json: unknown, operation: string, headers?: IncomingHttpHeaders, params?: Readonly<Record<string, string>>): ParsedRequest;
  /**
   * The JSON body of an error response in this dialect's shape (the status and headers are the error's).
   * Callable detached (`this: void`): the server and the pipeline pass it on as a function.
   */
  errorBody(this: void, err: GatewayError): unknown;
  /** A renderer for one exchange's answer. */
  createRenderer(ex: Exchange): ResponseRenderer;
  /** The client's body with its output limit set to `tokens` per choice (for native pass-through). */
  capOutput(body: Readonly<Record<string, unknown>>, tokens: number): Readonly<Record<string, unknown>>;
  /** The body answering a token-count route (`kind: 'token-count'`) counted locally. */
  tokenCountBody?(inputTokens: number): unknown;
  /**
   * The client's body with every text mapped by `fn` (`core/canonical/text-map.ts`: message contents,
   * system prompts, instructions, tool results; never ids, tool arguments or opaque blocks), as it is
   * forwarded on native pass-through; the same object when nothing changed. A plugin that rewrites
   * request text (`Plugin.rewriteRequestText`) changes this and the canonical request alike.
   */
  mapRequestText(body: Readonly<Record<string, unknown>>, fn: TextMap): Readonly<Record<string, unknown>>;
}
