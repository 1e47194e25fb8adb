/**
 * The endpoints response-store answers, with their OpenAPI description: OpenAI's
 * `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`
 * (openai-node `client.responses.retrieve`, `.delete`, `.inputItems.list`), for the caller's own
 * stored responses.
 */
import type { RouteDeclaration, RouteDoc } from '../../core/routes.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { jsonOk } from '../../core/openapi/openapi-errors.ts';

export const RESPONSES_RETRIEVE = 'responses.retrieve';
export const RESPONSES_DELETE = 'responses.delete';
export const RESPONSES_INPUT_ITEMS = 'responses.input_items';

const TAG = { name: 'Responses', description: 'OpenAI Responses API (Codex CLI, the Vercel AI SDK).' };

const idParameter = {
  name: 'id', in: 'path', required: true, schema: { type: 'string' },
  description: 'The response id, as `POST /v1/responses` answered it (`resp_...`).',
};

const notFound = {
  404: {
    when: 'No response with this id is stored for you: never stored (`store: false`, a failed answer), deleted, expired, or another user\'s (`response_not_found`).',
    example: { code: 'response_not_found', message: 'Response with id \'resp_0123\' not found.', param: null },
  },
} as const;

const deletedSchema: JsonSchema = {
  type: 'object',
  description: 'The deleted response.',
  required: ['id', 'object', 'deleted'],
  properties: {
    id: { type: 'string', description: 'The response id.' },
    object: { const: 'response', description: 'Always `response`.' },
    deleted: { const: true, description: 'Always true.' },
  },
};

const itemListSchema: JsonSchema = {
  type: 'object',
  description: 'One page of the input items of a response.',
  required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
  properties: {
    object: { const: 'list', description: 'Always `list`.' },
    data: { type: 'array', items: { type: 'object', description: 'An input item (message, function_call, function_call_output, ...), with its `id`.' }, description: 'The items, in the requested order.' },
    first_id: { type: ['string', 'null'], description: 'Id of the first item of `data`; null when empty.' },
    last_id: { type: ['string', 'null'], description: 'Id of the last item of `data` (the `after` of the next page); null when empty.' },
    has_more: { type: 'boolean', description: 'True when more items follow in this order.' },
  },
};

const retrieveDoc: RouteDoc = {
  operationId: 'retrieveResponse', tag: TAG,
  summary: 'Retrieve a stored response',
  description: 'A response the gateway stored for you (`store` not false), exactly as it was answered, whichever provider served it. Kept for the retention period (default 30 days).',
  parameters: [idParameter],
  success: jsonOk('The response object, as `POST /v1/responses` answered it.', 'ResponsesResponse'),
  errors: notFound,
};

const deleteDoc: RouteDoc = {
  operationId: 'deleteResponse', tag: TAG,
  summary: 'Delete a stored response',
  description: 'Deletes one of your stored responses; it can no longer be retrieved nor continued with `previous_response_id`. A native OpenAI upstream\'s own copy is not deleted.',
  parameters: [idParameter],
  success: jsonOk('The response is deleted.', 'ResponseDeleted'),
  errors: notFound,
  schemas: { ResponseDeleted: deletedSchema },
};

const inputItemsDoc: RouteDoc = {
  operationId: 'listResponseInputItems', tag: TAG,
  summary: 'List a stored response\'s input items',
  description: 'The input items of one of your stored responses (its own input, not the earlier turns it continued), paged as OpenAI pages them.',
  parameters: [
    idParameter,
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, description: 'Items per page.' },
    { name: 'order', in: 'query', required: false, schema: { enum: ['asc', 'desc'], default: 'desc' }, description: '`asc`: oldest first; `desc`: newest first.' },
    { name: 'after', in: 'query', required: false, schema: { type: 'string' }, description: 'An item id: list the items after it (the previous page\'s `last_id`).' },
    { name: 'before', in: 'query', required: false, schema: { type: 'string' }, description: 'An item id: list the items before it.' },
  ],
  success: jsonOk('One page of input items.', 'ResponseItemList'),
  errors: {
    ...notFound,
    400: {
      when: '`limit` is not 1 to 100, `order` not asc or desc, or `after` / `before` names no item of this response (`invalid_request`).',
      example: { code: 'invalid_request', message: 'Invalid value for "limit": an integer from 1 to 100.', param: 'limit' },
    },
  },
  schemas: { ResponseItemList: itemListSchema },
};

export const responseStoreRoutes: readonly RouteDeclaration[] = [
  { method: 'GET', path: '/api/v1/responses/{id}', operation: RESPONSES_RETRIEVE, doc: retrieveDoc },
  { method: 'DELETE', path: '/api/v1/responses/{id}', operation: RESPONSES_DELETE, doc: deleteDoc },
  { method: 'GET', path: '/api/v1/responses/{id}/input_items', operation: RESPONSES_INPUT_ITEMS, doc: inputItemsDoc },
];
