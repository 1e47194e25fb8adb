/**
 * Gateway errors in Google's shape: `{"error":{"code":<HTTP status>,"message","status"}}`, the body of
 * an error response and the data of a stream's error event. The HTTP status and headers stay the
 * error's own; `status` is the `google.rpc.Code` name that status stands for, which `@google/genai`
 * and Gemini CLI read (Gemini CLI retries and falls back on `RESOURCE_EXHAUSTED`).
 *
 * Sources: https://ai.google.dev/gemini-api/docs/troubleshooting (error codes),
 * https://cloud.google.com/apis/design/errors#handling_errors (HTTP ↔ `google.rpc.Code` table).
 */
import type { GatewayError } from '../../errors.ts';
import type { GeminiErrorResponse } from './types.ts';

const STATUS_BY_HTTP: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  // A budget refusal is a spent quota, which Google calls RESOURCE_EXHAUSTED.
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The `google.rpc.Code` name for a gateway error. */
export function geminiErrorStatus(err: GatewayError): string {
  if (err.code === 'budget_exceeded') return 'RESOURCE_EXHAUSTED';
  return STATUS_BY_HTTP[err.status] ?? (err.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** The error body (and stream error event data) for `err`. */
export function geminiErrorBody(err: GatewayError): GeminiErrorResponse {
  return { error: { code: err.status, message: err.message, status: geminiErrorStatus(err) } };
}
