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

/** Key problems come back as 400 INVALID_ARGUMENT with an `ErrorInfo` reason `API_KEY_…`. */
function isCredentialError(status: number, error: GeminiErrorStatus): boolean {
  if (status === 401 || status === 403) return true;
  return (error.details ?? []).some((d) => typeof d?.reason === 'string' && d.reason.startsWith('API_KEY_'));
}

/**
 * The policy's facts from a Gemini error status: the code kept is Gemini's `status`, lowercased
 * (`invalid_argument`, `internal`); key errors are credential errors whatever their status; a 404
 * on `generateContent` is the model; a per-day quota (`QuotaFailure` with a `…PerDay…` quota id) is
 * spent for the day; `RetryInfo.retryDelay` is the retry hint (Gemini sends no rate-limit headers).
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
