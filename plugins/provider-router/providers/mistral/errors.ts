/**
 * Mistral error answers: every body shape Mistral uses, and the in-band failures of a generation.
 *
 * Sources: https://docs.mistral.ai/resources/error-glossary ; 422 bodies
 * `src/models/errors/httpvalidationerror.ts` of `@mistralai/mistralai`; unknown model
 * `{"type":"invalid_model","code":"1500"}` (tmc/langchaingo#1233); rate-limit headers
 * `ratelimitbysize-*` (shared/reference/provider-wire-formats.md §4.4, third-party).
 */
import { GatewayError, invalidRequest, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import { headerValue } from '../canonical.ts';


export function generationFailed(provider: string): GatewayError {
  return upstreamError({ status: 502, code: 'upstream_error', message: `Provider "${provider}" stopped generating with an error (finish_reason "error"); the answer is incomplete. Retry the request.` });
}


interface ParsedError {
  message: string | null;
  type: string | null;
  code: string | null;
  /** The client-side field a 422 names, when it names one. */
  param: string | null;
}

interface ValidationDetail {
  loc?: Array<string | number>;
  msg?: string;
}

/** Mistral's request field → the OpenAI field the client sent. */
const CLIENT_FIELD: Record<string, string> = { random_seed: 'seed' };

/** A 422 `loc` (`["body","messages",2,"content"]`) as the client's param (`messages[2].content`). */
function detailParam(loc: Array<string | number> | undefined): string | null {
  const [first, ...rest] = (loc ?? []).filter((part, i) => !(i === 0 && part === 'body'));
  if (first === undefined) return null;
  const head = typeof first === 'string' ? CLIENT_FIELD[first] ?? first : String(first);
  return head + rest.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('');
}

function fromDetail(detail: unknown): Pick<ParsedError, 'message' | 'param'> {
  if (typeof detail === 'string') return { message: detail, param: null };
  if (!Array.isArray(detail)) return { message: null, param: null };
  const items = detail as ValidationDetail[];
  const message = items.map((d) => `${detailParam(d.loc) ?? 'body'}: ${d.msg ?? 'invalid'}`).join('; ');
  return { message: message || null, param: detailParam(items[0]?.loc) };
}

/** Mistral's `message` may be a string, a `{detail}` object, or that object JSON-encoded (§4.4). */
function fromMessage(message: unknown): Pick<ParsedError, 'message' | 'param'> {
  if (typeof message === 'string') {
    if (message.trimStart().startsWith('{')) {
      try {
        return fromMessage(JSON.parse(message));
      } catch {
        return { message, param: null };
      }
    }
    return { message, param: null };
  }
  if (message && typeof message === 'object' && 'detail' in message) return fromDetail((message as { detail: unknown }).detail);
  return { message: message === undefined || message === null ? null : JSON.stringify(message), param: null };
}

/** Reads any of Mistral's error bodies: `{object:"error",message,type,param,code}`, `{detail}`, `{message}`. */
export function parseMistralError(bodyText: string): ParsedError {
  let body: Record<string, unknown> | null;
  try {
    body = JSON.parse(bodyText) as Record<string, unknown> | null;
  } catch {
    return { message: null, type: null, code: null, param: null };
  }
  if (!body || typeof body !== 'object') return { message: null, type: null, code: null, param: null };
  const inner = body.error && typeof body.error === 'object' ? (body.error as Record<string, unknown>) : body;
  const { message, param } = inner.detail !== undefined ? fromDetail(inner.detail) : fromMessage(inner.message ?? (typeof body.error === 'string' ? body.error : undefined));
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);
  return { message, type: text(inner.type), code: text(inner.code), param };
}

/** `retry-after` (+ `-ms`) from Mistral's `retry-after` or `ratelimitbysize-reset` (seconds). */
function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const seconds = Number(headerValue(headers, 'retry-after') ?? headerValue(headers, 'ratelimitbysize-reset'));
  if (Number.isFinite(seconds) && seconds >= 0) {
    out['retry-after'] = String(Math.ceil(seconds));
    out['retry-after-ms'] = String(Math.round(seconds * 1000));
  }
  return out;
}

function isUnknownModel(status: number, parsed: ParsedError): boolean {
  if (parsed.type === 'invalid_model' || parsed.code === '1500') return status === 400 || status === 404;
  return status === 404 && /model/i.test(parsed.message ?? '');
}

/**
 * A Mistral error answer as the contract's error: 401/403 keep their status with a replaced message
 * (never echo upstream text near a credential); unknown model → 404 `model_not_found`; 422 → 400
 * `invalid_request` naming the field; 429 → 429 with `retry-after(-ms)` (`x-should-retry: false`
 * when the monthly budget is spent); 503 → 503 `overloaded`; other 5xx → 502; other 4xx keep their
 * status with `x-should-retry: false`.
 */
export function mapMistralError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const parsed = parseMistralError(bodyText);
  const says = `Provider "${provider}" answered ${status}${parsed.message ? `: ${parsed.message}` : '.'}`;
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: status === 401 ? 'upstream_authentication_error' : 'upstream_permission_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (isUnknownModel(status, parsed)) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}"${parsed.message ? ` (upstream says: ${parsed.message})` : ''}.`);
  }
  if (status === 422) return invalidRequest(says, parsed.param);
  if (status === 429) {
    const quotaSpent = headerValue(headers, 'x-ratelimitbysize-remaining-month') === '0';
    return upstreamError({
      status,
      code: quotaSpent ? 'insufficient_quota' : 'rate_limit_exceeded',
      message: says,
      headers: quotaSpent ? { 'x-should-retry': 'false' } : retryHeaders(headers),
    });
  }
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: says, headers: retryHeaders(headers) });
  if (status >= 500) return upstreamError({ status: 502, code: parsed.type ?? parsed.code, message: says });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code: parsed.type ?? parsed.code, message: says, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}
