/**
 * Gemini embeddings: the canonical embeddings call as `POST {base}/models/{model}:batchEmbedContents`
 * and its answer back; and for the `gemini` dialect's native pass-through, the answers of both
 * `embedContent` and `batchEmbedContents` read for observation, and the body's per-request models. One `EmbedContentRequest` per input, `{model: "models/{model}", content:
 * {parts: [{text}]}, outputDimensionality?}` (OpenAI's `dimensions`); the answer's `embeddings[i].values`
 * are the vectors in input order. Gemini embeds text only (token ids are refused with a 400) and
 * reports no token usage, so the gateway counts the inputs itself (the log row says estimated).
 *
 * Sources: https://ai.google.dev/api/embeddings (`models.batchEmbedContents`, `EmbedContentRequest`,
 * `ContentEmbedding`); https://ai.google.dev/gemini-api/docs/embeddings .
 */
import { textInputs, type EmbeddingRequest, type EmbeddingResult } from '../../../../core/canonical/embedding-types.ts';
import { malformedResponse, parseUpstreamJson } from '../canonical.ts';

interface BatchEmbedContentsResponse {
  embeddings?: Array<{ values?: unknown }>;
}

interface EmbedContentResponse {
  embedding?: { values?: unknown };
}

/** The `batchEmbedContents` body for `request`; `modelPath` is `models/{model}`. Throws 400 for token-id input. */
export function toBatchEmbedRequest(request: EmbeddingRequest, modelPath: string, providerName: string): unknown {
  const texts = textInputs(request, providerName);
  return {
    requests: texts.map((text) => ({
      model: modelPath,
      content: { parts: [{ text }] },
      ...(request.dimensions !== null ? { outputDimensionality: request.dimensions } : {}),
    })),
  };
}

function valuesOf(provider: string, embedding: { values?: unknown } | undefined): number[] {
  const values = embedding?.values;
  if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) throw malformedResponse(provider, 'an embedding without numeric "values"');
  return values;
}

/** A `batchEmbedContents` answer as canonical vectors (no usage: Gemini reports none). Throws 502 when malformed. */
export function decodeBatchEmbed(provider: string, model: string, bodyText: string): EmbeddingResult {
  const answer = parseUpstreamJson<BatchEmbedContentsResponse>(provider, bodyText, 'an embeddings answer');
  if (!answer || !Array.isArray(answer.embeddings)) throw malformedResponse(provider, 'an embeddings answer without "embeddings"');
  return { vectors: answer.embeddings.map((embedding) => valuesOf(provider, embedding)), model, promptTokens: null };
}

/** An `embedContent` answer (`{embedding: {values}}`) as one canonical vector, no usage. Throws 502 when malformed. */
export function decodeEmbedContent(provider: string, model: string, bodyText: string): EmbeddingResult {
  const answer = parseUpstreamJson<EmbedContentResponse>(provider, bodyText, 'an embeddings answer');
  if (!answer || typeof answer.embedding !== 'object') throw malformedResponse(provider, 'an embeddings answer without "embedding"');
  return { vectors: [valuesOf(provider, answer.embedding)], model, promptTokens: null };
}

/**
 * A client's `embedContent` or `batchEmbedContents` body with the model each request names (if any,
 * for `embedContent`; always, for a batch, where Gemini requires it) set to `modelPath` (`models/<id>`).
 */
export function withRequestModels(body: Readonly<Record<string, unknown>>, modelPath: string): Readonly<Record<string, unknown>> {
  if (Array.isArray(body.requests)) {
    return Object.assign({}, body, { requests: (body.requests as Array<Record<string, unknown>>).map((request) => Object.assign({}, request, { model: modelPath })) });
  }
  return typeof body.model === 'string' ? Object.assign({}, body, { model: modelPath }) : body;
}
