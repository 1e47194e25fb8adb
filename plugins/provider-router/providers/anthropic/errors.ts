/**
 * Anthropic error answers and in-band stream errors.
 *
 * Sources: https://platform.claude.com/docs/en/api/errors (body `{"type":"error","error":{"type","message"},
 * "request_id"}`, the status of each `error.type`, 529 `overloaded_error`); rate limits and their
 * headers: https://platform.claude.com/docs/en/api/rate-limits ; shared/reference/provider-wire-formats.md §2.6.
 */
import { GatewayError, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import { headerValue } from '../canonical.ts';

export interface AnthropicErrorBody {
  type?: string;
  error?: { type?: string; message?: string; details?: { error_code?: string } | null };
  request_id?: string;
}

/** HTTP status of each documented `error.type` (used for in-band stream errors, which carry none). */
const ERROR_TYPE_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400, authentication_error: 401, billing_error: 402, permission_error: 403,
  not_found_error: 404, request_too_large: 413, rate_limit_error: 429, api_error: 500,
  timeout_error: 504, overloaded_error: 529,
};

export function statusOfErrorType(type: string | undefined): number {
  return ERROR_TYPE_STATUS[type ?? ''] ?? 500;
}

/** `retry-after` (seconds) passed on, with `retry-after-ms` derived for the OpenAI SDK. */
function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const retryAfter = headerValue(headers, 'retry-after');
  const seconds = Number(retryAfter);
  if (!retryAfter || !Number.isFinite(seconds) || seconds < 0) return {};
  return { 'retry-after': retryAfter, 'retry-after-ms': String(Math.round(seconds * 1000)) };
}

/**
 * Maps an Anthropic error answer (`{"type":"error","error":{"type","message"},"request_id"}`) to the
 * contract: 529 / `overloaded_error` → 503 `overloaded`; 429 keeps its status and `retry-after`
 * (monthly spend cap `enforced_spend_limit_reached` → `insufficient_quota`, not retryable); 401/403
 * messages are replaced; 404 → `model_not_found`; other 4xx keep their status (not retryable, except
 * 408/409); 5xx → 502. Messages quote Anthropic's request id.
 */
export function mapAnthropicError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  let body: AnthropicErrorBody = {};
  try {
    body = (JSON.parse(bodyText) as AnthropicErrorBody) ?? {};
  } catch {
    // Not JSON (a proxy's page, an empty body): the status alone decides.
  }
  const requestId = body.request_id ?? headerValue(headers, 'request-id');
  return anthropicError(provider, model, status, body, headers, `answered ${status}`, requestId);
}

export function anthropicError(
  provider: string, model: string, status: number, body: AnthropicErrorBody,
  headers: Record<string, string | string[] | undefined>, what: string, requestId?: string,
): GatewayError {
  const type = body.error?.type;
  const upstreamText = typeof body.error?.message === 'string' ? body.error.message : null;
  const detail = `${upstreamText ? `: ${upstreamText}` : ''}${requestId ? ` (request-id ${requestId})` : ''}`;
  const message = sentence(`Provider "${provider}" ${what}${detail}`);
  if (status === 529 || type === 'overloaded_error') {
    return upstreamError({ status: 503, code: 'overloaded', message, headers: retryHeaders(headers) });
  }
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: type ?? (status === 401 ? 'authentication_error' : 'permission_error'),
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (status === 404) return modelNotFound(model, sentence(`The model "${model}" does not exist at provider "${provider}"${detail}`));
  if (status === 429) return rateLimitError(body, headers, message);
  if (status >= 500) return upstreamError({ status: 502, code: type ?? null, message });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, code: type ?? null, message, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

function rateLimitError(body: AnthropicErrorBody, headers: Record<string, string | string[] | undefined>, message: string): GatewayError {
  if (body.error?.details?.error_code === 'enforced_spend_limit_reached') {
    return upstreamError({ status: 429, code: 'insufficient_quota', message, headers: { 'x-should-retry': 'false' } });
  }
  return upstreamError({ status: 429, code: 'rate_limit_exceeded', message, headers: retryHeaders(headers) });
}
