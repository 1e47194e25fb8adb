/**
 * Bedrock's error answers and stream exceptions, read into the shared policy's facts
 * (`../upstream-error-policy.ts`). An answer names its error in the `x-amzn-ErrorType` header
 * (`ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/`) and says why in the
 * body `{"message": "..."}`; a stream names it in `:exception-type` (`throttlingException`).
 *
 * | error | status | here |
 * |---|---|---|
 * | `ThrottlingException` | 429 | rate limit, retried |
 * | `AccessDeniedException`, `UnrecognizedClientException`, `InvalidSignatureException`, `ExpiredTokenException` | 403 | `upstream_authentication_error` |
 * | `ValidationException` | 400 | 400, code kept; "The provided model identifier is invalid." is an unknown model |
 * | `ResourceNotFoundException` | 404 | `model_not_found` |
 * | `ModelNotReadyException` | 429 | 503 `overloaded` (the model is loading, not the account throttled) |
 * | `ServiceUnavailableException` | 503 | 503 `overloaded` |
 * | `ModelTimeoutException` | 408 | 504 `upstream_timeout` |
 * | `InternalServerException`, `ModelStreamErrorException`, `ModelErrorException` | 500, 424 | 502 |
 * | `ServiceQuotaExceededException` | 400 | `insufficient_quota` |
 *
 * The request id an operator quotes to AWS is `x-amzn-RequestId`.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html and
 * API_runtime_Converse.html (Errors); https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html.
 */
import type { GatewayError } from '../../../../core/errors.ts';
import { headerValue, type UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

const CREDENTIAL_ERRORS: ReadonlySet<string> = new Set([
  'AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException',
  'IncompleteSignatureException', 'MissingAuthenticationTokenException', 'InvalidClientTokenId',
]);
const OVERLOADED_ERRORS: ReadonlySet<string> = new Set(['ModelNotReadyException', 'ServiceUnavailableException']);

/** The status a stream exception stands for (a stream carries none). */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  ThrottlingException: 429, ValidationException: 400, ModelStreamErrorException: 424, InternalServerException: 500,
  ServiceUnavailableException: 503, ModelTimeoutException: 408, ModelNotReadyException: 429, AccessDeniedException: 403,
  ResourceNotFoundException: 404, ServiceQuotaExceededException: 400,
};

const INVALID_MODEL_ID = /model identifier is invalid|model id.*(not|isn't) (valid|supported)/i;

/** `ThrottlingException:http://...` or `com.amazon.bedrock#ThrottlingException` → `ThrottlingException`; a stream's `throttlingException` likewise. */
export function errorTypeName(raw: string | undefined | null): string | null {
  if (!raw) return null;
  const name = raw.split(':')[0]!.split('#').pop()!.trim();
  return name ? name[0]!.toUpperCase() + name.slice(1) : null;
}

/** The policy's facts of a Bedrock error of type `type` with `message` (module doc's table). */
export function bedrockErrorFacts(type: string | null, message: string | null, requestId: string | null): UpstreamErrorFacts {
  const facts: UpstreamErrorFacts = { message, type, code: type, requestId };
  if (type && CREDENTIAL_ERRORS.has(type)) facts.kind = 'credential';
  else if (type && OVERLOADED_ERRORS.has(type)) facts.kind = 'overloaded';
  else if (type === 'ModelTimeoutException') facts.kind = 'timeout';
  else if (type === 'ServiceQuotaExceededException') facts.kind = 'quota';
  else if (type === 'ResourceNotFoundException' || (type === 'ValidationException' && INVALID_MODEL_ID.test(message ?? ''))) {
    facts.kind = 'unknown_model';
    facts.hint = 'Bedrock names models by model id or inference profile id (e.g. "anthropic.claude-sonnet-4-6-v1:0", "us.anthropic.claude-sonnet-4-6-v1:0"); the account must have access to it in this region.';
  }
  return facts;
}

/** A Bedrock error answer as the client's error, by the shared policy. */
export function mapBedrockError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  let body: { message?: unknown; Message?: unknown; __type?: unknown } = {};
  try {
    body = (JSON.parse(bodyText) as typeof body) ?? {};
  } catch {
    // Not JSON (a proxy's page, an empty body): the header and the status decide.
  }
  const type = errorTypeName(headerValue(headers, 'x-amzn-errortype') ?? (typeof body.__type === 'string' ? body.__type : null));
  const text = typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : null;
  const facts = bedrockErrorFacts(type, text, headerValue(headers, 'x-amzn-requestid') ?? null);
  // A model still loading is answered 429 by Bedrock, but waiting for it is not a rate limit.
  const effective = type === 'ModelNotReadyException' ? 503 : status;
  return upstreamErrorFor(provider, model, effective, facts, headers);
}

/** A stream exception (after the stream began) as the client's error. */
export function bedrockStreamError(provider: string, model: string, rawType: string, message: string | null): GatewayError {
  const type = errorTypeName(rawType);
  const status = type === 'ModelNotReadyException' ? 503 : EXCEPTION_STATUS[type ?? ''] ?? 500;
  return upstreamErrorFor(provider, model, status, bedrockErrorFacts(type, message, null), {}, 'stream');
}

/** The Anthropic error type a Bedrock exception stands for, for the error event a Claude stream ends with. */
export function anthropicErrorTypeOf(rawType: string): string {
  switch (errorTypeName(rawType)) {
    case 'ThrottlingException': return 'rate_limit_error';
    case 'ModelNotReadyException':
    case 'ServiceUnavailableException': return 'overloaded_error';
    case 'ValidationException': return 'invalid_request_error';
    case 'ModelTimeoutException': return 'timeout_error';
    case 'AccessDeniedException': return 'permission_error';
    default: return 'api_error';
  }
}
