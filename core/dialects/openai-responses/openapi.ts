/**
 * The OpenAPI description of `POST /api/v1/responses`: the request schema converted from the very
 * schema the dialect validates with (so the document cannot drift from what is enforced), examples,
 * the `response` JSON and the Responses event stream, and when each error status happens. Shapes
 * after openai-node `src/resources/responses/responses.ts` and
 * https://platform.openai.com/docs/api-reference/responses .
 */
import type { JsonSchema } from '../../json-schema.ts';
import { toJsonSchema2020 } from '../../openapi/json-schema-2020.ts';
import { responseHeaders } from '../../openapi/openapi-errors.ts';
import type { RouteDoc } from '../../routes.ts';
import { responsesRequestSchema } from './request-schema.ts';

const RESPONSES_REQUEST = 'ResponsesRequest';
const RESPONSE = 'ResponsesResponse';
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const usageSchema: JsonSchema = {
  type: 'object',
  required: ['input_tokens', 'output_tokens', 'total_tokens'],
  properties: {
    input_tokens: { type: 'integer', description: 'Prompt tokens, cached ones included.' },
    input_tokens_details: { type: 'object', description: 'Parts of input_tokens.', properties: { cached_tokens: { type: 'integer', description: 'Prompt tokens read from the cache.' } } },
    output_tokens: { type: 'integer', description: 'Generated tokens, reasoning included.' },
    output_tokens_details: { type: 'object', description: 'Parts of output_tokens.', properties: { reasoning_tokens: { type: 'integer', description: 'Tokens spent reasoning.' } } },
    total_tokens: { type: 'integer', description: 'input_tokens + output_tokens.' },
  },
};

const responseSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'object', 'created_at', 'status', 'model', 'output'],
  properties: {
    id: { type: 'string', description: '"resp_" + an id.' },
    object: { const: 'response', description: 'Always "response".' },
    created_at: { type: 'integer', description: 'Unix time (seconds) the request arrived.' },
    status: { enum: ['completed', 'incomplete', 'failed', 'in_progress', 'cancelled', 'queued'], description: '"completed"; "incomplete" when the output limit or a content filter cut the answer (see incomplete_details).' },
    incomplete_details: { type: ['object', 'null'], description: 'Why the response is incomplete; null when it is not.', properties: { reason: { type: 'string', description: '"max_output_tokens" or "content_filter".' } } },
    error: { type: ['object', 'null'], properties: { code: { type: 'string', description: 'A stable error code.' }, message: { type: 'string', description: 'What went wrong.' } }, description: 'Why a response failed.' },
    model: { type: 'string', description: 'The model that answered.' },
    output: {
      type: 'array',
      description: 'Output items: "reasoning", "message" (with "output_text" parts), "function_call" (and, from a native OpenAI upstream, any other kind it sends).',
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string', description: 'The item kind.' }, id: { type: 'string', description: 'The item id ("rs_", "msg_", "fc_" + an id).' } } },
    },
    output_text: { type: 'string', description: 'Every output_text joined (a convenience the SDKs also compute).' },
    usage: { ...usageSchema, type: ['object', 'null'], description: 'Token counts.' },
  },
};

const created = '{"id":"resp_68af4030592c81938ec0a5fbab4a3e9f","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5-mini","output":[],"usage":null}';
const SSE_EXAMPLE = [
  ['response.created', `{"type":"response.created","sequence_number":0,"response":${created}}`],
  ['response.in_progress', `{"type":"response.in_progress","sequence_number":1,"response":${created}}`],
  ['response.output_item.added', '{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_68af4031","type":"message","status":"in_progress","role":"assistant","content":[]}}'],
  ['response.content_part.added', '{"type":"response.content_part.added","sequence_number":3,"item_id":"msg_68af4031","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}}'],
  ['response.output_text.delta', '{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_68af4031","output_index":0,"content_index":0,"delta":"Hello!","logprobs":[]}'],
  ['response.output_text.done', '{"type":"response.output_text.done","sequence_number":5,"item_id":"msg_68af4031","output_index":0,"content_index":0,"text":"Hello!","logprobs":[]}'],
  ['response.content_part.done', '{"type":"response.content_part.done","sequence_number":6,"item_id":"msg_68af4031","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}}'],
  ['response.output_item.done', '{"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"msg_68af4031","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}]}}'],
  ['response.completed', '{"type":"response.completed","sequence_number":8,"response":{"id":"resp_68af4030592c81938ec0a5fbab4a3e9f","object":"response","created_at":1700000000,"status":"completed","model":"gpt-5-mini","output":[{"id":"msg_68af4031","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}]}],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":11}}}'],
].map(([event, data]) => `event: ${event}\ndata: ${data}\n\n`).join('');

const RESPONSE_EXAMPLE = {
  id: 'resp_68af4030592c81938ec0a5fbab4a3e9f', object: 'response', created_at: 1_700_000_000, status: 'completed', error: null, incomplete_details: null,
  model: 'gpt-5-mini', output: [{ id: 'msg_68af4031', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }] }],
  output_text: 'Hello!', usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 11 },
};

const requestExample = { model: 'openai/gpt-5-mini', instructions: 'Be brief.', input: 'Say hello' };

export const responsesCreateDoc: RouteDoc = {
  operationId: 'createResponse',
  tag: { name: 'Responses', description: 'OpenAI Responses API (Codex CLI, the Vercel AI SDK).' },
  summary: 'Create a model response (OpenAI Responses API)',
  description: 'OpenAI Responses-compatible: point the OpenAI SDK, the Vercel AI SDK or Codex CLI at `<this server>/api/v1` with a Tollgate key. `model` is `provider/model` or a bare model id resolved through the catalog. When the provider speaks the Responses API natively, the body and the `openai-beta` header are forwarded unchanged (only the model and the credential are replaced) and the upstream\'s answer comes back byte for byte; any other provider gets the request translated to its own format and its answer translated back. Built-in tools (web search, file search, code interpreter, MCP, ...), stored items (`item_reference`, `conversation`, `prompt`) and background mode need a native OpenAI upstream. With `stream: true` the answer is server-sent Responses events. The request is checked against the caller\'s rate limits and budget first; its worst-case cost is reserved and settled to the actual cost when the response ends.',
  requestBody: {
    required: true,
    description: 'Responses API request. Fields not listed here are forwarded to a native upstream untouched and dropped when translating.',
    content: {
      'application/json': {
        schema: schemaRef(RESPONSES_REQUEST),
        examples: {
          simple: { summary: 'One question', value: requestExample },
          streaming: { summary: 'Streamed', value: { ...requestExample, stream: true } },
        },
      },
    },
  },
  success: {
    description: 'The answer: a `response` object as JSON, or with `stream: true` a `text/event-stream` of Responses events (`response.created`, `response.in_progress`, per output item `response.output_item.added` ... `response.output_item.done` with its deltas, then `response.completed` or `response.incomplete` with the whole response and its usage). Carries the `x-ratelimit-*` headers of the limits that apply to the caller.',
    headers: responseHeaders(true),
    content: {
      'application/json': { schema: schemaRef(RESPONSE), example: RESPONSE_EXAMPLE },
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events, each `event: <type>` with `data:` holding the event as JSON, every event numbered by `sequence_number`. After an error the stream ends with `event: error` (`{"type":"error","code","message","param","error":{...}}`) and `event: response.failed` (the response with status "failed" and `error: {code, message}`).' },
        example: SSE_EXAMPLE,
      },
    },
  },
  errors: {
    400: 'The body is malformed JSON or breaks the request schema (`invalid_request`, `param` names the field); an item, part or tool cannot be translated for a provider that does not speak the Responses API (e.g. a built-in tool, an `item_reference`, an `input_file`); the `model` prefix names no provider; the provider has no credential for the caller; `input` holds more `item_reference` items than the response store resolves (response-store `maxItemReferences`, 1000; `param` `input`). An upstream\'s own 4xx is passed on with its status. The body has OpenAI\'s shape, `{"error":{"message","type","code","param"}}`.',
    402: 'The caller\'s budget cannot cover the request\'s worst-case cost; the message says when the budget resets. Not retryable before then (`x-should-retry: false`).',
    404: 'The model does not exist or is not available (`model_not_found`, param `model`); or an `item_reference` names an item the gateway does not hold for the caller and would go to an upstream with a shared key, which might open another account\'s item (`item_not_found`, param `input`; with the caller\'s own provider credential it is forwarded).',
    413: 'The body is larger than the gateway\'s `server.maxBodyBytes`; or the stored items it names (its `item_reference`s, counted each time, and its `previous_response_id` chain) exceed response-store `maxExpandedBytes` (4 MiB; both `request_too_large`); or the caller\'s stored responses fill their quota and the store refuses more (`response_store_full`, `overQuota: "refuse"`; `store: false` still works).',
    429: 'The caller\'s requests-per-minute or tokens-per-minute limit is spent; retry after `Retry-After` seconds (`retry-after-ms` milliseconds).',
    502: 'The upstream answered with a 5xx, could not be reached, or sent something unreadable (type `upstream_error`).',
    503: 'The gateway is shutting down (`shutting_down`), or no upstream can take the request now (`upstream_unavailable`, type `upstream_error`: every key of the provider\'s pool is disabled after the upstream refused it on two models, or a recovering deployment\'s one probe is already out); retry after `Retry-After`.',
    504: 'The upstream did not connect, answer or keep streaming within its timeout (`upstream_timeout`).',
  },
  schemas: {
    [RESPONSES_REQUEST]: toJsonSchema2020(responsesRequestSchema, { basePointer: `#/components/schemas/${RESPONSES_REQUEST}` }),
    [RESPONSE]: toJsonSchema2020(responseSchema, { basePointer: `#/components/schemas/${RESPONSE}` }),
  },
};
