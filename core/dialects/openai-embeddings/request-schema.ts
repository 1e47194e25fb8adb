/**
 * JSON Schema of `POST /v1/embeddings` bodies, following OpenAI's API reference
 * (https://platform.openai.com/docs/api-reference/embeddings/create ; openai-node
 * `EmbeddingCreateParams`): `input` is a string, an array of strings, an array of token ids or an
 * array of token-id arrays, none of them empty, at most 2048 inputs; `dimensions` a positive integer;
 * `encoding_format` `float` or `base64`. Other fields (`user`, a provider's own) pass through to a
 * native upstream untouched. The same schema feeds the OpenAPI document.
 *
 * `input` is checked by hand first (`input-check.ts`), for messages that say which form was meant;
 * the schema states the same rules for the document and as a second guard.
 */
import type { JsonSchema } from '../../json-schema.ts';
import { modelField } from '../model-field.ts';

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const tokenIds: JsonSchema = { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } };

export const embeddingRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: modelField('openai/text-embedding-3-small'),
    input: {
      description: `What to embed: a string, an array of strings, an array of token ids, or an array of token-id arrays (one vector per input). Not empty; at most ${MAX_EMBEDDING_INPUTS} inputs. Token ids go only to providers that take them (OpenAI and compatible servers).`,
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
        tokenIds,
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: tokenIds },
      ],
    },
    dimensions: { type: 'integer', minimum: 1, description: 'Length of the returned vectors, for models that can shorten them (OpenAI text-embedding-3, Gemini, Mistral codestral-embed, some Ollama models).' },
    encoding_format: { enum: ['float', 'base64'], description: '"float" (default): vectors as JSON numbers; "base64": each vector as base64 of little-endian float32 values (the openai SDK asks for this by default and decodes it).' },
    user: { type: 'string', description: 'An id of the end user, passed to OpenAI as it is.' },
  },
};
