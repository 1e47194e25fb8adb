/**
 * The OpenAPI descriptions of the Gemini routes (`generateContent`, `streamGenerateContent`,
 * `countTokens`), with the request schemas the dialect validates with, after
 * https://ai.google.dev/api/generate-content and https://ai.google.dev/api/tokens .
 */
import type { JsonSchema } from '../../json-schema.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { responseHeaders } from '../../openapi/openapi-errors.ts';
import type { RouteDoc } from '../../routes.ts';
import { countTokensRequestSchema, generateContentRequestSchema } from './request-schema.ts';

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
