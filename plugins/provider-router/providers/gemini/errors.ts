/**
 * Gemini error answers and in-band stream errors.
 *
 * Sources: https://ai.google.dev/gemini-api/docs/troubleshooting (statuses), https://ai.google.dev/gemini-api/docs/rate-limits
 * (quotas, `RetryInfo`); shared/reference/provider-wire-formats.md §3.6.
 */
import { GatewayError, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import { headerValue } from '../canonical.ts';

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

function retryHeaders(error: GeminiErrorStatus, headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const ms = retryDelayMs(error);
  if (ms !== null) return { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) };
  const value = headerValue(headers, 'retry-after');
  return value ? { 'retry-after': value } : {};
}

/** Key problems come back as 400 INVALID_ARGUMENT with an `ErrorInfo` reason `API_KEY_…`. */
function isCredentialError(status: number, error: GeminiErrorStatus): boolean {
  if (status === 401 || status === 403) return true;
  return (error.details ?? []).some((d) => typeof d?.reason === 'string' && d.reason.startsWith('API_KEY_'));
}

/**
 * A Gemini error answer as the contract's error: 4xx keep their status (`x-should-retry: false` but
 * for 408/409/429), 5xx become 502, 503 UNAVAILABLE → 503 `overloaded`, 504 → 504 `upstream_timeout`;
 * 429 passes `RetryInfo.retryDelay` as `retry-after` / `retry-after-ms`, and a per-day quota is
 * `insufficient_quota` with `x-should-retry: false`; key errors get a replaced message (Google's can
 * quote the key); a 404 is the model → `model_not_found`. The code is Gemini's `status`, lowercased.
 */
export function mapGeminiError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const error = parseErrorBody(bodyText);
  const message = typeof error.message === 'string' && error.message ? error.message : null;
  const code = typeof error.status === 'string' && error.status ? error.status.toLowerCase() : null;
  if (isCredentialError(status, error)) {
    return upstreamError({
      status,
      code: status === 403 ? 'upstream_permission_error' : 'upstream_authentication_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (status === 404) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}"${message ? ` (upstream says: ${message})` : ''}.`);
  }
  const text = `Provider "${provider}" answered ${status}${message ? `: ${message}` : '.'}`;
  if (status === 429) {
    const perDay = (detailOf(error, 'QuotaFailure')?.violations ?? []).some((v) => /PerDay/i.test(v?.quotaId ?? ''));
    if (perDay) return upstreamError({ status, code: 'insufficient_quota', message: text, headers: { 'x-should-retry': 'false' } });
    return upstreamError({ status, code: 'rate_limit_exceeded', message: text, headers: retryHeaders(error, headers) });
  }
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: text, headers: retryHeaders(error, headers) });
  if (status === 504) return upstreamError({ status: 504, code: 'upstream_timeout', message: text });
  if (status >= 500) return upstreamError({ status: 502, code, message: text });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code, message: text, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}

/** An in-band stream error event (`data: {"error":{...}}`), after the SSE headers went out. */
export function streamError(provider: string, error: GeminiErrorStatus): GatewayError {
  const status = typeof error.code === 'number' ? error.code : 500;
  const message = typeof error.message === 'string' && error.message ? `: ${error.message}` : '.';
  const code = status === 503 ? 'overloaded' : typeof error.status === 'string' ? error.status.toLowerCase() : null;
  return upstreamError({ status: status >= 500 && status !== 503 ? 502 : status, code, message: `Provider "${provider}" failed mid-stream${message}` });
}
