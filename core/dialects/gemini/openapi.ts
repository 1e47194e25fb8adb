/**
 * The OpenAPI descriptions of the Gemini routes (`generateContent`, `streamGenerateContent`,
 * `countTokens`, `embedContent`, `batchEmbedContents`, the model list), with the request schemas the
 * dialect validates with, after https://ai.google.dev/api/generate-content ,
 * https://ai.google.dev/api/tokens , https://ai.google.dev/api/embeddings and https://ai.google.dev/api/models .
 */
import type { JsonSchema } from '../../json-schema.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { jsonOk, responseHeaders } from '../../openapi/openapi-errors.ts';
import type { RouteDoc } from '../../routes.ts';
import { countTokensRequestSchema, generateContentRequestSchema } from './request-schema.ts';
import { batchEmbedContentsRequestSchema, embedContentRequestSchema } from './embed.ts';

const GENERATE_REQUEST = 'GeminiGenerateContentRequest';
const COUNT_REQUEST = 'GeminiCountTokensRequest';
const RESPONSE = 'GeminiGenerateContentResponse';
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const TAG = { name: 'Gemini', description: 'Google Gemini API (Gemini CLI, the Google Gen AI SDK). Base URL for the SDKs: <gateway>/api.' };

const modelParameter = {
  name: 'model', in: 'path', required: true, schema: { type: 'string' },
  description: '"provider/model" (e.g. "gemini/gemini-2.5-flash") or a bare model id; the SDKs send "models/<id>:<action>".',
};

const responseSchema: JsonSchema = {
  type: 'object',
  required: ['candidates', 'modelVersion', 'responseId'],
  properties: {
    candidates: {
      type: 'array',
      description: 'One candidate: content.parts (text, thought text, functionCall) and finishReason.',
      items: { type: 'object', properties: { content: { type: 'object', description: 'role "model" and its parts.' }, finishReason: { type: 'string', description: 'STOP, MAX_TOKENS, SAFETY, ...' }, index: { type: 'integer', description: 'Always 0.' } } },
    },
    usageMetadata: {
      type: 'object',
      description: 'Token counts: candidatesTokenCount excludes thoughtsTokenCount; cachedContentTokenCount is part of promptTokenCount.',
      properties: {
        promptTokenCount: { type: 'integer', description: 'Prompt tokens.' },
        candidatesTokenCount: { type: 'integer', description: 'Answer tokens.' },
        thoughtsTokenCount: { type: 'integer', description: 'Thinking tokens.' },
        cachedContentTokenCount: { type: 'integer', description: 'Prompt tokens read from a cache.' },
        totalTokenCount: { type: 'integer', description: 'All of them.' },
      },
    },
    modelVersion: { type: 'string', description: 'The model that answered.' },
    responseId: { type: 'string', description: 'The answer\'s id.' },
  },
};

const schemas = {
  [GENERATE_REQUEST]: toJsonSchema2020(generateContentRequestSchema),
  [RESPONSE]: responseSchema,
};

const errors = {
  400: {
    when: 'The body is not a valid request, or names something the target provider cannot be sent (translated).',
    example: { code: 'invalid_request', message: 'Invalid value for "tools[0].googleSearch": Gemini\'s own "googleSearch" tool cannot be translated to the gateway\'s canonical request.', param: 'tools[0].googleSearch' },
  },
};

export const generateContentDoc: RouteDoc = {
  operationId: 'geminiGenerateContent',
  summary: 'Generate content (Gemini API)',
  description: 'Gemini\'s generateContent: passed through to a Gemini upstream, translated for any other. Errors in Google\'s shape {"error":{"code","message","status"}}.',
  tag: TAG,
  parameters: [modelParameter],
  requestBody: { required: true, content: { 'application/json': { schema: schemaRef(GENERATE_REQUEST) } } },
  success: { description: 'The answer: one GenerateContentResponse with its usageMetadata.', headers: responseHeaders(true), content: { 'application/json': { schema: schemaRef(RESPONSE) } } },
  errors,
  schemas,
};

export const streamGenerateContentDoc: RouteDoc = {
  operationId: 'geminiStreamGenerateContent',
  summary: 'Stream generated content (Gemini API)',
  description: 'Gemini\'s streamGenerateContent: with ?alt=sse, server-sent events each carrying a GenerateContentResponse; without it, one JSON array of them.',
  tag: TAG,
  parameters: [modelParameter, { name: 'alt', in: 'query', required: false, schema: { type: 'string' }, description: '"sse" for server-sent events.' }],
  requestBody: { required: true, content: { 'application/json': { schema: schemaRef(GENERATE_REQUEST) } } },
  success: { description: 'The answer, streamed: GenerateContentResponse events, usageMetadata on the last.', headers: responseHeaders(true), content: { 'text/event-stream': { schema: { type: 'string' } } } },
  errors,
  schemas,
};

export const countTokensDoc: RouteDoc = {
  operationId: 'geminiCountTokens',
  summary: 'Count tokens (Gemini API)',
  description: 'Counts the prompt\'s tokens: by Gemini when the target speaks it, else by the gateway\'s tokenizer. Never billed.',
  tag: TAG,
  parameters: [modelParameter],
  requestBody: { required: true, content: { 'application/json': { schema: schemaRef(COUNT_REQUEST) } } },
  success: { description: 'The prompt\'s token count, {"totalTokens": n}.', headers: responseHeaders(true), content: { 'application/json': { schema: { type: 'object', required: ['totalTokens'], properties: { totalTokens: { type: 'integer', description: 'Prompt tokens.' } } } } } },
  errors,
  schemas: { [COUNT_REQUEST]: toJsonSchema2020(countTokensRequestSchema) },
};

const embeddingSchema: JsonSchema = {
  type: 'object', required: ['values'],
  properties: { values: { type: 'array', items: { type: 'number' }, description: 'The vector.' } },
};

const embedErrors = {
  400: {
    when: 'The body is not a valid request, or names what an OpenAI-style embeddings upstream cannot take (taskType, title, a non-text part; translated).',
    example: { code: 'invalid_request', message: 'Invalid value for "taskType": it is Gemini\'s own and has no OpenAI-style embeddings counterpart; leave it out, or use a Gemini model.', param: 'taskType' },
  },
};

export const embedContentDoc: RouteDoc = {
  operationId: 'geminiEmbedContent',
  summary: 'Embed content (Gemini API)',
  description: 'Gemini\'s embedContent: one vector for the content\'s text. Passed through to a Gemini upstream, translated to an OpenAI-style embeddings call for any other (outputDimensionality as dimensions). Billed on the input tokens, counted locally when the upstream reports none (Gemini).',
  tag: TAG,
  parameters: [modelParameter],
  requestBody: { required: true, content: { 'application/json': { schema: schemaRef('GeminiEmbedContentRequest') } } },
  success: { description: 'The vector, {"embedding": {"values": [...]}}.', headers: responseHeaders(true), content: { 'application/json': { schema: { type: 'object', required: ['embedding'], properties: { embedding: embeddingSchema } } } } },
  errors: embedErrors,
  schemas: { GeminiEmbedContentRequest: toJsonSchema2020(embedContentRequestSchema) },
};

export const batchEmbedContentsDoc: RouteDoc = {
  operationId: 'geminiBatchEmbedContents',
  summary: 'Embed contents in a batch (Gemini API)',
  description: 'Gemini\'s batchEmbedContents (what @google/genai\'s models.embedContent calls): one vector per request, in order. Passed through to a Gemini upstream (each request\'s model set to the routed one), translated for any other.',
  tag: TAG,
  parameters: [modelParameter],
  requestBody: { required: true, content: { 'application/json': { schema: schemaRef('GeminiBatchEmbedContentsRequest') } } },
  success: { description: 'The vectors, {"embeddings": [{"values": [...]}]}.', headers: responseHeaders(true), content: { 'application/json': { schema: { type: 'object', required: ['embeddings'], properties: { embeddings: { type: 'array', items: embeddingSchema } } } } } },
  errors: embedErrors,
  schemas: { GeminiBatchEmbedContentsRequest: toJsonSchema2020(batchEmbedContentsRequestSchema) },
};

const modelSchema: JsonSchema = {
  type: 'object', required: ['name', 'displayName', 'supportedGenerationMethods'],
  properties: {
    name: { type: 'string', description: '"models/<id>", the id being what clients send back ("provider/model" or a manifest model name).' },
    baseModelId: { type: 'string', description: 'The upstream\'s own model id.' },
    displayName: { type: 'string', description: 'A human-readable name.' },
    supportedGenerationMethods: { type: 'array', items: { type: 'string' }, description: 'embedContent and batchEmbedContents for an embedding model, else generateContent, streamGenerateContent and countTokens.' },
  },
};

export const listModelsDoc: RouteDoc = {
  operationId: 'geminiListModels',
  summary: 'List models (Gemini API)',
  description: 'The models the caller\'s key may use (the catalog of GET /v1/models), in Google\'s shape, paged: pageSize (default 50, at most 1000) and the pageToken of the previous page\'s nextPageToken.',
  tag: TAG,
  parameters: [
    { name: 'pageSize', in: 'query', required: false, schema: { type: 'integer' }, description: 'Models per page (default 50, at most 1000).' },
    { name: 'pageToken', in: 'query', required: false, schema: { type: 'string' }, description: 'The previous page\'s nextPageToken.' },
  ],
  success: jsonOk('A page of the models the key may use, and the token of the next page when one follows.', 'GeminiModelList'),
  errors: { 400: { when: 'pageSize is not a whole number, or pageToken is not one this gateway gave.', example: { code: 'invalid_request', message: '"pageToken" is not a token this gateway gave; send the "nextPageToken" of the previous page.', param: 'pageToken' } } },
  schemas: {
    GeminiModel: modelSchema,
    GeminiModelList: {
      type: 'object', required: ['models'],
      properties: { models: { type: 'array', items: schemaRef('GeminiModel'), description: 'This page\'s models.' }, nextPageToken: { type: 'string', description: 'Present when more pages follow.' } },
    },
  },
};

export const getModelDoc: RouteDoc = {
  operationId: 'geminiGetModel',
  summary: 'Get a model (Gemini API)',
  description: 'One model of the list, by its id ("provider/model", a manifest model name, or a bare id exactly one provider lists); the SDKs send "models/<id>".',
  tag: TAG,
  parameters: [modelParameter],
  success: jsonOk('The model, in Google\'s Model shape (name "models/<id>").', 'GeminiModel'),
  errors: {
    404: { when: 'No provider lists this model (NOT_FOUND).', example: { code: 'model_not_found', message: 'The model "gemini-9" does not exist or is not available. GET /api/v1beta/models lists the models you can use.', param: null } },
  },
  schemas: { GeminiModel: modelSchema },
};
