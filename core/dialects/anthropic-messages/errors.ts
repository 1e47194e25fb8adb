/**
 * Gateway errors in Anthropic's shape: `{"type":"error","error":{"type","message"}}`, the body of an
 * error response and the data of the `error` stream event. The status and headers stay the error's
 * own (`x-request-id` stands in for Anthropic's `request_id` field); the message is the contract's
 * text. The Anthropic SDK picks its exception class from the status, and Claude Code reads
 * `error.type` (e.g. to tell `overloaded_error` apart), so the type follows the status.
 *
 * Sources: https://platform.claude.com/docs/en/api/errors (400 invalid_request_error — "may also be
 * used for other 4XX status codes not listed" —, 401 authentication_error, 402 billing_error,
 * 403 permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error,
 * 500 api_error, 504 timeout_error, 529 overloaded_error); `@anthropic-ai/sdk` `src/resources/shared.ts`
 * (`ErrorObject` union: BillingError, GatewayTimeoutError `timeout_error`, OverloadedError, ...);
 * docs/provider-wire-formats.md §2.6.
 */
import type { GatewayError } from '../../errors.ts';
import type { AnthropicErrorType, ErrorResponse } from './types.ts';

/** `error.type` by status, where Anthropic documents one. */
const TYPE_BY_STATUS: Readonly<Record<number, AnthropicErrorType>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  // The gateway turns an upstream's 529 into 503 `overloaded` (docs/provider-wire-formats.md §2.6);
  // its own 503 (shutting down) is likewise "try again shortly".
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Anthropic `error.type` for a gateway error. */
export function anthropicErrorType(err: GatewayError): AnthropicErrorType {
  if (err.code === 'overloaded') return 'overloaded_error';
  const byStatus = TYPE_BY_STATUS[err.status];
  if (byStatus) return byStatus;
  // Anthropic uses invalid_request_error for the 4xx it does not list (405, 409, 422, ...).
  return err.status >= 500 ? 'api_error' : 'invalid_request_error';
}

/** The error body (and `error` event data) for `err`. */
export function anthropicErrorBody(err: GatewayError): ErrorResponse {
  return { type: 'error', error: { type: anthropicErrorType(err), message: err.message } };
}
