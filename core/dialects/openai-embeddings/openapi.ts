/**
 * The OpenAPI description of `POST /api/v1/embeddings`: the request schema converted from the very
 * schema the dialect validates with, examples, OpenAI's `CreateEmbeddingResponse`, and when each
 * error status happens. Shapes after openai-node `src/resources/embeddings.ts` and
 * https://platform.openai.com/docs/api-reference/embeddings .
 */
import type { JsonSchema } from '../../json-schema.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { responseHeaders } from '../../openapi/openapi-errors.ts';
import type { RouteDoc } from '../../routes.ts';
import { embeddingRequestSchema } from './request-schema.ts';

const EMBEDDING_REQUEST = 'EmbeddingRequest';
const EMBEDDING_RESPONSE = 'CreateEmbeddingResponse';
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const responseSchema: JsonSchema = {
  type: 'object',
  required: ['object', 'data', 'model', 'usage'],
  properties: {
    object: { const: 'list', description: 'Always "list".' },
    data: {
      type: 'array',
      description: 'One embedding per input, in input order.',
      items: {
        type: 'object',
        required: ['object', 'index', 'embedding'],
        properties: {
          object: { const: 'embedding', description: 'Always "embedding".' },
          index: { type: 'integer', description: 'Position of the input this vector embeds.' },
          embedding: {
            description: 'The vector: numbers with encoding_format "float", a base64 string of little-endian float32 values with "base64".',
            anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string' }],
          },
        },
      },
    },
    model: { type: 'string', description: 'The model that embedded the inputs.' },
    usage: {
      type: 'object',
      required: ['prompt_tokens', 'total_tokens'],
      description: 'Input tokens (counted by the gateway when the provider reports none, e.g. Gemini). total_tokens = prompt_tokens: embeddings generate nothing.',
      properties: {
        prompt_tokens: { type: 'integer', description: 'Input tokens billed.' },
        total_tokens: { type: 'integer', description: 'Equal to prompt_tokens.' },
      },
    },
  },
};

const RESPONSE_EXAMPLE = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0023064255, -0.009327292, 0.015797347] }],
  model: 'text-embedding-3-small',
  usage: { prompt_tokens: 8, total_tokens: 8 },
};

export const embeddingsCreateDoc: RouteDoc = {
  operationId: 'createEmbedding',
  tag: { name: 'Embeddings', description: 'OpenAI-compatible embeddings, proxied to the provider.' },
  summary: 'Create embeddings',
  description: 'OpenAI-compatible (`client.embeddings.create`). `model` is `provider/model` or a bare model id resolved through the catalog. OpenAI and OpenAI-compatible providers get the body unchanged (only the model and the credential replaced); Gemini (`batchEmbedContents`), Mistral and Ollama (`/api/embed`) get it translated, and take text only (token-id inputs are refused with a 400). Anthropic has no embeddings API (400). Billed on input tokens at the model\'s input price; the input tokens are reserved against the caller\'s budget and token limit first. Never streamed.',
  requestBody: {
    required: true,
    description: 'OpenAI embeddings request. Fields not listed here are forwarded to a native upstream untouched.',
    content: {
      'application/json': {
        schema: schemaRef(EMBEDDING_REQUEST),
        examples: {
          one: { summary: 'One text', value: { model: 'openai/text-embedding-3-small', input: 'The food was delicious.' } },
          batch: { summary: 'Several texts, shorter vectors, base64', value: { model: 'gemini/gemini-embedding-001', input: ['first text', 'second text'], dimensions: 256, encoding_format: 'base64' } },
        },
      },
    },
  },
  success: {
    description: 'The vectors, one per input, and the input tokens billed. Carries the `x-ratelimit-*` headers of the limits that apply to the caller.',
    headers: responseHeaders(true),
    content: { 'application/json': { schema: schemaRef(EMBEDDING_RESPONSE), example: RESPONSE_EXAMPLE } },
  },
  errors: {
    400: 'The body is malformed JSON or breaks the request schema (`invalid_request`, `param` names the field: an empty `input`, more than 2048 inputs, a `dimensions` that is not a positive integer, an `encoding_format` other than "float" or "base64", `stream`); token-id input for a provider that embeds text only (param `input`); a provider without an embeddings API, e.g. Anthropic (param `model`); the `model` prefix names no provider; the provider has no credential for the caller. An upstream\'s own 4xx is passed on with its status and type `upstream_error`.',
    402: 'The caller\'s budget cannot cover the input tokens at the model\'s input price; the message says when the budget resets. Not retryable before then (`x-should-retry: false`).',
    403: 'The key\'s gateway user is disabled, or the model is not allowed for the key.',
    404: 'The provider is known but the model is not (`model_not_found`, param `model`).',
    413: 'The body is larger than the gateway\'s `server.maxBodyBytes`.',
    429: 'The caller\'s requests-per-minute or tokens-per-minute limit is spent; retry after `Retry-After` seconds (`retry-after-ms` milliseconds).',
    502: 'The upstream answered with a 5xx, could not be reached, or sent something unreadable (type `upstream_error`).',
    503: 'The gateway is shutting down (`shutting_down`), or no upstream can take the request now (`upstream_unavailable`, type `upstream_error`: every key of the provider\'s pool is disabled after the upstream refused it on two models, or a recovering deployment\'s one probe is already out); retry after `Retry-After`.',
    504: 'The upstream did not connect or answer within its timeout (`upstream_timeout`).',
  },
  schemas: {
    [EMBEDDING_REQUEST]: toJsonSchema2020(embeddingRequestSchema, { basePointer: `#/components/schemas/${EMBEDDING_REQUEST}` }),
    [EMBEDDING_RESPONSE]: toJsonSchema2020(responseSchema, { basePointer: `#/components/schemas/${EMBEDDING_RESPONSE}` }),
  },
};
