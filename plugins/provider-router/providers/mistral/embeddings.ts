/**
 * Mistral embeddings: `POST {base}/embeddings`, OpenAI-shaped (`{model, input: string[],
 * output_dimension?}` → `{data: [{embedding, index}], model, usage: {prompt_tokens, total_tokens}}`).
 * Mistral's strict schema refuses unknown fields (422), so the body is built from this allow-list:
 * OpenAI's `dimensions` becomes `output_dimension`; `encoding_format` is never sent (older Mistral
 * deployments refuse it): the gateway asks for floats and encodes base64 itself when the client
 * wants it. Text only: token-id input is refused with a 400.
 *
 * Sources: https://docs.mistral.ai/api/endpoint/embeddings ; `@mistralai/mistralai`
 * `src/models/components/embeddingrequest.ts`, `embeddingresponse.ts`.
 */
import { textInputs, type EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';

/** The `POST /v1/embeddings` body for `request` sent to `model`. Throws 400 for token-id input. */
export function toMistralEmbeddingRequest(request: EmbeddingRequest, model: string, providerName: string): Record<string, unknown> {
  const input = textInputs(request, providerName);
  return { model, input, ...(request.dimensions !== null ? { output_dimension: request.dimensions } : {}) };
}
