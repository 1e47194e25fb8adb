/**
 * The OpenAPI description of `POST /api/v1/chat/completions`: request schema converted from the very
 * schema the dialect validates with (so the document cannot drift from what is enforced), examples,
 * the JSON and SSE answers, and when each error status happens.
 */
import type { RouteDoc } from '../../routes.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { responseHeaders } from '../../openapi/openapi-errors.ts';
import { chatCompletionRequestSchema } from './request-schema.ts';

const CHAT_REQUEST = 'ChatCompletionRequest';
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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

export const chatCompletionsDoc: RouteDoc = {
  operationId: 'createChatCompletion',
  tag: { name: 'Chat', description: 'OpenAI-compatible chat completions, proxied to the provider.' },
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
    503: 'The gateway is shutting down (`shutting_down`), or no upstream can take the request now (`upstream_unavailable`, type `upstream_error`: every key of the provider\'s pool is disabled after the upstream refused it on two models, or a recovering deployment\'s one probe is already out); retry after `Retry-After`.',
    504: 'The upstream did not connect, answer or keep streaming within its timeout (`upstream_timeout`).',
  },
  schemas: {
    [CHAT_REQUEST]: toJsonSchema2020(chatCompletionRequestSchema, { basePointer: `#/components/schemas/${CHAT_REQUEST}` }),
  },
};
