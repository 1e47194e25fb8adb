/**
 * Anthropic error answers and in-band stream errors.
 *
 * Sources: https://platform.claude.com/docs/en/api/errors (body `{"type":"error","error":{"type","message"},
 * "request_id"}`, the status of each `error.type`, 529 `overloaded_error`); rate limits and their
 * headers: https://platform.claude.com/docs/en/api/rate-limits ; docs/provider-wire-formats.md §2.6.
 */
import type { GatewayError } from '../../../../core/errors.ts';
import { headerValue, type UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

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

function statusOfErrorType(type: string | undefined): number {
  return ERROR_TYPE_STATUS[type ?? ''] ?? 500;
}

/**
 * Anthropic's words for a key whose organization, workspace or key is switched off ("This organization
 * has been disabled.", sent as a 400 `invalid_request_error` or a 403): about the key, whatever the
 * request. Anchored at the start of the message, which is Anthropic's own, never the client's text.
 */
const ACCOUNT_DISABLED = /^(This|Your) (organization|workspace|API key|account) (has been|is) (disabled|deactivated|archived|suspended)\b/i;

/**
 * The policy's facts from an Anthropic error body: its `error.type` is the code kept (Anthropic's
 * bodies have no other); a disabled organization, workspace or key is the credential's refusal (a
 * 401 `authentication_error` is that by the policy's rule, while a 403 `permission_error`, "Your API
 * key does not have permission to use the specified resource", is this request's: a model or a
 * feature the account may not use); `overloaded_error` is an overload; the monthly spend cap (a 429
 * whose `error.details.error_code` is `enforced_spend_limit_reached`) is a spent quota; a 404 on the
 * Messages API can only be the model (the path is fixed).
 */
export function anthropicErrorFacts(status: number, body: AnthropicErrorBody, requestId: string | null): UpstreamErrorFacts {
  const type = typeof body.error?.type === 'string' ? body.error.type : null;
  const facts: UpstreamErrorFacts = { message: typeof body.error?.message === 'string' ? body.error.message : null, type, code: type, requestId };
  if (ACCOUNT_DISABLED.test(facts.message ?? '')) facts.kind = 'credential';
  else if (type === 'overloaded_error') facts.kind = 'overloaded';
  else if (body.error?.details?.error_code === 'enforced_spend_limit_reached') facts.kind = 'quota';
  else if (status === 404) facts.kind = 'unknown_model';
  return facts;
}

/**
 * An Anthropic error answer (`{"type":"error","error":{"type","message"},"request_id"}`) as the
 * client's error, by the shared policy (`upstream-error-policy.ts`). Messages quote Anthropic's
 * request id.
 */
export function mapAnthropicError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  let body: AnthropicErrorBody = {};
  try {
    body = (JSON.parse(bodyText) as AnthropicErrorBody) ?? {};
  } catch {
    // Not JSON (a proxy's page, an empty body): the status alone decides.
  }
  const requestId = body.request_id ?? headerValue(headers, 'request-id') ?? null;
  return upstreamErrorFor(provider, model, status, anthropicErrorFacts(status, body, requestId), headers);
}

/** An in-band `error` event (after the SSE headers went out): its type stands for the status it would have had. */
export function anthropicStreamError(provider: string, model: string, body: AnthropicErrorBody): GatewayError {
  const status = statusOfErrorType(body.error?.type);
  return upstreamErrorFor(provider, model, status, anthropicErrorFacts(status, body, null), {}, 'stream');
}
