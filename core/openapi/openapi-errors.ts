/**
 * The error responses and response headers of the OpenAPI document (`openapi.ts`), after
 * docs/contract.md "Errors": per status the catalog code it shows (`errors.ts`, whence its `type`), an example
 * body, and the headers it carries (`WWW-Authenticate` on 401, `x-should-retry` on 402,
 * `Retry-After` / `retry-after-ms` / `x-ratelimit-*` on 429). Header names are lower-case, as Node
 * sends them.
 */
import { ERROR_CATALOG, type ErrorCode, type ErrorSpec } from '../errors.ts';

/** The statuses the contract's Errors table can produce on `/api` operations. */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 413 | 429 | 500 | 502 | 503 | 504;

const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens',
] as const;

const header = (description: string, schema: Record<string, unknown>) => ({ description, schema });
const integerHeader = (description: string) => header(description, { type: 'integer', minimum: 0 });
const TOKENS_NOTE = 'Present only when a tokens-per-minute limit applies.';

/** `components.headers`: every response header the document mentions, keyed by its name. */
export const openApiHeaders: Record<string, { description: string; schema: Record<string, unknown> }> = {
  'x-request-id': header('Id of this request (`req_` + 32 hex digits), on every response. The server log and the request log use it; quote it when reporting a problem.', { type: 'string' }),
  'x-ratelimit-limit-requests': integerHeader('Requests per minute the caller may make (the tighter of the user\'s and the key\'s limit). Absent when no request limit applies.'),
  'x-ratelimit-remaining-requests': integerHeader('Requests still available in the current minute window.'),
  'x-ratelimit-reset-requests': header('Time until the request limit is fully replenished, in OpenAI\'s duration format (e.g. `1s`, `6m0s`).', { type: 'string' }),
  'x-ratelimit-limit-tokens': integerHeader(`Tokens (prompt + completion) per minute the caller may use. ${TOKENS_NOTE}`),
  'x-ratelimit-remaining-tokens': integerHeader(`Tokens still available in the current minute window (requests in flight count with their reserved estimate). ${TOKENS_NOTE}`),
  'x-ratelimit-reset-tokens': header(`Time until the token limit is fully replenished, in OpenAI's duration format (e.g. \`1s\`, \`6m0s\`). ${TOKENS_NOTE}`, { type: 'string' }),
  'retry-after': integerHeader('Seconds to wait before retrying (rounded up).'),
  'retry-after-ms': integerHeader('Milliseconds to wait before retrying (the precise value behind Retry-After).'),
  'www-authenticate': header('Always `Bearer`: authenticate with `Authorization: Bearer <key>` (or `x-api-key`).', { type: 'string', const: 'Bearer' }),
  'x-should-retry': header('`false`: retrying the same request will not help (OpenAI SDKs honour it and do not retry).', { type: 'string', const: 'false' }),
};

const headerRefs = (names: readonly string[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** A 200 response object answering JSON of the component schema `schema`, with `x-request-id`. */
export function jsonOk(description: string, schema: string) {
  return { description, headers: responseHeaders(false), content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
}

/** Headers of a successful response: `x-request-id`, plus the `x-ratelimit-*` set on proxied responses. */
export function responseHeaders(withRateLimits: boolean): Record<string, { $ref: string }> {
  return headerRefs(withRateLimits ? ['x-request-id', ...RATE_LIMIT_HEADERS] : ['x-request-id']);
}

interface ErrorKind {
  title: string;
  /** The catalog code the example shows; its `type` comes from the catalog. */
  code: ErrorCode;
  /** An example message fitting the status (the catalog's default when absent). */
  message?: string;
  param?: string;
  headers: readonly string[];
}

const ERROR_KINDS: Record<ErrorStatus, ErrorKind> = {
  400: { title: 'Bad request', code: 'invalid_request', message: 'Missing required field "messages".', param: 'messages', headers: [] },
  401: { title: 'Unauthenticated', code: 'invalid_api_key', headers: ['www-authenticate'] },
  402: { title: 'Budget exceeded', code: 'budget_exceeded', message: 'Your monthly budget is used up; it resets at 2025-07-01T00:00:00.000Z.', headers: ['x-should-retry'] },
  403: { title: 'Forbidden', code: 'permission_denied', message: 'This gateway user is disabled. Ask an operator to enable it.', headers: [] },
  404: { title: 'Not found', code: 'model_not_found', message: 'The model "gpt-5-turbo" does not exist or is not available. GET /api/v1/models lists the models you can use.', headers: [] },
  413: { title: 'Request too large', code: 'request_too_large', message: 'Request body exceeds the gateway\'s limit of 10485760 bytes.', headers: ['x-should-retry'] },
  429: { title: 'Rate limited', code: 'rate_limit_exceeded', message: 'Rate limit of 60 requests per minute reached. Retry in 1 s.', headers: ['retry-after', 'retry-after-ms', ...RATE_LIMIT_HEADERS] },
  500: { title: 'Internal error', code: 'internal_error', headers: [] },
  502: { title: 'Upstream error', code: 'upstream_error', message: 'Upstream "openai" answered 503: the server is overloaded.', headers: [] },
  503: { title: 'Shutting down', code: 'shutting_down', headers: [] },
  504: { title: 'Upstream timeout', code: 'upstream_timeout', message: 'Upstream "openai" timed out (headers). Try again; if it persists the provider may be degraded.', headers: [] },
};

/** When a status happens on one operation, and optionally an example fitting that operation better. */
export type ErrorCase = string | { when: string; example: { code: string; message: string; param?: string | null } };

/** The response object for `status` on one operation. */
export function errorResponse(status: ErrorStatus, errorCase: ErrorCase) {
  const { when, example } = typeof errorCase === 'string' ? { when: errorCase, example: undefined } : errorCase;
  const kind = ERROR_KINDS[status];
  const spec: ErrorSpec = ERROR_CATALOG[kind.code];
  const code = example?.code ?? kind.code;
  const message = example?.message ?? kind.message ?? spec.message;
  const param = example?.param !== undefined ? example.param : (kind.param ?? spec.param ?? null);
  return {
    description: `${kind.title} (\`${spec.type}\`): ${when}`,
    headers: headerRefs(['x-request-id', ...kind.headers]),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { error: { message, type: spec.type, code, param } },
      },
    },
  };
}
