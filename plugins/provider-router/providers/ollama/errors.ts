/**
 * Ollama error answers (`{"error": "..."}`, or a reverse proxy's plain text) and in-band errors.
 *
 * Sources: https://docs.ollama.com/api/errors (mid-stream as an NDJSON line with the status
 * unchanged); 503 "server busy" when `OLLAMA_MAX_QUEUE` is exceeded
 * (https://docs.ollama.com/faq#how-does-ollama-handle-concurrent-requests).
 */
import { GatewayError, modelNotFound, upstreamError } from '../../../../core/errors.ts';
import { headerValue } from '../canonical.ts';

/** An in-band `{"error": "..."}` (a 200 body or a stream line) as a 502. */
export function inBandError(provider: string, error: unknown, where: string): GatewayError {
  const message = typeof error === 'string' && error ? `: ${error}` : '.';
  return upstreamError({ status: 502, code: 'upstream_error', message: `Provider "${provider}" failed ${where}${message}` });
}

/**
 * The upstream's message: the `error` string of Ollama's body, or a short plain-text body (a reverse
 * proxy's "404 page not found"); null for HTML or anything long.
 */
function errorMessage(bodyText: string): string | null {
  try {
    const body = JSON.parse(bodyText) as { error?: unknown };
    if (typeof body?.error === 'string' && body.error) return body.error;
    if (body?.error && typeof (body.error as { message?: unknown }).message === 'string') return (body.error as { message: string }).message;
    return null;
  } catch {
    const text = bodyText.trim();
    return text && text.length <= 200 && !text.includes('<') ? text : null;
  }
}

function retryHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const retryAfter = headerValue(headers, 'retry-after');
  const retryAfterMs = headerValue(headers, 'retry-after-ms');
  if (retryAfter) out['retry-after'] = retryAfter;
  if (retryAfterMs) out['retry-after-ms'] = retryAfterMs;
  return out;
}

/**
 * Maps an Ollama error answer to the contract: 404 "model ... not found" → 404 `model_not_found`;
 * 401/403 keep their status with a replaced message (a proxy's text may echo the key); 402 (Ollama
 * cloud: usage exhausted) → 402 `insufficient_quota`, not retryable; 429 keeps `retry-after`; 503
 * (queue full, "server busy") → 503 `overloaded`; other 4xx keep their status and are not retryable;
 * other 5xx → 502.
 */
export function mapOllamaError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const message = errorMessage(bodyText);
  if (status === 404 && /model\b.*\bnot found/i.test(message ?? '')) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}" (upstream says: ${message}). An operator can pull it with "ollama pull ${model}".`);
  }
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: status === 401 ? 'upstream_authentication_error' : 'upstream_permission_error',
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  const said = `Provider "${provider}" answered ${status}${message ? `: ${message}` : '.'}`;
  if (status === 429) return upstreamError({ status, code: 'rate_limit_exceeded', message: said, headers: retryHeaders(headers) });
  if (status === 402) return upstreamError({ status, code: 'insufficient_quota', message: said, headers: { 'x-should-retry': 'false' } });
  if (status === 503) return upstreamError({ status: 503, code: 'overloaded', message: said, headers: retryHeaders(headers) });
  if (status >= 500) return upstreamError({ status: 502, message: said });
  const retryable = status === 408 || status === 409;
  return upstreamError({ status, message: said, headers: retryable ? {} : { 'x-should-retry': 'false' } });
}
