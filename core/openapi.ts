/**
 * The OpenAPI 3.1 document of the `/api` endpoints (CONTRACT.md "HTTP API" and "Errors"), served at
 * `GET /api/openapi.json`. Request bodies are converted from the very schemas the gateway validates
 * with (`chat-request-schema.ts`), so the document cannot drift from what is enforced; response bodies
 * come from `api-response-schemas.ts`. Everything but `servers` is static and built once.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonSchema } from './json-schema.ts';
import { chatCompletionRequestSchema } from './chat-request-schema.ts';
import { toJsonSchema2020 } from './json-schema-2020.ts';
import { responseSchemas } from './api-response-schemas.ts';
import { errorResponse, openApiHeaders, responseHeaders, type ErrorCase, type ErrorStatus } from './openapi-errors.ts';

/** An OpenAPI 3.1 document (the fields this module writes; see spec.openapis.org/oas/v3.1.0). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description: string }>;
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

const CHAT_REQUEST = 'ChatCompletionRequest';
/** Either scheme authenticates (OpenAPI: alternatives are separate entries). */
const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8')) as { version: string }).version;

const DESCRIPTION = `Tollgate's OpenAI-compatible API. Point an OpenAI SDK at \`<this server>/api/v1\` with a Tollgate API key.

**Authentication**: \`Authorization: Bearer <key>\` or \`x-api-key: <key>\`, a gateway user's API key (\`tollgate keys create\`). This document and \`/api/docs\` need none.

**Errors**: always \`{"error":{"message","type","code","param"}}\`; each operation lists the statuses it can return and when. After a stream's headers are sent, an error arrives as a final \`data: {"error":{...}}\` event and the stream ends.

**Units**: money in USD (decimal numbers), tokens as integers, durations in milliseconds unless a field says otherwise. Every response carries \`x-request-id\`; quote it when reporting a problem.`;

/** Statuses every authenticated pipeline operation can return, with when. */
const COMMON_ERRORS: Partial<Record<ErrorStatus, ErrorCase>> = {
  401: 'The API key is missing, unknown, revoked or expired.',
  403: 'The key\'s gateway user is disabled.',
  500: 'Something unexpected failed inside the gateway; the details are in the server log under the x-request-id.',
  503: 'The gateway is shutting down; retry shortly (another instance, or this one after its restart).',
};

const SSE_EXAMPLE = [
  '{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
  '{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello!"},"finish_reason":null}]}',
  '{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
  '{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}',
  '[DONE]',
].map((data) => `data: ${data}\n\n`).join('');

const COMPLETION_EXAMPLE = {
  id: 'chatcmpl-123', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 } },
};

interface OperationSpec {
  path: string;
  method: 'get' | 'post';
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  parameters?: unknown[];
  requestBody?: unknown;
  success: Record<string, unknown>;
  /** Statuses beyond COMMON_ERRORS, or a different "when" for one of them. */
  errors: Partial<Record<ErrorStatus, ErrorCase>>;
}

const jsonOk = (description: string, schema: string) => ({
  description,
  headers: responseHeaders(false),
  content: { 'application/json': { schema: schemaRef(schema) } },
});

const OPERATIONS: OperationSpec[] = [
  {
    path: '/v1/chat/completions', method: 'post', operationId: 'createChatCompletion', tag: 'Chat',
    summary: 'Create a chat completion',
    description: 'OpenAI-compatible. `model` is `provider/model` (forwarded even when the catalog does not list it) or a bare model id resolved through the discovered catalog. With `stream: true` the answer is server-sent events of `chat.completion.chunk`s ending in `data: [DONE]`. The request is checked against the caller\'s rate limits and budget first; its worst-case cost is reserved and settled to the actual cost when the response ends.',
    requestBody: {
      required: true,
      description: 'OpenAI chat completion request. Fields not listed here are passed to the provider untouched.',
      content: {
        'application/json': {
          schema: schemaRef(CHAT_REQUEST),
          examples: {
            simple: { summary: 'One question', value: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] } },
            streaming: {
              summary: 'Streamed, with usage',
              value: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } },
            },
          },
        },
      },
    },
    success: {
      description: 'The completion: a JSON `chat.completion`, or with `stream: true` a `text/event-stream` whose every `data:` line holds one `ChatCompletionChunk` (the last one carries `usage` when `stream_options.include_usage` is set), then `data: [DONE]`. Carries the `x-ratelimit-*` headers of the limits that apply to the caller.',
      headers: responseHeaders(true),
      content: {
        'application/json': { schema: schemaRef('ChatCompletion'), example: COMPLETION_EXAMPLE },
        'text/event-stream': {
          schema: { ...schemaRef('ChatCompletionChunk'), description: 'Server-sent events: each `data:` line is one ChatCompletionChunk as JSON; the stream ends with `data: [DONE]`, or after an error with a final `data: {"error":{...}}`.' },
          example: SSE_EXAMPLE,
        },
      },
    },
    errors: {
      400: 'The body is malformed JSON or breaks the request schema (`invalid_request`, `param` names the field); the `model` prefix names no provider (`provider_not_found`, param `model`); a bare model id is listed by several providers (the message names the candidates); the provider has no credential for the caller (`provider_not_configured`). An upstream\'s own 4xx (e.g. 400, 422) is passed on with its status and type `upstream_error`.',
      402: 'The caller\'s budget cannot cover the request\'s worst-case cost; the message says when the budget resets. Not retryable before then (`x-should-retry: false`).',
      403: 'The key\'s gateway user is disabled, or the model is not allowed for the key.',
      404: 'The provider is known but the model is not (`model_not_found`, param `model`): a bare id missing from the catalog, or the upstream\'s own "no such model".',
      413: 'The body is larger than the gateway\'s `server.maxBodyBytes`.',
      429: 'The caller\'s requests-per-minute or tokens-per-minute limit is spent; retry after `Retry-After` seconds (`retry-after-ms` milliseconds).',
      502: 'The upstream answered with a 5xx, could not be reached, or sent something unreadable (type `upstream_error`, the provider\'s code when it has one).',
      504: 'The upstream did not connect, answer or keep streaming within its timeout (`upstream_timeout`).',
    },
  },
  {
    path: '/v1/models', method: 'get', operationId: 'listModels', tag: 'Models',
    summary: 'List models (OpenAI format)',
    description: 'Every model of every provider as `provider/model` ids, in OpenAI\'s list shape, so OpenAI SDKs and tools can discover them.',
    success: jsonOk('Every model of every provider, each `id` being `provider/model`.', 'OpenAIModelList'),
    errors: {},
  },
  {
    path: '/models', method: 'get', operationId: 'listModelCatalog', tag: 'Models',
    summary: 'List models with display names and prices',
    description: 'Every model the gateway can route to, with a human-readable name and its per-1,000-token prices in USD (null when unpriced).',
    success: jsonOk('Every model with its display name and per-1,000-token prices (USD).', 'ModelList'),
    errors: {},
  },
  {
    path: '/providers/{provider}', method: 'get', operationId: 'getProvider', tag: 'Models',
    summary: 'Describe one provider',
    description: 'The provider, whether the caller can use it and with whose credential (their own or the shared one), and its models.',
    parameters: [{ name: 'provider', in: 'path', required: true, description: 'Provider id, e.g. `openai`, `anthropic`, or one declared in the manifest.', schema: { type: 'string' } }],
    success: jsonOk('The provider, whether the caller can use it, and its models.', 'Provider'),
    errors: {
      404: {
        when: 'No provider has this id (`provider_not_found`); the message lists the known providers.',
        example: { code: 'provider_not_found', message: 'Unknown provider "acme". Known providers: openai, anthropic, gemini, mistral, ollama.', param: null },
      },
    },
  },
  {
    path: '/account', method: 'get', operationId: 'getAccount', tag: 'Account',
    summary: 'The caller\'s account',
    description: 'The gateway user behind the key: identity, budget (limit, spent, reserved, remaining, period, when it resets), rate limits with what remains, and usage this budget period.',
    success: jsonOk('The caller\'s identity, budget, rate limits and usage this budget period.', 'Account'),
    errors: {},
  },
  {
    path: '/pricing', method: 'get', operationId: 'listPricing', tag: 'Pricing',
    summary: 'Model prices',
    description: 'Every priced model, per 1,000 and per 1,000,000 tokens in USD. Per-1k prices are the stored per-million prices / 1000.',
    success: jsonOk('Every priced model (rows without a model are never listed), prices in USD.', 'PricingList'),
    errors: {},
  },
];

function buildOperation(spec: OperationSpec): OpenApiOperation {
  const when = { ...COMMON_ERRORS, ...spec.errors };
  const statuses = (Object.keys(when).map(Number) as ErrorStatus[]).sort((a, b) => a - b);
  const responses: Record<string, unknown> = { 200: spec.success };
  for (const status of statuses) responses[status] = errorResponse(status, when[status]!);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    security: SECURITY,
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses,
  };
}

function buildStaticParts(): Omit<OpenApiDocument, 'servers'> {
  const paths: OpenApiDocument['paths'] = {};
  for (const spec of OPERATIONS) (paths[spec.path] ??= {})[spec.method] = buildOperation(spec);
  return {
    openapi: '3.1.0',
    info: { title: 'Tollgate API', version: PACKAGE_VERSION, description: DESCRIPTION },
    security: SECURITY,
    tags: [
      { name: 'Chat', description: 'OpenAI-compatible chat completions, proxied to the provider.' },
      { name: 'Models', description: 'Models and providers the gateway can route to.' },
      { name: 'Account', description: 'The caller\'s own budget, limits and usage.' },
      { name: 'Pricing', description: 'What each model costs.' },
    ],
    paths,
    components: {
      schemas: {
        [CHAT_REQUEST]: toJsonSchema2020(chatCompletionRequestSchema, { basePointer: `#/components/schemas/${CHAT_REQUEST}` }),
        ...responseSchemas,
      },
      headers: openApiHeaders,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A Tollgate API key as `Authorization: Bearer <key>` (what OpenAI SDKs send).' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same API key in an `x-api-key` header.' },
      },
    },
  };
}

let staticParts: Omit<OpenApiDocument, 'servers'> | null = null;

/**
 * The document for clients that reached the gateway at `origin` (`scheme://host[:port]`, no trailing
 * slash): `servers[0].url` is `<origin>/api`, so the paths read as under `/api`. Pass `''` for a
 * relative server URL (`/api`, resolved against where the document was fetched). Everything else is
 * built once and shared between calls: treat the result as read-only.
 */
export function buildOpenApiDocument(origin: string): OpenApiDocument {
  staticParts ??= buildStaticParts();
  return { ...staticParts, servers: [{ url: `${origin}/api`, description: 'This gateway, as your client reached it.' }] };
}
