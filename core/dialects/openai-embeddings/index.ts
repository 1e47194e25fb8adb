/**
 * The `openai-embeddings` dialect: OpenAI's embeddings API (`POST /api/v1/embeddings`, operation
 * `embeddings.create`), what `client.embeddings.create` of the openai SDKs speaks. The body is checked
 * (`input-check.ts`, `request-schema.ts`) and normalized to the canonical `EmbeddingRequest`
 * (`core/canonical/embedding-types.ts`), which is the exchange's canonical request (`Exchange.request`):
 * the router, the log and the accounting plugins read its `model`, and count its inputs as prompt
 * tokens and no output (`core/tokens/worst-case.ts`). Never streamed: `stream` is refused.
 *
 * OpenAI and OpenAI-compatible upstreams speak it natively (the body goes with only `model`
 * replaced, the answer comes back byte for byte); other providers translate the canonical call
 * (`Provider.buildEmbeddingCall`) and their answer is rendered here (`render.ts`). Errors
 * take OpenAI's body, as in the `openai-chat` dialect.
 *
 * Sources: https://platform.openai.com/docs/api-reference/embeddings ; openai-node
 * `src/resources/embeddings.ts` (the default `encoding_format: "base64"` and its decoding).
 */
import { createBodyValidator } from '../../http/request-body.ts';
import { invalidRequest } from '../../errors.ts';
import type { EmbeddingRequest } from '../../canonical/embedding-types.ts';
import { mapItems, withField } from '../../canonical/text-map.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { openAIErrorBody } from '../openai-chat/index.ts';
import { embeddingInputs } from './input-check.ts';
import { embeddingRequestSchema } from './request-schema.ts';
import { embeddingsCreateDoc } from './openapi.ts';
import { createOpenAIEmbeddingsRenderer } from './render.ts';

/** Operation of `POST /api/v1/embeddings`. */
export const EMBEDDINGS_CREATE = 'embeddings.create';

interface EmbeddingBody {
  model: string;
  input: unknown;
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  [field: string]: unknown;
}

const validateEmbeddings = createBodyValidator<EmbeddingBody>(embeddingRequestSchema);

/** Validates a body and maps it to the canonical embeddings call. Throws 400 naming the field. */
export function parseEmbeddingBody(json: unknown): { body: EmbeddingBody; embedding: EmbeddingRequest } {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw invalidRequest('The request body must be a JSON object.');
  const raw = json as Record<string, unknown>;
  // Not even `stream: false`: it is no field of OpenAI's embeddings API, which would refuse it upstream.
  if (raw.stream !== undefined) {
    throw invalidRequest('Embeddings are not streamed; leave out "stream".', 'stream');
  }
  // A missing or bad model is the schema's 400 (naming "model"), before anything about the input.
  if (typeof raw.model !== 'string' || raw.model === '') validateEmbeddings(json);
  const input = embeddingInputs(raw.input);
  const body = validateEmbeddings(json);
  return {
    body,
    embedding: { model: body.model, input, dimensions: body.dimensions ?? null, encodingFormat: body.encoding_format ?? 'float' },
  };
}

export const openAIEmbeddings: Dialect = {
  id: 'openai-embeddings',
  routes: [{ method: 'POST', path: '/api/v1/embeddings', operation: EMBEDDINGS_CREATE, hasBody: true, doc: embeddingsCreateDoc }],
  passthroughHeaders: ['openai-beta'],
  streamContentType: 'application/json',
  parseRequest(json: unknown): ParsedRequest {
    const { body, embedding } = parseEmbeddingBody(json);
    return { canonical: embedding, body, stream: false, wantsStreamUsage: false };
  },
  errorBody: openAIErrorBody,
  createRenderer: createOpenAIEmbeddingsRenderer,
  // An embeddings call generates nothing, so there is no output limit to lower.
  capOutput: (body) => body,
  mapRequestText: (body, fn) => {
    const { input } = body;
    if (typeof input === 'string') return withField(body, 'input', fn(input));
    return Array.isArray(input) ? withField(body, 'input', mapItems(input as unknown[], (item) => (typeof item === 'string' ? fn(item) : item))) : body;
  },
};
