/**
 * OpenAI Chat Completions upstream. The canonical format is OpenAI's own, so requests and answers
 * pass through nearly unchanged; the provider's work is usage capture and error mapping.
 *
 * Sources (shared/reference/provider-wire-formats.md §1): API reference
 * https://platform.openai.com/docs/api-reference/chat/create ; openai-node
 * `src/resources/chat/completions/completions.ts` (shapes), `src/core/streaming.ts` (an SSE `data`
 * with a top-level `error` is an error), `src/core/error.ts` (error body); rate-limit and error codes
 * https://platform.openai.com/docs/guides/rate-limits , https://developers.openai.com/api/docs/guides/error-codes .
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../../core/chat-types.ts';
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder, UpstreamCall } from '../../../core/upstream-call.ts';
import { GatewayError, modelNotFound, upstreamError } from '../../../core/errors.ts';
import { headerValue, malformedResponse, truncatedStream } from './canonical.ts';
import { ProviderService, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from './base.ts';

/** OpenAI's error body; some compatible servers send a bare string or no wrapper. */
interface OpenAIErrorBody {
  error?: { message?: string; type?: string; code?: string | number | null; param?: string | null } | string;
  message?: string;
  code?: string | number | null;
}

/** Quota / spend 429s: retrying will not help (reference §1.5). */
const NOT_RETRYABLE_429 = new Set([
  'insufficient_quota', 'credit_balance_exhausted', 'organization_spend_limit_exceeded',
  'project_spend_limit_exceeded', 'organization_usage_limit_exceeded',
]);

function parseErrorBody(bodyText: string): { message: string | null; type: string | null; code: string | null } {
  let body: OpenAIErrorBody;
  try {
    body = JSON.parse(bodyText) as OpenAIErrorBody;
  } catch {
    return { message: null, type: null, code: null };
  }
  if (typeof body?.error === 'string') return { message: body.error, type: null, code: null };
  const error = body?.error ?? body;
  const code = error?.code;
  return {
    message: typeof error?.message === 'string' ? error.message : null,
    type: typeof (error as { type?: unknown })?.type === 'string' ? (error as { type: string }).type : null,
    code: code === null || code === undefined ? null : String(code),
  };
}

/**
 * Maps an OpenAI(-shaped) error answer to the contract: 4xx keep their status, 5xx become 502; the
 * upstream's code is kept; 401/403 messages are replaced (they can echo part of the credential).
 */
export function mapOpenAIError(provider: string, model: string, status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const { message, type, code } = parseErrorBody(bodyText);
  if (status === 404 && (code === 'model_not_found' || /model/i.test(message ?? ''))) {
    return modelNotFound(model, `The model "${model}" does not exist at provider "${provider}"${message ? ` (upstream says: ${message})` : ''}.`);
  }
  const out: Record<string, string> = {};
  if (status === 401 || status === 403) {
    return upstreamError({
      status,
      code: code ?? (status === 401 ? 'upstream_authentication_error' : 'upstream_permission_error'),
      message: `Provider "${provider}" rejected the gateway's credential (${status}). An operator must fix the provider key.`,
      headers: { 'x-should-retry': 'false' },
    });
  }
  if (status === 429 || status === 503) {
    const retryAfter = headerValue(headers, 'retry-after');
    const retryAfterMs = headerValue(headers, 'retry-after-ms');
    if (retryAfter) out['retry-after'] = retryAfter;
    if (retryAfterMs) out['retry-after-ms'] = retryAfterMs;
    if (NOT_RETRYABLE_429.has(code ?? '') || type === 'insufficient_quota') out['x-should-retry'] = 'false';
  } else if (status >= 400 && status < 500 && status !== 408 && status !== 409) {
    out['x-should-retry'] = 'false';
  }
  const outStatus = status >= 500 ? 502 : status;
  return upstreamError({
    status: outStatus,
    code,
    message: `Provider "${provider}" answered ${status}${message ? `: ${message}` : '.'}`,
    headers: out,
  });
}

/** Reads `chat.completion.chunk` events; `[DONE]` ends the stream; `{"error":...}` is an in-band error. */
class OpenAIStreamDecoder implements StreamDecoder {
  private finished = false;
  constructor(private readonly provider: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const data = event.data;
    if (data === '[DONE]') return true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw malformedResponse(this.provider, 'a stream event that is not JSON');
    }
    const chunk = parsed as ChatCompletionChunk & { error?: unknown };
    if (event.event === 'error' || (chunk && chunk.error !== undefined)) {
      const { message, code } = parseErrorBody(data);
      throw upstreamError({ status: 502, code, message: `Provider "${this.provider}" failed mid-stream${message ? `: ${message}` : '.'}` });
    }
    if (!chunk || !Array.isArray(chunk.choices)) throw malformedResponse(this.provider, 'a stream event without "choices"');
    for (const choice of chunk.choices) if (choice.finish_reason) this.finished = true;
    out.push({ chunk, raw: data });
    return false;
  }

  finish(): void {
    if (!this.finished) throw truncatedStream(this.provider);
  }
}

export class OpenAIProvider extends ProviderService {
  readonly name: string = 'OpenAI';

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const stream = request.stream === true;
    const body: ChatCompletionRequest = { ...request, model };
    // Always ask for usage so streams are billed; the core strips it if the client did not ask.
    if (stream) body.stream_options = { ...request.stream_options, include_usage: true };
    return this.postJson(credential, origin, `${basePath}/chat/completions`, body, stream, this.codec(model));
  }

  protected codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapOpenAIError(provider, model, status, bodyText, headers),
      decodeResponse(bodyText) {
        let completion: ChatCompletion;
        try {
          completion = JSON.parse(bodyText) as ChatCompletion;
        } catch {
          throw malformedResponse(provider, 'a response that is not JSON');
        }
        if (!completion || !Array.isArray(completion.choices)) throw malformedResponse(provider, 'a response without "choices"');
        return { completion, raw: bodyText };
      },
      createStreamDecoder: () => new OpenAIStreamDecoder(provider),
    };
  }

  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const list = (await this.upstream.getJson(this.id, `${credential.baseUrl.replace(/\/+$/, '')}/models`, this.authHeaders(credential), signal)) as {
      data?: Array<{ id?: unknown; created?: unknown; owned_by?: unknown }>;
    };
    if (!list || !Array.isArray(list.data)) throw malformedResponse(this.id, 'a model list without "data"');
    return list.data
      .filter((m): m is { id: string; created?: unknown; owned_by?: unknown } => typeof m?.id === 'string' && m.id !== '')
      .map((m) => ({
        id: m.id,
        created: typeof m.created === 'number' ? m.created : 0,
        owned_by: typeof m.owned_by === 'string' ? m.owned_by : this.id,
      }));
  }
}
