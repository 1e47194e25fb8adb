/**
 * Reading OpenAI-shaped embeddings answers (`POST /v1/embeddings`: OpenAI, OpenAI-compatible servers,
 * Mistral) as the canonical `EmbeddingResult`: `{object: "list", data: [{object: "embedding", index,
 * embedding}], model, usage: {prompt_tokens, total_tokens}}`, each `embedding` an array of numbers
 * or, when the request asked for `encoding_format: "base64"`, a base64 string of little-endian
 * float32 values. Vectors are put in input order by `index`.
 *
 * Sources: https://platform.openai.com/docs/api-reference/embeddings/object ; openai-node
 * `src/resources/embeddings.ts` (`CreateEmbeddingResponse`, base64 decoding in `toFloat32Array`);
 * Mistral https://docs.mistral.ai/api/endpoint/embeddings (same shape, `usage.completion_tokens: 0`).
 */
import { vectorFromBase64, type EmbeddingResult } from '../../../../core/canonical/embedding-types.ts';
import type { GatewayError } from '../../../../core/errors.ts';
import type { EmbeddingsCodec } from '../../../../core/upstream/upstream-call.ts';
import { malformedResponse, parseUpstreamJson, type UpstreamHeaders } from '../canonical.ts';

interface OpenAIEmbeddingList {
  data?: Array<{ index?: unknown; embedding?: unknown }>;
  model?: unknown;
  usage?: { prompt_tokens?: unknown } | null;
}

function vectorOf(provider: string, embedding: unknown): number[] {
  if (typeof embedding === 'string') {
    try {
      return vectorFromBase64(embedding);
    } catch {
      throw malformedResponse(provider, 'an embedding whose base64 is not float32 values');
    }
  }
  if (Array.isArray(embedding) && embedding.every((v) => typeof v === 'number')) return embedding;
  throw malformedResponse(provider, 'an embedding that is neither numbers nor base64');
}

/** An OpenAI-shaped embeddings body as canonical vectors. Throws 502 `upstream_malformed_response`. */
export function decodeOpenAIEmbeddings(provider: string, bodyText: string): EmbeddingResult {
  const list = parseUpstreamJson<OpenAIEmbeddingList>(provider, bodyText, 'an embeddings answer');
  if (!list || !Array.isArray(list.data)) throw malformedResponse(provider, 'an embeddings answer without "data"');
  const vectors: number[][] = [];
  list.data.forEach((item, position) => {
    const index = typeof item?.index === 'number' ? item.index : position;
    vectors[index] = vectorOf(provider, item?.embedding);
  });
  if (vectors.length !== list.data.length || Array.from(vectors).includes(undefined as never)) throw malformedResponse(provider, 'an embeddings answer whose indexes have gaps');
  const promptTokens = list.usage?.prompt_tokens;
  return { vectors, model: typeof list.model === 'string' ? list.model : '', promptTokens: typeof promptTokens === 'number' ? promptTokens : null };
}

/** The codec of an OpenAI-shaped embeddings call; `decodeError` is the provider's own error mapping. */
export function openAIEmbeddingsCodec(
  provider: string, decodeError: (status: number, bodyText: string, headers: UpstreamHeaders) => GatewayError,
): EmbeddingsCodec {
  return { decodeError, decodeEmbeddings: (bodyText) => decodeOpenAIEmbeddings(provider, bodyText) };
}
