/**
 * Ollama error answers (`{"error": "..."}`, or a reverse proxy's plain text) and in-band errors.
 *
 * Sources: https://docs.ollama.com/api/errors (mid-stream as an NDJSON line with the status
 * unchanged); 503 "server busy" when `OLLAMA_MAX_QUEUE` is exceeded
 * (https://docs.ollama.com/faq#how-does-ollama-handle-concurrent-requests).
 */
import { upstreamError, type GatewayError } from '../../../../core/errors.ts';
import type { UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

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

/**
 * The policy's facts from an Ollama error answer (its body has a message and nothing else): a 404
 * "model ... not found" is a model that was never pulled; a 402 (Ollama's cloud: usage limit
 * reached) is a spent quota.
 */
export function ollamaErrorFacts(status: number, bodyText: string, model: string): UpstreamErrorFacts {
  const facts: UpstreamErrorFacts = { message: errorMessage(bodyText), type: null, code: null };
  if (status === 404 && /model\b.*\bnot found/i.test(facts.message ?? '')) {
    facts.kind = 'unknown_model';
    facts.hint = `An operator can pull it with "ollama pull ${model}".`;
  } else if (status === 402) {
    facts.kind = 'quota';
  }
  return facts;
}

/** An Ollama error answer as the client's error, by the shared policy (`upstream-error-policy.ts`). */
export function mapOllamaError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  return upstreamErrorFor(provider, model, status, ollamaErrorFacts(status, bodyText, model), headers);
}
