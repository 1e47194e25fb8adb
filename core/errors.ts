/**
 * The error catalog: every error code the gateway itself emits, declared once with its HTTP status,
 * OpenAI-style `type` and default message (`ERROR_CATALOG`), as tabled in `docs/contract.md`
 * ("Errors"). Plugins, providers, the upstream client and the admin API deny by throwing a
 * `GatewayError` built from it (`gatewayError(code)` or the named factories below); each dialect
 * renders it in its own shape; the OpenAPI examples come from it. An upstream's own error code may
 * replace `upstream_error`'s code (the provider's word for what went wrong). Anything else that
 * escapes becomes `internal_error` (500) and is logged with its cause, never shown to the client.
 */

import { isStoreUnavailableError } from './store/store-errors.ts';

export { isStoreUnavailableError } from './store/store-errors.ts';

/** The wire body of every error: `{"error":{"message","type","code","param"}}`. */
export interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

export interface GatewayErrorInit {
  status: number;
  type: string;
  code: string;
  message: string;
  param?: string | null;
  /** Extra response headers, e.g. `WWW-Authenticate`, `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
  /** The upstream's own error body, sent as it is instead of a rendered one (native pass-through). */
  relayedBody?: string;
}

/**
 * Marks every `GatewayError`, whichever copy of this module made it: a plugin loaded from a file gets
 * the SDK's build (`dist/plugin.js`), a copy of this class apart from the gateway's, and its errors
 * must still be told from a plugin's failure (`instanceof` below checks the mark, not the class).
 */
const GATEWAY_ERROR = Symbol.for('tollgate.GatewayError');

/** A denial or failure with a status and body from the contract. Throw it; the pipeline renders it. */
export class GatewayError extends Error {
  /** True for a `GatewayError` of any copy of this module (see `GATEWAY_ERROR`). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [GATEWAY_ERROR]?: unknown })[GATEWAY_ERROR] === true;
  }

  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  /** The upstream's own error body, sent as it is instead of a rendered one (native pass-through). */
  readonly relayedBody: string | null;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers ?? {};
    this.relayedBody = init.relayedBody ?? null;
  }

  /**
   * This error answered with the upstream's own `status` and body, for a client that speaks the
   * upstream's dialect: agents match on the provider's words (Claude Code on Anthropic's messages)
   * and statuses (529). The code, type and headers stay this error's, for the log and retries.
   */
  relayed(status: number, body: string): GatewayError {
    return new GatewayError({
      status, type: this.type, code: this.code, message: this.message, param: this.param, headers: this.headers, cause: this.cause, relayedBody: body,
    });
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}
Object.defineProperty(GatewayError.prototype, GATEWAY_ERROR, { value: true });

/** One catalog entry. `message` is the default; call sites add what they know. */
export interface ErrorSpec {
  readonly status: number;
  readonly type: string;
  readonly message: string;
  /** The request field the error is about by default. */
  readonly param?: string;
  /** Headers every response with this code carries. */
  readonly headers?: Readonly<Record<string, string>>;
}

const NO_RETRY = { 'x-should-retry': 'false' } as const;

/** Every code the gateway emits, by code. */
export const ERROR_CATALOG = {
  // Authentication and permission (docs/contract.md "Errors").
  invalid_api_key: { status: 401, type: 'authentication_error', message: 'Invalid API key. Pass a Tollgate key as "Authorization: Bearer <key>" or "x-api-key: <key>".', headers: { 'www-authenticate': 'Bearer' } },
  permission_denied: { status: 403, type: 'permission_error', message: 'This request is not allowed for your key.' },
  budget_exceeded: { status: 402, type: 'budget_exceeded', message: 'Your budget cannot cover this request.', headers: NO_RETRY },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', message: 'Rate limit reached.' },
  concurrency_limit_exceeded: { status: 429, type: 'rate_limit_error', message: 'Too many requests in flight at once.', headers: { 'retry-after': '1', 'retry-after-ms': '1000' } },
  // The request.
  invalid_request: { status: 400, type: 'invalid_request_error', message: 'The request is not valid.', headers: NO_RETRY },
  request_headers_too_large: { status: 431, type: 'invalid_request_error', message: 'The request headers exceed the gateway\'s limit (16 KiB in all). Send fewer or shorter headers.', headers: NO_RETRY },
  malformed_http_request: { status: 400, type: 'invalid_request_error', message: 'The HTTP request is malformed and could not be parsed.', headers: NO_RETRY },
  request_timeout: { status: 408, type: 'invalid_request_error', message: 'The request was not received in time (server.headersTimeoutMs, server.requestTimeoutMs).' },
  request_too_large: { status: 413, type: 'invalid_request_error', message: 'Request body exceeds the gateway\'s limit.', headers: NO_RETRY },
  provider_not_found: { status: 404, type: 'not_found_error', message: 'Unknown provider.' },
  model_not_found: { status: 404, type: 'not_found_error', param: 'model', message: 'The model does not exist or is not available. GET /api/v1/models lists the models you can use.' },
  provider_not_configured: { status: 400, type: 'invalid_request_error', param: 'model', message: 'The provider has no credential for you.' },
  not_found: { status: 404, type: 'not_found_error', message: 'No route for this path. The API lives under /api (e.g. POST /api/v1/chat/completions).' },
  endpoint_not_found: { status: 404, type: 'not_found_error', message: 'No such endpoint under /api. GET /api/docs lists every endpoint.' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', message: 'This method is not allowed on this path.' },
  // Stored Responses (`GET /api/v1/responses/{id}`, `previous_response_id`): OpenAI's type and wording.
  response_not_found: { status: 404, type: 'invalid_request_error', message: 'No stored response has this id.' },
  previous_response_not_found: { status: 400, type: 'invalid_request_error', param: 'previous_response_id', message: 'The previous response was not found.' },
  item_not_found: { status: 404, type: 'invalid_request_error', param: 'input', message: 'No stored item has this id.' },
  response_store_full: { status: 413, type: 'invalid_request_error', message: 'Your stored responses fill your quota.', headers: NO_RETRY },
  // Upstreams (`upstream_error`'s code may be the provider's own).
  upstream_error: { status: 502, type: 'upstream_error', message: 'The upstream failed.' },
  upstream_timeout: { status: 504, type: 'upstream_error', message: 'The upstream timed out. Try again; if it persists the provider may be degraded.' },
  upstream_unreachable: { status: 502, type: 'upstream_error', message: 'Could not complete the call to the upstream. Try again; if it persists the provider may be down.' },
  upstream_malformed_response: { status: 502, type: 'upstream_error', message: 'The upstream sent an answer that is not what its API documents.' },
  upstream_stream_truncated: { status: 502, type: 'upstream_error', message: 'The upstream ended the stream before the answer was complete.' },
  upstream_busy: { status: 503, type: 'upstream_error', message: 'Every connection to the upstream is busy. Retry shortly.', headers: { 'retry-after': '1' } },
  upstream_unavailable: { status: 503, type: 'upstream_error', message: 'No upstream can take this request now. Retry shortly.', headers: { 'retry-after': '1' } },
  upstream_response_too_large: { status: 502, type: 'upstream_error', message: 'The upstream sent more than the gateway accepts for one answer (upstream.maxResponseBytes, upstream.maxStreamBytes).' },
  // The gateway itself.
  coordination_unavailable: { status: 503, type: 'server_error', message: 'The gateway cannot reach the shared store its replicas count rate limits and budgets in (Redis), so it refuses requests until it is back (coordination.failMode "closed"). Retry shortly.', headers: { 'retry-after': '1' } },
  bodies_in_flight_full: { status: 503, type: 'server_error', message: 'The gateway is already reading as many request bytes as it holds at once (server.maxBodyBytesInFlight). Retry shortly.', headers: { 'retry-after': '1' } },
  shutting_down: { status: 503, type: 'server_error', message: 'The gateway is shutting down. Retry shortly.', headers: { connection: 'close' } },
  store_unavailable: { status: 503, type: 'server_error', message: 'The gateway cannot reach its database right now (restarting, locked, full or read-only). Retry shortly.', headers: { 'retry-after': '1' } },
  internal_error: { status: 500, type: 'server_error', message: 'The gateway hit an unexpected error. It has been logged; quote the x-request-id if you report it.' },
  // An operator's plugin (docs/plugins.md) threw, rejected or overran its hookTimeoutMs; the message names the plugin and hook, never its error.
  plugin_error: { status: 500, type: 'server_error', message: 'A plugin of this gateway failed on this request. It has been logged; quote the x-request-id if you report it.' },
  /** Log only: the client left before the answer was complete (status 499, never sent). */
  client_disconnected: { status: 499, type: 'client_error', message: 'The client closed the connection before the answer was complete.' },
  // Log-side too: a stream still running when the shutdown drain timed out; billed for what was sent.
  gateway_shutdown: { status: 503, type: 'server_error', message: 'The gateway shut down before the answer was complete. Retry the request.' },
  // The admin API (docs/admin-api.md).
  session_required: { status: 401, type: 'authentication_error', message: 'Log in first: POST /admin/api/login with {"username","password"}. Sessions end after inactivity.' },
  invalid_credentials: { status: 401, type: 'authentication_error', message: 'Wrong username or password.' },
  too_many_login_attempts: { status: 429, type: 'rate_limit_error', message: 'Too many failed logins.' },
  password_login_disabled: { status: 403, type: 'permission_error', message: 'Password sign-in is turned off on this gateway (admin.oidc.passwordLogin: false): sign in with single sign-on at GET /admin/api/oidc/login.' },
  sso_forbidden: { status: 403, type: 'permission_error', message: 'Your identity provider account may not sign in to this gateway.' },
  sso_failed: { status: 400, type: 'invalid_request_error', message: 'Single sign-on did not complete. Start again from the sign-in page.' },
  sso_not_configured: { status: 404, type: 'not_found_error', message: 'Single sign-on is not configured on this gateway (manifest admin.oidc).' },
  role_forbidden: { status: 403, type: 'permission_error', message: 'Your admin role may not do this.' },
  team_forbidden: { status: 403, type: 'permission_error', message: 'You manage other teams than this one.' },
  origin_mismatch: { status: 403, type: 'permission_error', message: 'This request came from another site (its Origin is not the gateway\'s own) and was refused.' },
  user_not_found: { status: 404, type: 'not_found_error', param: 'id', message: 'No gateway user has this id.' },
  team_not_found: { status: 404, type: 'not_found_error', param: 'id', message: 'No team has this id.' },
  key_not_found: { status: 404, type: 'not_found_error', param: 'id', message: 'No API key has this id.' },
  log_not_found: { status: 404, type: 'not_found_error', param: 'id', message: 'No request log row has this id.' },
  credential_not_found: { status: 404, type: 'not_found_error', param: 'provider', message: 'This user has no credential for this provider.' },
  reconciliation_run_not_found: { status: 404, type: 'not_found_error', param: 'id', message: 'No reconciliation run has this id.' },
  price_not_found: { status: 404, type: 'not_found_error', param: 'model', message: 'No price is stored for this model.' },
  upstream_key_not_found: { status: 404, type: 'not_found_error', param: 'key', message: 'No pooled provider key has this fingerprint.' },
  conflict: { status: 409, type: 'invalid_request_error', message: 'This name must be unique and exists already.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** What a call site adds to a catalog entry. */
export interface ErrorDetails {
  message?: string;
  param?: string | null;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A `GatewayError` for catalog `code`, with the call site's message, param and headers over the defaults. */
export function gatewayError(code: ErrorCode, details: ErrorDetails = {}): GatewayError {
  const spec: ErrorSpec = ERROR_CATALOG[code];
  return new GatewayError({
    status: spec.status,
    type: spec.type,
    code,
    message: details.message ?? spec.message,
    param: details.param === undefined ? (spec.param ?? null) : details.param,
    headers: spec.headers || details.headers ? Object.assign({}, spec.headers, details.headers) : {},
    cause: details.cause,
  });
}

/** 401: missing, unknown, revoked or expired API key. */
export function invalidApiKey(message?: string): GatewayError {
  return gatewayError('invalid_api_key', { message });
}

/** 403: user disabled, or model not allowed for the key. */
export function permissionDenied(message: string): GatewayError {
  return gatewayError('permission_denied', { message });
}

/** 402: the budget cannot cover the request. `message` must say when the budget resets. */
export function budgetExceeded(message: string): GatewayError {
  return gatewayError('budget_exceeded', { message });
}

/** 429: a gateway rate limit is spent. `retryAfterMs` feeds `Retry-After` (whole seconds, rounded up) and `retry-after-ms`. */
export function rateLimitExceeded(message: string, retryAfterMs: number, headers: Record<string, string> = {}): GatewayError {
  const ms = Math.max(0, Math.ceil(retryAfterMs));
  return gatewayError('rate_limit_exceeded', { message, headers: Object.assign({}, headers, { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) }) });
}

/** 404: `GET /api/providers/{provider}` names no known provider. */
export function providerNotFound(provider: string, known: readonly string[]): GatewayError {
  return gatewayError('provider_not_found', { message: `Unknown provider "${provider}". Known providers: ${known.join(', ') || '(none)'}.` });
}

/** 400: a request's `model` has a `provider/` prefix that names no provider (same code as the 404 above). */
export function unknownProviderPrefix(provider: string, known: readonly string[]): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'provider_not_found',
    param: 'model',
    message: `Unknown provider "${provider}" in model. Use "<provider>/<model>" with one of: ${known.join(', ') || '(none)'}.`,
  });
}

/** 404: the provider is known but the model is not. */
export function modelNotFound(model: string, detail?: string): GatewayError {
  return gatewayError('model_not_found', { message: detail ?? `The model "${model}" does not exist or is not available. GET /api/v1/models lists the models you can use.` });
}

/** 400: malformed JSON, wrong types, missing fields. `param` names the offending field. */
export function invalidRequest(message: string, param: string | null = null): GatewayError {
  return gatewayError('invalid_request', { message, param });
}

/**
 * 400 `invalid_request` (param `model`): an embeddings call routed to a provider without an
 * embeddings API (Anthropic). `alternatives` are ids of configured providers that have one.
 */
export function embeddingsUnsupported(providerName: string, alternatives: readonly string[]): GatewayError {
  const hint = alternatives.length > 0
    ? `use a model of a provider that has one, e.g. ${alternatives.map((id) => `"${id}/<embedding model>"`).join(', ')}`
    : 'no provider configured here has one';
  return invalidRequest(`${providerName} has no embeddings API; ${hint}.`, 'model');
}

/**
 * 503 `bodies_in_flight_full` with `Retry-After: 1`: reading this body would take the bytes of bodies
 * being read at once past `server.maxBodyBytesInFlight` (`core/http/request-body.ts`).
 */
export function bodiesInFlightFull(maxBytesInFlight: number): GatewayError {
  return gatewayError('bodies_in_flight_full', {
    message: `The gateway is already reading ${maxBytesInFlight} bytes of request bodies at once (server.maxBodyBytesInFlight); this one does not fit now. Retry shortly.`,
  });
}

/**
 * 503 `bodies_in_flight_full` with `Retry-After: 1`, for one caller: its bodies being read at once
 * would pass its share of them, `server.maxBodyBytesInFlightPerUser` (`core/http/request-body.ts`).
 */
export function bodiesInFlightFullForCaller(maxBytesPerUser: number): GatewayError {
  return gatewayError('bodies_in_flight_full', {
    message: `Your requests' bodies being read at once already hold your share of ${maxBytesPerUser} bytes (server.maxBodyBytesInFlightPerUser); this one does not fit now. Retry once one of them is done.`,
  });
}

/** 413: the request body exceeds `maxBodyBytes`. */
export function requestTooLarge(maxBodyBytes: number): GatewayError {
  return gatewayError('request_too_large', { message: `Request body exceeds the gateway's limit of ${maxBodyBytes} bytes.` });
}

/**
 * 413 `request_too_large`: the stored items a Responses request names (the items of its
 * `item_reference`s, the responses of its `previous_response_id` chain) come to more than
 * `maxExpandedBytes` (plugin response-store), on top of its own body.
 */
export function expansionTooLarge(maxExpandedBytes: number): GatewayError {
  return gatewayError('request_too_large', {
    message: `The stored items this request names (its item_reference items and its previous_response_id chain) exceed the gateway's limit of ${maxExpandedBytes} bytes. Name fewer, or send the conversation itself.`,
  });
}

/** 400: no credential (user's own or shared) for the provider. */
export function providerNotConfigured(provider: string): GatewayError {
  return gatewayError('provider_not_configured', {
    message: `Provider "${provider}" has no credential for you. Ask an operator to configure it, or set your own with "tollgate credentials set".`,
  });
}

/**
 * An upstream answered with an error, or could not be reached. `status` is the upstream's 4xx, or 502
 * for an upstream 5xx / connection failure; `code` is the provider's own code when it has one, else a
 * catalog code (`upstream_error` by default).
 */
export function upstreamError(init: { status: number; code?: string | null; message: string; headers?: Record<string, string>; cause?: unknown }): GatewayError {
  return new GatewayError({
    status: init.status,
    type: ERROR_CATALOG.upstream_error.type,
    code: init.code || 'upstream_error',
    message: init.message,
    headers: init.headers ?? {},
    cause: init.cause,
  });
}

/** 504: the upstream did not connect, answer or keep sending within its timeout, or a non-streamed call passed its deadline. */
export function upstreamTimeout(provider: string, phase: 'connect' | 'headers' | 'body' | 'deadline', cause?: unknown): GatewayError {
  const what = phase === 'deadline' ? 'did not finish its answer within upstream.requestDeadlineMs' : `timed out (${phase})`;
  return gatewayError('upstream_timeout', {
    message: `Upstream "${provider}" ${what}. Try again; if it persists the provider may be degraded.`,
    cause,
  });
}

/**
 * 503: the router has nowhere to send the request: every shared key of `provider`'s pool is disabled
 * (the upstream refused each as a key, on two models) or was tried for this request already, or the
 * deployment's half-open breaker is taken by another request's probe. `why` ends the message.
 */
export function upstreamUnavailable(provider: string, why: string): GatewayError {
  return gatewayError('upstream_unavailable', { message: `No upstream of provider "${provider}" can take this request now: ${why}` });
}

/** 404 for a path the gateway does not serve. */
export function routeNotFound(method: string, path: string): GatewayError {
  return gatewayError('not_found', { message: `No route for ${method} ${path}. The API lives under /api (e.g. POST /api/v1/chat/completions).` });
}

/**
 * 404 for a path under `/api` that no endpoint has (a client with a wrong base URL or an API the
 * gateway does not serve): names the path, the base-URL mistake `hint` guesses
 * (`core/dialects/base-url-hint.ts`) and the endpoints it does serve, so it cannot be mistaken for an
 * unknown model.
 */
export function endpointNotFound(method: string, path: string, endpoints: readonly string[], hint?: string): GatewayError {
  const why = hint ?? 'Check the client\'s base URL: <gateway>/api/v1 for OpenAI-style clients, <gateway>/api for Anthropic-style and Gemini clients.';
  return gatewayError('endpoint_not_found', {
    message: `Tollgate has no endpoint ${method} ${path}. ${why} Supported: ${endpoints.join(', ')}.`,
  });
}

/**
 * 404: no response with this id is stored for the caller (another user's, deleted, expired, or never
 * stored): OpenAI's words for it, whoever owns the id, so ids cannot be probed.
 */
export function responseNotFound(id: string): GatewayError {
  return gatewayError('response_not_found', { message: `Response with id '${id}' not found.` });
}

/**
 * 400: `previous_response_id` names no response stored for the caller. OpenAI's status, code and words
 * (`previous_response_not_found`), which clients such as Codex recognise to resend the conversation.
 */
export function previousResponseNotFound(id: string): GatewayError {
  return gatewayError('previous_response_not_found', { message: `Previous response with id '${id}' not found.` });
}

/**
 * 404: an `item_reference` names an item the gateway does not hold for the caller, on a route that
 * would forward it with a shared provider key (which might open another account's item upstream).
 * OpenAI's status, type, param and opening words for an unknown item.
 */
export function itemNotFound(id: string): GatewayError {
  return gatewayError('item_not_found', {
    message: `Item with id '${id}' not found. The gateway forwards a reference to an item it does not hold only with your own provider credential; send the item itself instead.`,
  });
}

/**
 * 413: the caller's stored responses (response-store) already fill their quota (`used` of `limit`,
 * in responses or bytes) and the store refuses new ones (`overQuota: "refuse"`).
 */
export function responseStoreFull(used: string, limit: string): GatewayError {
  return gatewayError('response_store_full', {
    message: `Your stored responses fill your quota (${used} of ${limit}). Delete some (DELETE /api/v1/responses/{id}), wait until they expire, or send "store": false.`,
  });
}

/** 405 for a known path with the wrong method. */
export function methodNotAllowed(method: string, path: string, allowed: string): GatewayError {
  return gatewayError('method_not_allowed', { message: `${method} is not allowed on ${path}; use ${allowed}.`, headers: { allow: allowed } });
}

/** 503 while the gateway drains for shutdown. */
export function shuttingDown(): GatewayError {
  return gatewayError('shutting_down');
}

/**
 * 503: an exchange still running when the shutdown drain timed out (`drainTimeoutMs`): the reason the
 * server aborts it with, so the proxy ends its stream with this error, bills what was generated and
 * logs this code instead of an upstream failure.
 */
export function gatewayShutdown(): GatewayError {
  return gatewayError('gateway_shutdown');
}

/** 500: anything unexpected. Details go to the server log only. */
export function internalError(cause?: unknown): GatewayError {
  return gatewayError('internal_error', { cause });
}

/** Catalog codes of missing admin resources. */
export type ResourceNotFoundCode = 'user_not_found' | 'team_not_found' | 'key_not_found' | 'log_not_found' | 'credential_not_found' | 'price_not_found' | 'upstream_key_not_found' | 'reconciliation_run_not_found';

/** 404 for an admin resource: `code` names what is missing. */
export function resourceNotFound(code: ResourceNotFoundCode, message: string, param: string | null = null): GatewayError {
  return gatewayError(code, { message, param });
}

/** 409: a name or model that must be unique exists already. */
export function conflict(message: string, param: string | null = null): GatewayError {
  return gatewayError('conflict', { message, param });
}

/** 503: the database failed in a way that passes (`isStoreUnavailableError`); the cause is logged, never shown. */
export function storeUnavailable(cause?: unknown): GatewayError {
  return gatewayError('store_unavailable', { cause });
}

/**
 * Anything thrown, as a GatewayError: known ones pass through, a database that is unavailable now
 * becomes `store_unavailable` (503), the rest `internal_error` (500).
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return isStoreUnavailableError(err) ? storeUnavailable(err) : internalError(err);
}
