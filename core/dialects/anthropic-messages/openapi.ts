/**
 * The OpenAPI descriptions of `POST /api/v1/messages` and `POST /api/v1/messages/count_tokens`: the
 * request schemas converted from the very schemas the dialect validates with (so the document cannot
 * drift from what is enforced), examples, the `message` JSON and the Messages event stream, and when
 * each error status happens. Shapes after https://platform.claude.com/docs/en/api/messages and
 * https://platform.claude.com/docs/en/api/messages-count-tokens (docs/provider-wire-formats.md §2).
 */
import type { JsonSchema } from '../../json-schema.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { responseHeaders } from '../../openapi/openapi-errors.ts';
import type { RouteDoc } from '../../routes.ts';
import { countTokensRequestSchema, messagesRequestSchema } from './request-schema.ts';

const MESSAGES_REQUEST = 'AnthropicMessagesRequest';
const COUNT_TOKENS_REQUEST = 'AnthropicCountTokensRequest';
const MESSAGE = 'AnthropicMessage';
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const TAG = { name: 'Messages', description: 'Anthropic Messages API (Claude Code, the Anthropic SDK).' };

const usageSchema: JsonSchema = {
  type: 'object',
  properties: {
    input_tokens: { type: 'integer', description: 'Prompt tokens that were neither read from nor written to the prompt cache.' },
    output_tokens: { type: 'integer', description: 'Generated tokens.' },
    cache_read_input_tokens: { type: 'integer', description: 'Prompt tokens read from the cache.' },
    cache_creation_input_tokens: { type: 'integer', description: 'Prompt tokens written to the cache.' },
  },
};

const messageSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'usage'],
  properties: {
    id: { type: 'string', description: '"msg_" + an id.' },
    type: { const: 'message', description: 'Always "message".' },
    role: { const: 'assistant', description: 'Always "assistant".' },
    model: { type: 'string', description: 'The model that answered.' },
    content: {
      type: 'array',
      description: 'Content blocks: "thinking", "text", "tool_use" (and, from a native Anthropic upstream, any other kind it sends).',
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string', description: 'The block kind.' } } },
    },
    stop_reason: { type: ['string', 'null'], description: '"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn" or "refusal".' },
    stop_sequence: { type: ['string', 'null'], description: 'The stop sequence that ended the answer, when one did.' },
    usage: { ...usageSchema, description: 'Token counts; input_tokens excludes cache reads and writes.' },
  },
};

const SSE_EXAMPLE = [
  ['message_start', '{"type":"message_start","message":{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}'],
  ['content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'],
  ['content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello!"}}'],
  ['content_block_stop', '{"type":"content_block_stop","index":0}'],
  ['message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":9,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'],
  ['message_stop', '{"type":"message_stop"}'],
].map(([event, data]) => `event: ${event}\ndata: ${data}\n\n`).join('');

const MESSAGE_EXAMPLE = {
  id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hello!' }], stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
};

const ERROR_SHAPE = 'The body has Anthropic\'s shape, `{"type":"error","error":{"type","message"}}`, with `error.type` following the status (e.g. `invalid_request_error`, `billing_error`, `rate_limit_error`).';

/** Errors common to both operations (the gateway's own checks, then the upstream's). */
const COMMON_ERRORS: RouteDoc['errors'] = {
  400: `The body is malformed JSON or breaks the request schema (the message names the field); a block or tool cannot be translated for a provider that does not speak the Messages API (e.g. a "document" block, a server tool); the \`model\` prefix names no provider; the provider has no credential for the caller. An upstream's own 4xx is passed on with its status. ${ERROR_SHAPE}`,
  404: `The model does not exist or is not available (\`not_found_error\`). ${ERROR_SHAPE}`,
  413: `The body is larger than the gateway's \`server.maxBodyBytes\` (\`request_too_large\`). ${ERROR_SHAPE}`,
  429: `The caller's requests-per-minute or tokens-per-minute limit is spent (\`rate_limit_error\`); retry after \`Retry-After\` seconds. ${ERROR_SHAPE}`,
  502: `The upstream answered with a 5xx, could not be reached, or sent something unreadable (\`api_error\`). ${ERROR_SHAPE}`,
  503: `The gateway is shutting down, or no upstream can take the request now: every key of the provider's pool is disabled after the upstream refused it on two models, or a recovering deployment's one probe is already out (\`overloaded_error\`); retry after \`Retry-After\`. ${ERROR_SHAPE}`,
  504: `The upstream did not connect, answer or keep streaming within its timeout (\`timeout_error\`). ${ERROR_SHAPE}`,
};

/** A message's errors: the budget too. */
const ERRORS: RouteDoc['errors'] = {
  ...COMMON_ERRORS,
  402: `The caller's budget cannot cover the request's worst-case cost (\`billing_error\`); the message says when the budget resets. ${ERROR_SHAPE}`,
};

/** A token count's errors: no budget (it bills nothing), and only the request and concurrency limits apply. */
const COUNT_TOKENS_ERRORS: RouteDoc['errors'] = {
  ...COMMON_ERRORS,
  429: `The caller's requests-per-minute limit is spent, or it has too many requests in flight (\`rate_limit_error\`): a count takes one request of the rpm and a concurrency slot, never tokens per minute; retry after \`Retry-After\` seconds. ${ERROR_SHAPE}`,
};

const requestExample = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Say hello' }] };

export const messagesCreateDoc: RouteDoc = {
  operationId: 'createMessage',
  tag: TAG,
  summary: 'Create a message (Anthropic Messages API)',
  description: 'Anthropic-compatible: point the Anthropic SDK or Claude Code at `<this server>/api` with a Tollgate key. `model` is `provider/model` or a bare model id resolved through the catalog. When the provider speaks the Messages API natively, the body and the `anthropic-version` / `anthropic-beta` headers are forwarded unchanged (only the model and the credential are replaced) and the upstream\'s answer comes back byte for byte; any other provider gets the request translated to its own format and its answer translated back. With `stream: true` the answer is server-sent Messages events. The request is checked against the caller\'s rate limits and budget first; its worst-case cost is reserved and settled to the actual cost when the response ends.',
  requestBody: {
    required: true,
    description: 'Messages API request. Fields not listed here are forwarded to a native upstream untouched and dropped when translating.',
    content: {
      'application/json': {
        schema: schemaRef(MESSAGES_REQUEST),
        examples: {
          simple: { summary: 'One question', value: requestExample },
          streaming: { summary: 'Streamed', value: { ...requestExample, stream: true } },
        },
      },
    },
  },
  success: {
    description: 'The answer: an Anthropic `message` as JSON, or with `stream: true` a `text/event-stream` of Messages events (`message_start`, `content_block_start` / `content_block_delta` / `content_block_stop` per block, `message_delta` with the stop reason and usage, `message_stop`). Carries the `x-ratelimit-*` headers of the limits that apply to the caller.',
    headers: responseHeaders(true),
    content: {
      'application/json': { schema: schemaRef(MESSAGE), example: MESSAGE_EXAMPLE },
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events, each `event: <type>` with `data:` holding the event as JSON. After an error the stream ends with `event: error` and `data: {"type":"error","error":{"type","message"}}`.' },
        example: SSE_EXAMPLE,
      },
    },
  },
  errors: ERRORS,
  schemas: {
    [MESSAGES_REQUEST]: toJsonSchema2020(messagesRequestSchema, { basePointer: `#/components/schemas/${MESSAGES_REQUEST}` }),
    [MESSAGE]: toJsonSchema2020(messageSchema, { basePointer: `#/components/schemas/${MESSAGE}` }),
  },
};

export const messagesCountTokensDoc: RouteDoc = {
  operationId: 'countMessageTokens',
  tag: TAG,
  summary: 'Count the tokens of a message request (Anthropic Messages API)',
  description: 'Anthropic-compatible token counting: the prompt tokens a `POST /v1/messages` request with the same body would use. Forwarded to a native upstream unchanged; otherwise counted by the gateway (with bounded work: estimated beyond a few ms of counting). Takes one request of the caller\'s requests-per-minute limit and a concurrency slot; bills nothing, so an over-budget caller may still count; logged with operation `messages.count_tokens` and cost 0.',
  requestBody: {
    required: true,
    description: 'A Messages API request without `max_tokens`.',
    content: { 'application/json': { schema: schemaRef(COUNT_TOKENS_REQUEST), example: { model: requestExample.model, messages: requestExample.messages } } },
  },
  success: {
    description: 'The prompt\'s token count. Carries the `x-ratelimit-*-requests` headers of the limits that apply to the caller.',
    headers: responseHeaders(true),
    content: {
      'application/json': {
        schema: { type: 'object', required: ['input_tokens'], properties: { input_tokens: { type: 'integer', description: 'Tokens the prompt (system, messages, tools) uses.' } } },
        example: { input_tokens: 9 },
      },
    },
  },
  errors: COUNT_TOKENS_ERRORS,
  schemas: {
    [COUNT_TOKENS_REQUEST]: toJsonSchema2020(countTokensRequestSchema, { basePointer: `#/components/schemas/${COUNT_TOKENS_REQUEST}` }),
  },
};

/**
 * `POST /api/messages` and `POST /api/messages/count_tokens`: the same operations for clients that
 * append only `/messages` to their base URL (`@ai-sdk/anthropic`, opencode; their default base URL is
 * `https://api.anthropic.com/v1`), so `ANTHROPIC_BASE_URL=<gateway>/api` serves every Anthropic-style client.
 */
const UNVERSIONED_NOTE = ' Served at `/api/messages` as well as `/api/v1/messages`: Claude Code and the Anthropic SDKs append `/v1/messages` to their base URL, `@ai-sdk/anthropic` and opencode only `/messages`, so one base URL (`<gateway>/api`) serves both.';

export const messagesCreateUnversionedDoc: RouteDoc = {
  ...messagesCreateDoc,
  operationId: 'createMessageUnversioned',
  summary: `${messagesCreateDoc.summary}, without the version segment`,
  description: messagesCreateDoc.description + UNVERSIONED_NOTE,
};

export const messagesCountTokensUnversionedDoc: RouteDoc = {
  ...messagesCountTokensDoc,
  operationId: 'countMessageTokensUnversioned',
  summary: `${messagesCountTokensDoc.summary}, without the version segment`,
  description: messagesCountTokensDoc.description + UNVERSIONED_NOTE,
};
