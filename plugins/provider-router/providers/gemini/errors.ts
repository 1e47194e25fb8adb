/**
 * Gemini error answers and in-band stream errors.
 *
 * Sources: https://ai.google.dev/gemini-api/docs/troubleshooting (statuses), https://ai.google.dev/gemini-api/docs/rate-limits
 * (quotas, `RetryInfo`); docs/provider-wire-formats.md §3.6.
 */
import type { GatewayError } from '../../../../core/errors.ts';
import type { UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

/** Google's `Status` error body (`{"error":{...}}`). */
export interface GeminiErrorStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string; violations?: Array<{ quotaId?: string }> }>;
}

function parseErrorBody(bodyText: string): GeminiErrorStatus {
  try {
    const body = JSON.parse(bodyText) as { error?: GeminiErrorStatus } | Array<{ error?: GeminiErrorStatus }> | null;
    // Some Google front ends wrap the error in a one-element array.
    const error = Array.isArray(body) ? body[0]?.error : body?.error;
    return error && typeof error === 'object' ? error : {};
  } catch {
    return {};
  }
}

const detailOf = (error: GeminiErrorStatus, type: string) => error.details?.find((d) => d?.['@type'] === `type.googleapis.com/google.rpc.${type}`);

/** `RetryInfo.retryDelay` (a protobuf Duration such as "12s" or "10.6s") in ms, or null. */
function retryDelayMs(error: GeminiErrorStatus): number | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(detailOf(error, 'RetryInfo')?.retryDelay ?? '');
  return match ? Math.ceil(Number(match[1]) * 1000) : null;
}

/**
 * `ErrorInfo` reasons about the key or its project rather than the request: the project's API is
 * switched off or the consumer suspended (403). Reasons `API_KEY_…` (invalid, expired, blocked for
 * the service, a referrer or an address) are too, on 400 and 403 alike.
 */
const PROJECT_REASONS: ReadonlySet<string> = new Set(['SERVICE_DISABLED', 'CONSUMER_SUSPENDED']);

/**
 * Google's words for a key it has blocked as leaked (403 `PERMISSION_DENIED` without a reason):
 * anchored at the start of the message, which is Google's, never the client's.
 */
const KEY_REPORTED = /^Your API key (was|has been) reported as leaked\b/i;

/**
 * A key problem: a 401, an `ErrorInfo` reason about the key or its project (a 400 `INVALID_ARGUMENT`
 * with `API_KEY_INVALID` for a wrong key), or a key reported as leaked. Any other 403 (a tuned model or
 * resource this project may not use) is the request's, not the key's.
 */
function isCredentialError(status: number, error: GeminiErrorStatus): boolean {
  if (status === 401) return true;
  const aboutKey = (error.details ?? []).some((d) => typeof d?.reason === 'string' && (d.reason.startsWith('API_KEY_') || PROJECT_REASONS.has(d.reason)));
  return aboutKey || KEY_REPORTED.test(error.message ?? '');
}

/**
 * The policy's facts from a Gemini error status: the code kept is Gemini's `status`, lowercased
 * (`invalid_argument`, `internal`); key errors are credential errors whatever their status (a 403
 * that is not one is this request's, by the policy's rule); a 404 on `generateContent` is the
 * model; a per-day quota (`QuotaFailure` with a `…PerDay…` quota id) is spent for the day;
 * `RetryInfo.retryDelay` is the retry hint (Gemini sends no rate-limit headers).
 */
export function geminiErrorFacts(status: number, error: GeminiErrorStatus): UpstreamErrorFacts {
  const name = typeof error.status === 'string' && error.status ? error.status : null;
  const facts: UpstreamErrorFacts = {
    message: typeof error.message === 'string' && error.message ? error.message : null,
    type: name,
    code: name?.toLowerCase() ?? null,
    retryAfterMs: retryDelayMs(error),
  };
  const perDay = (detailOf(error, 'QuotaFailure')?.violations ?? []).some((v) => /PerDay/i.test(v?.quotaId ?? ''));
  if (isCredentialError(status, error)) facts.kind = 'credential';
  else if (status === 404) facts.kind = 'unknown_model';
  else if (status === 429 && perDay) facts.kind = 'quota';
  return facts;
}

/** A Gemini error answer as the client's error, by the shared policy (`upstream-error-policy.ts`). */
export function mapGeminiError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  return upstreamErrorFor(provider, model, status, geminiErrorFacts(status, parseErrorBody(bodyText)), headers);
}

/** An in-band stream error event (`data: {"error":{...}}`), after the SSE headers went out; `code` is its HTTP status. */
export function streamError(provider: string, model: string, error: GeminiErrorStatus): GatewayError {
  const status = typeof error.code === 'number' ? error.code : 500;
  return upstreamErrorFor(provider, model, status, geminiErrorFacts(status, error), {}, 'stream');
}
