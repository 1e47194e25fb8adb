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
 * with a provider prefix is ~120 characters). The name an upstream answers with is kept the same way,
 * so it is cut to the same length (`servedModelName`).
 */
import type { JsonSchema } from '../json-schema.ts';
import { ownString } from '../runtime/own-string.ts';

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

/**
 * The model an upstream says it served (`ex.modelServed`), as the gateway keeps it: at most
 * `MAX_MODEL_CHARS` characters, cut (a copy, not a slice that would keep the upstream's whole answer
 * alive); null for none. A broken or hostile upstream answering with megabyte names must not fill the
 * price book's cache, the metrics' tallies and the log with them.
 */
export function servedModelName(name: string | null | undefined): string | null {
  if (!name) return null;
  return name.length <= MAX_MODEL_CHARS ? name : ownString(name.slice(0, MAX_MODEL_CHARS));
}
