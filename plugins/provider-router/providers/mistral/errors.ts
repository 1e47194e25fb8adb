/**
 * Mistral error answers: every body shape Mistral uses, and the in-band failures of a generation.
 *
 * Sources: https://docs.mistral.ai/resources/error-glossary ; 422 bodies
 * `src/models/errors/httpvalidationerror.ts` of `@mistralai/mistralai`; unknown model
 * `{"type":"invalid_model","code":"1500"}` (tmc/langchaingo#1233); rate-limit headers
 * `ratelimitbysize-*` (docs/provider-wire-formats.md §4.4, third-party).
 */
import { upstreamError, type GatewayError } from '../../../../core/errors.ts';
import { headerValue, type UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';


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
  if (message && typeof message === 'object' && 'detail' in message) return fromDetail(message.detail);
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

/** Mistral's `ratelimitbysize-reset` (seconds) in ms: the retry hint when no `retry-after` came. */
function resetMs(headers: UpstreamHeaders): number | null {
  const value = headerValue(headers, 'ratelimitbysize-reset');
  const seconds = value === undefined || value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

function isUnknownModel(status: number, parsed: ParsedError): boolean {
  if (parsed.type === 'invalid_model' || parsed.code === '1500') return status === 400 || status === 404;
  return status === 404 && /model/i.test(parsed.message ?? '');
}

/**
 * The policy's facts from a Mistral error answer: the code kept is Mistral's `type`, else its
 * `code`; an unknown model (404 naming the model, or `invalid_model` / code 1500 on a 400 or 404)
 * is about the model; a 429 once `x-ratelimitbysize-remaining-month` is 0 is the monthly budget,
 * spent; `ratelimitbysize-reset` is the retry hint.
 */
export function mistralErrorFacts(status: number, bodyText: string, headers: UpstreamHeaders): UpstreamErrorFacts {
  const parsed = parseMistralError(bodyText);
  const facts: UpstreamErrorFacts = Object.assign({}, parsed, { code: parsed.type ?? parsed.code, retryAfterMs: resetMs(headers) });
  if (isUnknownModel(status, parsed)) facts.kind = 'unknown_model';
  else if (status === 429 && headerValue(headers, 'x-ratelimitbysize-remaining-month') === '0') facts.kind = 'quota';
  return facts;
}

/**
 * A Mistral error answer as the client's error, by the shared policy (`upstream-error-policy.ts`);
 * a 422 names the client's field (`random_seed` → `seed`).
 */
export function mapMistralError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  return upstreamErrorFor(provider, model, status, mistralErrorFacts(status, bodyText, headers), headers);
}
