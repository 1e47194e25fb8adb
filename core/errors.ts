/**
 * The error catalog: every error a client can see, with its HTTP status, OpenAI-style `type` and
 * stable `code`, as tabled in `shared/design/CONTRACT.md` ("Errors"). Plugins and providers deny a
 * request by throwing one of these; anything else that escapes becomes `internal_error` (500) and is
 * logged with its cause, never shown to the client.
 */

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
}

/** A denial or failure with a status and body from the contract. Throw it; the pipeline renders it. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** 401: missing, unknown, revoked or expired API key. */
export function invalidApiKey(message = 'Invalid API key. Pass a Tollgate key as "Authorization: Bearer <key>" or "x-api-key: <key>".'): GatewayError {
  return new GatewayError({
    status: 401,
    type: 'authentication_error',
    code: 'invalid_api_key',
    message,
    headers: { 'www-authenticate': 'Bearer' },
  });
}

/** 403: user disabled, or model not allowed for the key. */
export function permissionDenied(message: string): GatewayError {
  return new GatewayError({ status: 403, type: 'permission_error', code: 'permission_denied', message });
}

/** 402: the budget cannot cover the request. `message` must say when the budget resets. */
export function budgetExceeded(message: string): GatewayError {
  return new GatewayError({
    status: 402,
    type: 'budget_exceeded',
    code: 'budget_exceeded',
    message,
    headers: { 'x-should-retry': 'false' },
  });
}

/** 429: a gateway rate limit is spent. `retryAfterMs` feeds `Retry-After` (whole seconds, rounded up) and `retry-after-ms`. */
export function rateLimitExceeded(message: string, retryAfterMs: number, headers: Record<string, string> = {}): GatewayError {
  const ms = Math.max(0, Math.ceil(retryAfterMs));
  return new GatewayError({
    status: 429,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    message,
    headers: { ...headers, 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) },
  });
}

/** 404: `GET /api/providers/{provider}` names no known provider. */
export function providerNotFound(provider: string, known: readonly string[]): GatewayError {
  return new GatewayError({
    status: 404,
    type: 'not_found_error',
    code: 'provider_not_found',
    message: `Unknown provider "${provider}". Known providers: ${known.join(', ') || '(none)'}.`,
  });
}

/** 400: a request's `model` has a `provider/` prefix that names no provider. */
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
  return new GatewayError({
    status: 404,
    type: 'not_found_error',
    code: 'model_not_found',
    param: 'model',
    message: detail ?? `The model "${model}" does not exist or is not available. GET /api/v1/models lists the models you can use.`,
  });
}

/** 400: malformed JSON, wrong types, missing fields. `param` names the offending field. */
export function invalidRequest(message: string, param: string | null = null): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_request',
    param,
    message,
    headers: { 'x-should-retry': 'false' },
  });
}

/** 413: the request body exceeds `maxBodyBytes`. */
export function requestTooLarge(maxBodyBytes: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `Request body exceeds the gateway's limit of ${maxBodyBytes} bytes.`,
    headers: { 'x-should-retry': 'false' },
  });
}

/** 400: no credential (user's own or shared) for the provider. */
export function providerNotConfigured(provider: string): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'provider_not_configured',
    param: 'model',
    message: `Provider "${provider}" has no credential for you. Ask an operator to configure it, or set your own with "tollgate credentials set".`,
  });
}

/**
 * An upstream answered with an error, or could not be reached. `status` is the upstream's 4xx, or 502
 * for an upstream 5xx / connection failure; `code` is the provider's own code when it has one.
 */
export function upstreamError(init: { status: number; code?: string | null; message: string; headers?: Record<string, string>; cause?: unknown }): GatewayError {
  return new GatewayError({
    status: init.status,
    type: 'upstream_error',
    code: init.code || 'upstream_error',
    message: init.message,
    headers: init.headers ?? {},
    cause: init.cause,
  });
}

/** 504: the upstream did not connect, answer or keep sending within its timeout. */
export function upstreamTimeout(provider: string, phase: 'connect' | 'headers' | 'body', cause?: unknown): GatewayError {
  return new GatewayError({
    status: 504,
    type: 'upstream_error',
    code: 'upstream_timeout',
    message: `Upstream "${provider}" timed out (${phase}). Try again; if it persists the provider may be degraded.`,
    cause,
  });
}

/** 404 for a path the gateway does not serve. */
export function routeNotFound(method: string, path: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: 'not_found_error',
    code: 'not_found',
    message: `No route for ${method} ${path}. The API lives under /api (e.g. POST /api/v1/chat/completions).`,
  });
}

/** 405 for a known path with the wrong method. */
export function methodNotAllowed(method: string, path: string, allowed: string): GatewayError {
  return new GatewayError({
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: `${method} is not allowed on ${path}; use ${allowed}.`,
    headers: { allow: allowed },
  });
}

/** 503 while the gateway drains for shutdown. */
export function shuttingDown(): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'server_error',
    code: 'shutting_down',
    message: 'The gateway is shutting down. Retry shortly.',
    headers: { connection: 'close' },
  });
}

/** 500: anything unexpected. Details go to the server log only. */
export function internalError(cause?: unknown): GatewayError {
  return new GatewayError({
    status: 500,
    type: 'server_error',
    code: 'internal_error',
    message: 'The gateway hit an unexpected error. It has been logged; quote the x-request-id if you report it.',
    cause,
  });
}

/** 401 on `/admin/api/*` without a live admin session. */
export function sessionRequired(): GatewayError {
  return new GatewayError({
    status: 401,
    type: 'authentication_error',
    code: 'session_required',
    message: 'Log in first: POST /admin/api/login with {"username","password"}. Sessions end after inactivity.',
  });
}

/** 401: admin login with a wrong username or password (one message for both, so names cannot be probed). */
export function invalidCredentials(): GatewayError {
  return new GatewayError({ status: 401, type: 'authentication_error', code: 'invalid_credentials', message: 'Wrong username or password.' });
}

/** 429: too many failed admin logins for a username or from an address. */
export function tooManyLoginAttempts(retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError({
    status: 429,
    type: 'rate_limit_error',
    code: 'too_many_login_attempts',
    message: `Too many failed logins. Try again in ${seconds} seconds.`,
    headers: { 'retry-after': String(seconds) },
  });
}

/** 403: a mutating admin call from a page that is not the gateway's own (CSRF). */
export function originMismatch(): GatewayError {
  return new GatewayError({
    status: 403,
    type: 'permission_error',
    code: 'origin_mismatch',
    message: "This request came from another site (its Origin is not the gateway's own) and was refused.",
  });
}

/** 404 for an admin resource: `code` names what is missing (`user_not_found`, `key_not_found`, ...). */
export function resourceNotFound(code: string, message: string, param: string | null = null): GatewayError {
  return new GatewayError({ status: 404, type: 'not_found_error', code, message, param });
}

/** 409: a name or model that must be unique exists already. */
export function conflict(message: string, param: string | null = null): GatewayError {
  return new GatewayError({ status: 409, type: 'invalid_request_error', code: 'conflict', message, param });
}

/** Anything thrown, as a GatewayError: known ones pass through, the rest become `internal_error`. */
export function toGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError ? err : internalError(err);
}
