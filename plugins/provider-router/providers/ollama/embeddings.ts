/**
 * Ollama embeddings: `POST {base}/api/embed` with `{model, input: string[], dimensions?, truncate:
 * true}` → `{model, embeddings: number[][], prompt_eval_count}`. `truncate: true` (Ollama's default,
 * sent explicitly) cuts an input longer than the model's context instead of failing, as OpenAI's
 * models do not: the vectors still come back one per input. Text only: token-id input is refused
 * with a 400. `prompt_eval_count` is the input tokens billed.
 *
 * Sources: https://docs.ollama.com/api/embed ; ollama-js `src/interfaces.ts` (`EmbedRequest`,
 * `EmbedResponse`).
 */
import { textInputs, type EmbeddingRequest, type EmbeddingResult } from '../../../../core/canonical/embedding-types.ts';
import { malformedResponse, parseUpstreamJson } from '../canonical.ts';
import { inBandError } from './errors.ts';

interface EmbedResponse {
  model?: unknown;
  embeddings?: unknown;
  prompt_eval_count?: unknown;
  error?: unknown;
}

/** The `/api/embed` body for `request` sent to `model`. Throws 400 for token-id input. */
export function toOllamaEmbedRequest(request: EmbeddingRequest, model: string, providerName: string): Record<string, unknown> {
  const input = textInputs(request, providerName);
  return { model, input, ...(request.dimensions !== null ? { dimensions: request.dimensions } : {}), truncate: true };
}

/** An `/api/embed` answer as canonical vectors. Throws 502 when it is malformed or an in-band error. */
export function decodeOllamaEmbed(provider: string, model: string, bodyText: string): EmbeddingResult {
  const answer = parseUpstreamJson<EmbedResponse>(provider, bodyText, 'an embeddings answer');
  if (answer?.error !== undefined) throw inBandError(provider, answer.error, 'to embed');
  const embeddings = answer?.embeddings;
  if (!Array.isArray(embeddings) || !embeddings.every((v) => Array.isArray(v) && v.every((x) => typeof x === 'number'))) {
    throw malformedResponse(provider, 'an embeddings answer without numeric "embeddings"');
  }
  return {
    vectors: embeddings,
    model: typeof answer.model === 'string' ? answer.model : model,
    promptTokens: typeof answer.prompt_eval_count === 'number' ? answer.prompt_eval_count : null,
  };
}
