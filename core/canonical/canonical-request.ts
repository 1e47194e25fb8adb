/**
 * The canonical request of a model call, whatever dialect the client spoke (`Exchange.request`): a
 * chat request (`chat-types.ts`, OpenAI chat-shaped; every chat dialect maps to it) or an embeddings
 * call (`embedding-types.ts`, what the `openai-embeddings` dialect maps to). Both carry `model`, which
 * the router, the log and the renderers read without narrowing; anything else is read after
 * `isEmbeddingRequest` (or `chatRequestOf`) told which one it is.
 */
import type { ChatCompletionRequest } from './chat-types.ts';
import type { EmbeddingRequest } from './embedding-types.ts';

/** A model call's canonical request: a chat request or an embeddings call (see `isEmbeddingRequest`). */
export type CanonicalRequest = ChatCompletionRequest | EmbeddingRequest;

/**
 * True when `request` is an embeddings call. The discriminant is `messages`: a chat request always has
 * its list (each chat dialect requires or builds it), an embeddings call never has one. Not a field of
 * our own: the chat request of `openai-chat` is the client's own body, which would have to be copied
 * on the hot path to carry one, and a field any client can send would not tell the two apart.
 */
export function isEmbeddingRequest(request: CanonicalRequest): request is EmbeddingRequest {
  return !('messages' in request);
}

/** `request` when it is a chat request; null for an embeddings call or no request. */
export function chatRequestOf(request: CanonicalRequest | null): ChatCompletionRequest | null {
  return request !== null && !isEmbeddingRequest(request) ? request : null;
}

/** `request` when it is an embeddings call; null for a chat request or no request. */
export function embeddingRequestOf(request: CanonicalRequest | null): EmbeddingRequest | null {
  return request !== null && isEmbeddingRequest(request) ? request : null;
}
