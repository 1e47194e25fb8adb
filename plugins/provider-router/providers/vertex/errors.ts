/**
 * Vertex AI's error answers, read into the shared policy's facts (`../upstream-error-policy.ts`).
 * Vertex answers with Google's `Status` body, `{"error": {"code", "message", "status", "details"}}`
 * (sometimes wrapped in a one-element array), for what its front end decides: quota, IAM, unknown
 * models. A Claude model's own refusals (an invalid Messages body, Anthropic's overload) come as
 * Anthropic's `{"type": "error", "error": {"type", "message"}}` and are read as Anthropic's.
 *
 * | `status` | HTTP | here |
 * |---|---|---|
 * | `RESOURCE_EXHAUSTED` | 429 | rate limit, retried (`RetryInfo.retryDelay` as the delay); a per-day quota is `insufficient_quota` |
 * | `UNAUTHENTICATED` | 401 | `upstream_authentication_error` |
 * | `PERMISSION_DENIED` | 403 | `upstream_authentication_error`: the credential's principal lacks IAM permission (`aiplatform.endpoints.predict`) in the project, or the API is off; a pool rests that credential |
 * | `NOT_FOUND` | 404 | `model_not_found` (the model is not served in this location, or not enabled in Model Garden) |
 * | `INVALID_ARGUMENT`, `FAILED_PRECONDITION` | 400 | 400, code kept |
 * | `UNAVAILABLE` | 503 | 503 `overloaded` |
 * | `INTERNAL` | 500 | 502 |
 *
 * Sources: https://cloud.google.com/vertex-ai/docs/general/troubleshooting ;
 * https://cloud.google.com/apis/design/errors (the `Status` body and codes);
 * https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude (Claude's errors).
 */
import type { GatewayError } from '../../../../core/errors.ts';
import type { UpstreamHeaders } from '../canonical.ts';
import { mapAnthropicError } from '../anthropic/errors.ts';
import { geminiErrorFacts, type GeminiErrorStatus } from '../gemini/errors.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

const CREDENTIAL_STATUSES: ReadonlySet<string> = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED']);

/** The body's Google `Status`, `{}` when it has none; null when the body is Anthropic's error. */
function googleStatusOf(bodyText: string): GeminiErrorStatus | null {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return {};
  }
  if ((body as { type?: unknown } | null)?.type === 'error') return null;
  const error = Array.isArray(body) ? (body[0] as { error?: unknown } | undefined)?.error : (body as { error?: unknown } | null)?.error;
  return error && typeof error === 'object' ? error : {};
}

/** The policy's facts of a Google `Status` answered with HTTP `status` (the module doc's table). */
export function vertexErrorFacts(status: number, error: GeminiErrorStatus): UpstreamErrorFacts {
  const facts = geminiErrorFacts(status, error);
  if (status === 401 || CREDENTIAL_STATUSES.has(error.status ?? '')) facts.kind = 'credential';
  else if (status === 404 || error.status === 'NOT_FOUND') {
    facts.kind = 'unknown_model';
    facts.hint = 'Vertex AI names Claude models with their version ("claude-sonnet-4-5@20250929") and Gemini models by id ("gemini-2.5-flash"); the model must be served in the provider\'s location and, for Claude, enabled in the project\'s Model Garden.';
  }
  return facts;
}

/** A Vertex AI error answer as the client's error, by the shared policy. */
export function mapVertexError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  const error = googleStatusOf(bodyText);
  if (error === null) return mapAnthropicError(provider, model, status, bodyText, headers);
  return upstreamErrorFor(provider, model, status, vertexErrorFacts(status, error), headers);
}
