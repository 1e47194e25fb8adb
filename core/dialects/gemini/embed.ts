/**
 * Gemini's embeddings methods in the `gemini` dialect: `POST /api/v1beta/models/{model}:embedContent`
 * (`{content, taskType?, title?, outputDimensionality?}` → `{embedding: {values}}`) and
 * `:batchEmbedContents` (`{requests: [EmbedContentRequest]}` → `{embeddings: [{values}]}`, what
 * `@google/genai`'s `models.embedContent` calls). Each body is mapped to the canonical embeddings call
 * (`EmbeddingRequest`, one input per `content`, its text parts joined by newlines), which the router,
 * the accounting plugins and the log read as for `POST /api/v1/embeddings`; a native Gemini upstream
 * gets the body itself (`Provider.buildNativeCall`).
 *
 * A translated call (OpenAI-style embeddings) carries only the text and `outputDimensionality` (as
 * `dimensions`, one value for the whole batch): anything else (`taskType`, `title`, non-text parts,
 * differing dimensions) is the 400 naming the field (`ParsedRequest.untranslatable`).
 *
 * Sources: https://ai.google.dev/api/embeddings (`EmbedContentRequest`, `ContentEmbedding`,
 * `BatchEmbedContentsRequest`); `@google/genai` `embedContentParametersPrivateToMldev`.
 */
import { invalidRequest, type GatewayError } from '../../errors.ts';
import type { EmbeddingRequest, EmbeddingResult } from '../../canonical/embedding-types.ts';
import { mapItems, withField, type TextMap } from '../../canonical/text-map.ts';
import type { JsonSchema } from '../../json-schema.ts';
import { createBodyValidator } from '../../http/request-body.ts';
import { MAX_EMBEDDING_INPUTS } from '../openai-embeddings/request-schema.ts';

/** Operation of `POST /api/v1beta/models/{model}:embedContent`. */
export const GEMINI_EMBED_CONTENT = 'gemini.embedContent';
/** Operation of `POST /api/v1beta/models/{model}:batchEmbedContents`. */
export const GEMINI_BATCH_EMBED_CONTENTS = 'gemini.batchEmbedContents';

type Json = Record<string, unknown>;

/** One `EmbedContentRequest` as the dialect reads it. */
interface EmbedContentRequest {
  model?: string;
  content: { parts: Json[]; role?: string };
  taskType?: string;
  title?: string;
  outputDimensionality?: number;
  [field: string]: unknown;
}

const embedProperties: Record<string, JsonSchema> = {
  model: { type: 'string', description: '"models/<id>"; in a batch, each request names the model of the path.' },
  content: {
    type: 'object',
    required: ['parts'],
    properties: {
      parts: {
        type: 'array', minItems: 1,
        items: { type: 'object', properties: { text: { type: 'string', description: 'Text to embed.' } } },
        description: 'The parts embedded together into one vector; text parts are translated.',
      },
    },
    description: 'The content to embed.',
  },
  taskType: { type: 'string', description: 'RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, SEMANTIC_SIMILARITY, ... (Gemini only).' },
  title: { type: 'string', description: 'The document\'s title, with RETRIEVAL_DOCUMENT (Gemini only).' },
  outputDimensionality: { type: 'integer', minimum: 1, description: 'Length of the vector (OpenAI\'s "dimensions" when translated).' },
};

/** `POST /v1beta/models/{model}:embedContent`. */
export const embedContentRequestSchema: JsonSchema = { type: 'object', required: ['content'], properties: embedProperties };

/** `POST /v1beta/models/{model}:batchEmbedContents`. */
export const batchEmbedContentsRequestSchema: JsonSchema = {
  type: 'object',
  required: ['requests'],
  properties: {
    requests: {
      type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS,
      items: { type: 'object', required: ['content'], properties: embedProperties },
      description: 'One EmbedContentRequest per vector wanted.',
    },
  },
};

const validateEmbed = createBodyValidator<EmbedContentRequest>(embedContentRequestSchema);
const validateBatch = createBodyValidator<{ requests: EmbedContentRequest[] }>(batchEmbedContentsRequestSchema);

/** Fields of an `EmbedContentRequest` a translated call carries (`model` is the path's). */
const TRANSLATED_FIELDS = new Set(['model', 'content', 'outputDimensionality']);

/** A request's text, and the first thing about it a translation cannot carry (or null). */
function readRequest(request: EmbedContentRequest, at: string): { text: string; untranslatable: GatewayError | null } {
  let untranslatable: GatewayError | null = null;
  const texts: string[] = [];
  request.content.parts.forEach((part, i) => {
    if (typeof part.text === 'string' && Object.keys(part).length === 1) texts.push(part.text);
    else untranslatable ??= notTranslated(`${at}content.parts[${i}]`, 'only text parts can be embedded by a provider other than Gemini');
  });
  const text = texts.join('\n');
  if (text === '' && texts.length === request.content.parts.length) {
    throw invalidRequest(`"${at}content" has no text to embed; send at least one non-empty text part.`, `${at}content`);
  }
  for (const field of Object.keys(request)) {
    if (!TRANSLATED_FIELDS.has(field)) untranslatable ??= notTranslated(`${at}${field}`, 'it is Gemini\'s own and has no OpenAI-style embeddings counterpart');
  }
  return { text, untranslatable };
}

function notTranslated(field: string, why: string): GatewayError {
  return invalidRequest(`Invalid value for "${field}": ${why}; leave it out, or use a Gemini model.`, field);
}

/**
 * A Gemini embeddings body (`operation`: `GEMINI_EMBED_CONTENT` or `GEMINI_BATCH_EMBED_CONTENTS`) as
 * the canonical call for `model`, with the 400 a translation of it gives (null when none). Throws 400
 * naming the field when the body breaks the schema or has no text.
 */
export function parseEmbedBody(json: unknown, operation: string, model: string): { body: Json; embedding: EmbeddingRequest; untranslatable: GatewayError | null } {
  const batch = operation === GEMINI_BATCH_EMBED_CONTENTS;
  const requests = batch ? validateBatch(json).requests : [validateEmbed(json)];
  const input: string[] = [];
  let untranslatable: GatewayError | null = null;
  requests.forEach((request, i) => {
    const read = readRequest(request, batch ? `requests[${i}].` : '');
    input.push(read.text);
    untranslatable ??= read.untranslatable;
  });
  const dimensions = requests[0]!.outputDimensionality ?? null;
  const differing = requests.findIndex((request) => (request.outputDimensionality ?? null) !== dimensions);
  if (differing !== -1) untranslatable ??= notTranslated(`requests[${differing}].outputDimensionality`, 'a translated batch has one vector length for all its requests');
  return { body: json as Json, embedding: { model, input, dimensions, encodingFormat: 'float' }, untranslatable };
}

/** The answer to `operation` for canonical vectors: `{embedding: {values}}` or `{embeddings: [{values}]}`. */
export function renderEmbeddings(operation: string, result: EmbeddingResult): string {
  if (operation === GEMINI_BATCH_EMBED_CONTENTS) return JSON.stringify({ embeddings: result.vectors.map((values) => ({ values })) });
  return JSON.stringify({ embedding: { values: result.vectors[0] ?? [] } });
}

function mapContent(request: Json, fn: TextMap): Json {
  const content = request.content as Json | undefined;
  if (!content || !Array.isArray(content.parts)) return request;
  return withField(request, 'content', withField(content, 'parts', mapItems(content.parts as Json[], (part) =>
    typeof part?.text === 'string' ? withField(part, 'text', fn(part.text)) : part)));
}

/** The texts of an embeddings body mapped by `fn` (`Dialect.mapRequestText`): each `content`'s text parts. */
export function mapEmbedText(body: Readonly<Json>, fn: TextMap): Readonly<Json> {
  if (Array.isArray(body.requests)) return withField(body, 'requests', mapItems(body.requests as Json[], (request) => mapContent(request, fn)));
  return mapContent(body, fn);
}
