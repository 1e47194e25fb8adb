/**
 * The one upstream-error policy: how an upstream's error answer becomes the client's error, whichever
 * provider sent it. Each provider reads only its own error body into `UpstreamErrorFacts` (in its
 * `errors.ts`); the status, the code, the message and the retry headers are decided here, once.
 *
 * The rules, in the order they are tried:
 * 1. The gateway's credential refused: a body the provider recognizes as being about the key itself
 *    (invalid, revoked, its key or account disabled: `kind: 'credential'`, e.g. Gemini's 400
 *    `API_KEY_INVALID`, OpenAI's `account_deactivated`), or any 401 the provider does not call
 *    `forbidden`: the status is kept, code `upstream_authentication_error` (`CREDENTIAL_REFUSED`,
 *    whatever the provider: OpenAI's own `invalid_api_key` would read as the client's Tollgate key
 *    being wrong), `x-should-retry: false`, and the message is replaced (an upstream's text about a
 *    key can quote part of it). Only this code counts against a pooled key (`upstream-health.ts`).
 * 2. A refusal the request caused: any other 403, or a 401 the provider calls `forbidden` (a valid
 *    key that may not do what this request asks: OpenAI's 403 "Project … does not have access to
 *    model …", reachable with any model name; a restricted key's missing scope): the status is kept,
 *    code `upstream_permission_error` (`REQUEST_FORBIDDEN`), `x-should-retry: false`, and a message
 *    that says so rather than blaming the gateway's key, naming the model but not quoting the
 *    upstream (whose words about a key could quote it too).
 * 3. An error the provider recognizes as being about the model (unknown, not pulled): 404
 *    `model_not_found`, `param: "model"`.
 * 4. 422 (a validation error, Mistral's `{"detail":[...]}`): 400 `invalid_request` naming the
 *    client's field when the provider could tell it, `x-should-retry: false`.
 * 5. A spent quota or spend limit (the provider recognizes it: OpenAI's `insufficient_quota`
 *    family, Anthropic's `enforced_spend_limit_reached`, Gemini's per-day quota, Mistral's monthly
 *    budget, Ollama's 402): the status is kept, code `insufficient_quota`, `x-should-retry: false`
 *    and no `retry-after` (waiting does not help).
 * 6. 429: code `rate_limit_exceeded` with `retry-after` (whole seconds, rounded up) and
 *    `retry-after-ms`.
 * 7. 503, Anthropic's 529 and any error the provider calls overloaded: 503 `overloaded` with
 *    `retry-after` / `retry-after-ms`.
 * 7b. An error the provider calls a timeout (the model did not answer in time, Bedrock's
 *    `ModelTimeoutException`): 504 `upstream_timeout`, retryable.
 * 8. Other 5xx: 502, the provider's code kept (the SDK retries a 502).
 * 9. 408 and 409: the status and the provider's code are kept and nothing says "do not retry":
 *    the OpenAI SDK retries both, and both are transient (a timeout, a conflicting request).
 * 10. Other 4xx: the status and the provider's code are kept, `x-should-retry: false`.
 *
 * Retry delays come from the upstream's `retry-after-ms` (ms), else `retry-after` (seconds or an
 * HTTP date), else the provider's own hint (Gemini's `RetryInfo.retryDelay`, Mistral's
 * `ratelimitbysize-reset`); a value that is none of these is dropped rather than passed on.
 *
 * Sources: docs/provider-wire-formats.md §1.5 (the OpenAI SDK's retry rules:
 * `x-should-retry`, `retry-after-ms`, `retry-after`; 408/409/429/5xx retried) and §7 (errors table).
 */
import { GatewayError, invalidRequest, modelNotFound, upstreamError } from '../../../core/errors.ts';
import { headerValue, type UpstreamHeaders } from './canonical.ts';

/** What a provider read from its error body (and headers), in words every provider shares. */
export interface UpstreamErrorFacts {
  /** The upstream's own text, quoted to the client (never for a refused credential or request, rules 1 and 2). */
  message: string | null;
  /** The upstream's error type, as written. Informative; the policy does not read it. */
  type: string | null;
  /** The provider's own code for the error, kept for the client where rules 8 to 10 apply. */
  code: string | null;
  /** The client's field a validation error names (rule 4). */
  param?: string | null;
  /**
   * What the body says beyond its status, when the provider recognizes it: `credential`, the key
   * itself is refused (rule 1, whatever the status); `forbidden`, a valid key may not do what this
   * request asks (rule 2; said of a 401, since a 403 is that unless `credential`); `unknown_model`
   * (rule 3), `quota` (5), `overloaded` (7), `timeout` (7b).
   */
  kind?: 'credential' | 'forbidden' | 'unknown_model' | 'quota' | 'overloaded' | 'timeout';
  /** A retry delay the provider found in its own fields (ms), used when the standard headers give none. */
  retryAfterMs?: number | null;
  /** The upstream's request id, quoted in the message so an operator can report it. */
  requestId?: string | null;
  /** A sentence appended to the model-not-found message (e.g. how to pull the model). */
  hint?: string | null;
}

/** Where the error was met: an HTTP error answer, or an error event after the stream started. */
export type UpstreamErrorPhase = 'answer' | 'stream';

const NOT_RETRYABLE = { 'x-should-retry': 'false' } as const;

/**
 * The code of rule 1, and only of it: the upstream refused the gateway's credential itself. The router
 * counts it against the pooled key that carried the attempt (`upstream-health.ts`); no other code does.
 */
export const CREDENTIAL_REFUSED = 'upstream_authentication_error';
/** The code of rule 2: the upstream refused what this request asks; the credential is not in question. */
export const REQUEST_FORBIDDEN = 'upstream_permission_error';

/**
 * The client's error for an upstream error, per the rules in the module doc. `status` is the
 * upstream's HTTP status (for a stream error event, the status its type stands for); `headers` are
 * the upstream's response headers (empty for a stream event).
 */
export function upstreamErrorFor(
  provider: string, model: string, status: number, facts: UpstreamErrorFacts,
  headers: UpstreamHeaders = {}, phase: UpstreamErrorPhase = 'answer',
): GatewayError {
  if (facts.kind === 'credential' || (status === 401 && facts.kind !== 'forbidden')) return credentialRejected(provider, status);
  if (status === 401 || status === 403) return requestForbidden(provider, model, status);
  if (facts.kind === 'unknown_model') return modelNotFound(model, unknownModelMessage(provider, model, facts));
  const message = describe(provider, phase === 'stream' ? 'failed mid-stream' : `answered ${status}`, facts);
  if (status === 422) return invalidRequest(message, facts.param ?? null);
  if (facts.kind === 'quota') return upstreamError({ status, code: 'insufficient_quota', message, headers: { ...NOT_RETRYABLE } });
  if (status === 429) return upstreamError({ status, code: 'rate_limit_exceeded', message, headers: retryHeaders(headers, facts) });
  if (status === 503 || status === 529 || facts.kind === 'overloaded') {
    return upstreamError({ status: 503, code: 'overloaded', message, headers: retryHeaders(headers, facts) });
  }
  if (facts.kind === 'timeout') return upstreamError({ status: 504, code: 'upstream_timeout', message });
  if (status >= 500) return upstreamError({ status: 502, code: facts.code, message });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code: facts.code, message, headers: retryable ? {} : { ...NOT_RETRYABLE } });
}

function credentialRejected(provider: string, status: number): GatewayError {
  return upstreamError({
    status,
    code: CREDENTIAL_REFUSED,
    message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
    headers: { ...NOT_RETRYABLE },
  });
}

function requestForbidden(provider: string, model: string, status: number): GatewayError {
  return upstreamError({
    status,
    code: REQUEST_FORBIDDEN,
    message: `Provider "${provider}" refused this request (${status}): the gateway's account there may not do what it asks `
      + `(e.g. use the model "${model}"). This is about the request, not a bad gateway key; other requests are served as usual.`,
    headers: { ...NOT_RETRYABLE },
  });
}

/** ` (request-id …)` when the upstream gave one. */
const requestRef = (facts: UpstreamErrorFacts) => (facts.requestId ? ` (request-id ${facts.requestId})` : '');

function unknownModelMessage(provider: string, model: string, facts: UpstreamErrorFacts): string {
  const says = facts.message ? ` (upstream says: ${facts.message})` : '';
  return `The model "${model}" does not exist at provider "${provider}"${says}${requestRef(facts)}.${facts.hint ? ` ${facts.hint}` : ''}`;
}

/**
 * `Provider "p" answered 429: <upstream text>`: the upstream's text is quoted as is at the end;
 * without it (or after the request id) the gateway's sentence ends with a period.
 */
function describe(provider: string, what: string, facts: UpstreamErrorFacts): string {
  const ref = requestRef(facts);
  const text = `Provider "${provider}" ${what}${facts.message ? `: ${facts.message}` : ''}${ref}`;
  return facts.message && !ref ? text : `${text}.`;
}

/** A non-negative finite number from a header value, or null. */
function nonNegative(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** The delay the upstream asks for, in ms: `retry-after-ms`, `retry-after` (seconds or HTTP date), the provider's hint. */
function retryDelayMs(headers: UpstreamHeaders, facts: UpstreamErrorFacts): number | null {
  const ms = nonNegative(headerValue(headers, 'retry-after-ms'));
  if (ms !== null) return ms;
  const retryAfter = headerValue(headers, 'retry-after');
  const seconds = nonNegative(retryAfter);
  if (seconds !== null) return seconds * 1000;
  const date = retryAfter ? Date.parse(retryAfter) : NaN;
  if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  return typeof facts.retryAfterMs === 'number' && facts.retryAfterMs >= 0 ? facts.retryAfterMs : null;
}

/** `retry-after` (whole seconds, rounded up) and `retry-after-ms`, or nothing when no delay is known. */
function retryHeaders(headers: UpstreamHeaders, facts: UpstreamErrorFacts): Record<string, string> {
  const ms = retryDelayMs(headers, facts);
  if (ms === null) return {};
  const wholeMs = Math.ceil(ms);
  return { 'retry-after': String(Math.ceil(wholeMs / 1000)), 'retry-after-ms': String(wholeMs) };
}
