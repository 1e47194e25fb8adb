/**
 * The `model` field of every dialect's request body (chat completions, Responses, embeddings,
 * Anthropic Messages and its token count): `"provider/model"` or a bare model id, 1 to
 * `MAX_MODEL_CHARS` characters; longer is a 400 `invalid_request` with `param: "model"` (CONTRACT.md).
 *
 * Why a bound: the name a client sends is kept by what the gateway tracks per model, beyond the
 * request (the price book's lookup cache, the router's per-deployment health, the metrics' model
 * tallies, the queued log rows). Unbounded, each distinct name pinned its whole length there: 2,000
 * requests of a budgeted user with 100,000-character names grew the price book's cache by ~200 MB, on
 * the way to the process's heap limit. Real model ids are far shorter (a Bedrock inference-profile ARN
 * with a provider prefix is ~120 characters).
 */
import type { JsonSchema } from '../json-schema.ts';

/** Longest `model` value a request may carry, characters. */
export const MAX_MODEL_CHARS = 256;

/** The `model` property's schema, with `example` (a `provider/model` of the dialect's usual provider) in its description. */
export function modelField(example: string): JsonSchema {
  return {
    type: 'string',
    minLength: 1,
    maxLength: MAX_MODEL_CHARS,
    description: `"provider/model" (e.g. "${example}") or a bare model id resolved through the catalog; at most ${MAX_MODEL_CHARS} characters.`,
  };
}
