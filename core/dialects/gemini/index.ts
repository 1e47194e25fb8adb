/**
 * The `gemini` dialect: Google's Gemini API (`POST /api/v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent`, `:countTokens`, `:embedContent`, `:batchEmbedContents`, also under
 * `/api/v1/models/...` for clients set to API version v1; `GET /api/v1beta/models` and `/{model}`),
 * what Gemini CLI and every `@google/genai` app speak
 * (base URL `<gateway>/api`; the key in `x-goog-api-key`, `?key=` or Bearer). The model is the path's
 * `{model}` (the SDKs send `models/<id>`; a `provider/model` id keeps its slash). Requests are
 * validated (`request-schema.ts`) and mapped to the canonical request (`to-canonical.ts`); canonical
 * answers are rendered as `GenerateContentResponse`s (`render.ts`); the embeddings methods map to the
 * canonical embeddings call and back (`embed.ts`); errors take Google's body
 * (`errors.ts`). On a native Gemini upstream the client's body goes through unchanged.
 *
 * Sources: https://ai.google.dev/api/generate-content , https://ai.google.dev/api/tokens ,
 * https://ai.google.dev/api/embeddings ;
 * docs/provider-wire-formats.md §3; docs/architecture.md ("Dialects", "How to add a dialect").
 */
import { createBodyValidator } from '../../http/request-body.ts';
import { invalidRequest } from '../../errors.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { MAX_MODEL_CHARS } from '../model-field.ts';
import { geminiErrorBody } from './errors.ts';
import { GEMINI_BATCH_EMBED_CONTENTS, GEMINI_EMBED_CONTENT, mapEmbedText, parseEmbedBody } from './embed.ts';
import { batchEmbedContentsDoc, countTokensDoc, embedContentDoc, generateContentDoc, getModelDoc, listModelsDoc, streamGenerateContentDoc } from './openapi.ts';
import { GEMINI_MODELS_GET, GEMINI_MODELS_LIST } from './models.ts';
import type { RouteDeclaration } from '../../routes.ts';
import { createGeminiRenderer } from './render.ts';
import { countTokensRequestSchema, generateContentRequestSchema } from './request-schema.ts';
import { mapGeminiRequestText } from './text.ts';
import { toCanonical } from './to-canonical.ts';
import type { GenerateContentRequest } from './types.ts';

/** Operation of `POST /api/v1beta/models/{model}:generateContent`. */
export const GEMINI_GENERATE_CONTENT = 'gemini.generateContent';
/** Operation of `POST /api/v1beta/models/{model}:streamGenerateContent`. */
export const GEMINI_STREAM_GENERATE_CONTENT = 'gemini.streamGenerateContent';
/** Operation of `POST /api/v1beta/models/{model}:countTokens`. */
export const GEMINI_COUNT_TOKENS = 'gemini.countTokens';

const validateGenerate = createBodyValidator<GenerateContentRequest>(generateContentRequestSchema);
const validateCount = createBodyValidator<{ contents?: GenerateContentRequest['contents']; generateContentRequest?: GenerateContentRequest }>(countTokensRequestSchema);

export { geminiErrorBody } from './errors.ts';
export { GEMINI_BATCH_EMBED_CONTENTS, GEMINI_EMBED_CONTENT } from './embed.ts';
export { GEMINI_MODELS_GET, GEMINI_MODELS_LIST, geminiModelOf, geminiModelPage, type CatalogModel } from './models.ts';

const isEmbedOperation = (operation: string): boolean => operation === GEMINI_EMBED_CONTENT || operation === GEMINI_BATCH_EMBED_CONTENTS;

/** The path's model: `models/` (which the SDKs put before every id) taken off, bounded like every dialect's `model`. */
function modelOf(params: Readonly<Record<string, string>> | undefined): string {
  const model = (params?.model ?? '').replace(/^models\//, '');
  if (model === '' || model.length > MAX_MODEL_CHARS) {
    throw invalidRequest(`The model in the path must be 1 to ${MAX_MODEL_CHARS} characters.`, 'model');
  }
  return model;
}

/** The model methods, under `/api/v1beta` (the SDKs' default API version). */
const methodRoutes: readonly RouteDeclaration[] = [
  { method: 'POST', path: '/api/v1beta/models/{model+}:generateContent', operation: GEMINI_GENERATE_CONTENT, hasBody: true, doc: generateContentDoc },
  { method: 'POST', path: '/api/v1beta/models/{model+}:streamGenerateContent', operation: GEMINI_STREAM_GENERATE_CONTENT, hasBody: true, doc: streamGenerateContentDoc },
  { method: 'POST', path: '/api/v1beta/models/{model+}:countTokens', operation: GEMINI_COUNT_TOKENS, hasBody: true, kind: 'token-count', doc: countTokensDoc },
  { method: 'POST', path: '/api/v1beta/models/{model+}:embedContent', operation: GEMINI_EMBED_CONTENT, hasBody: true, doc: embedContentDoc },
  { method: 'POST', path: '/api/v1beta/models/{model+}:batchEmbedContents', operation: GEMINI_BATCH_EMBED_CONTENTS, hasBody: true, doc: batchEmbedContentsDoc },
];

/**
 * The same methods under `/api/v1`, where `@google/genai` sends them with `apiVersion: 'v1'`
 * (`${baseUrl}/${apiVersion}/models/{model}:{method}`). Only paths with a `:method`: a plain
 * `GET /api/v1/models` (and `/{id}`) stays OpenAI's list.
 */
const v1Aliases: readonly RouteDeclaration[] = methodRoutes.map((route) => Object.assign({}, route, {
  path: route.path.replace('/api/v1beta/', '/api/v1/'),
  doc: Object.assign({}, route.doc, {
    operationId: `${route.doc.operationId}V1`,
    summary: `${route.doc.summary}, v1 path`,
    description: `${route.doc.description} The same method as under /v1beta, for clients set to API version v1.`,
  }),
}));

export const gemini: Dialect = {
  id: 'gemini',
  routes: [
    ...methodRoutes,
    ...v1Aliases,
    { method: 'GET', path: '/api/v1beta/models', operation: GEMINI_MODELS_LIST, kind: 'catalog', doc: listModelsDoc },
    { method: 'GET', path: '/api/v1beta/models/{model+}', operation: GEMINI_MODELS_GET, kind: 'catalog', doc: getModelDoc },
  ],
  passthroughHeaders: [],
  // What Gemini CLI (GEMINI_API_KEY) and the Gen AI SDKs send; Bearer is accepted too.
  keyAdvice: '"x-goog-api-key: <key>" (GEMINI_API_KEY for Gemini CLI and the Gen AI SDKs) or "?key=<key>"',
  streamContentType: 'text/event-stream; charset=utf-8',
  parseRequest(json: unknown, operation: string, _headers, params): ParsedRequest {
    const model = modelOf(params);
    if (isEmbedOperation(operation)) {
      const { body, embedding, untranslatable } = parseEmbedBody(json, operation, model);
      return { canonical: embedding, body, stream: false, wantsStreamUsage: false, untranslatable };
    }
    if (operation === GEMINI_COUNT_TOKENS) {
      const body = validateCount(json);
      const counted = body.generateContentRequest ?? { contents: body.contents ?? [] };
      const { request, untranslatable } = toCanonical(counted, model, false);
      return { canonical: request, body, stream: false, wantsStreamUsage: false, untranslatable };
    }
    const body = validateGenerate(json);
    const stream = operation === GEMINI_STREAM_GENERATE_CONTENT;
    // Every Gemini stream carries usageMetadata, so a streaming client always wants usage.
    const { request, untranslatable } = toCanonical(body, model, stream);
    return { canonical: request, body, stream, wantsStreamUsage: stream, untranslatable };
  },
  errorBody: geminiErrorBody,
  createRenderer: createGeminiRenderer,
  tokenCountBody: (inputTokens) => ({ totalTokens: inputTokens }),
  // An embeddings body generates nothing: there is no output limit to lower.
  capOutput: (body, tokens) => ('contents' in body ? Object.assign({}, body, {
    generationConfig: Object.assign({}, body.generationConfig as Record<string, unknown> | undefined, { maxOutputTokens: tokens }),
  }) : body),
  mapRequestText: (body, fn) => ('contents' in body ? mapGeminiRequestText(body, fn) : mapEmbedText(body, fn)),
};
