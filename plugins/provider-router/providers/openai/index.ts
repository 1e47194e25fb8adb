/**
 * OpenAI Chat Completions upstream. The canonical format is OpenAI's own, so requests and answers
 * pass through nearly unchanged; the provider's work is usage capture and error mapping.
 *
 * Sources (docs/provider-wire-formats.md §1): API reference
 * https://platform.openai.com/docs/api-reference/chat/create ; openai-node
 * `src/resources/chat/completions/completions.ts` (shapes), `src/core/streaming.ts` (an SSE `data`
 * with a top-level `error` is an error), `src/core/error.ts` (error body); rate-limit and error codes
 * https://platform.openai.com/docs/guides/rate-limits , https://developers.openai.com/api/docs/guides/error-codes .
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { DecodedChunk, EmbeddingsCall, FramedEvent, ModelCall, ResponseCodec, StreamDecoder, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';
import { upstreamError, type GatewayError } from '../../../../core/errors.ts';
import { malformedResponse, truncatedStream, type UpstreamHeaders } from '../canonical.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions } from '../base.ts';
import { responsesCodec } from './responses-codec.ts';
import { openAIEmbeddingsCodec } from './embeddings-codec.ts';
import { openAIPromptTokenRules } from './token-rules.ts';
import { ContentChunkReader } from './content-chunk.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

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
 * Codes OpenAI gives when the key itself is refused (`invalid_api_key`, on 401) or its account is
 * deactivated (`account_deactivated`, seen on 401 and 403): about the key whatever the request.
 */
const KEY_REFUSED_CODES = new Set(['invalid_api_key', 'account_deactivated']);

/**
 * A restricted key's 401 for an endpoint its scopes leave out ("You have insufficient permissions for
 * this operation. Missing scopes: …"): the key is valid, this request's endpoint is not allowed. The
 * text is anchored at its start, which is OpenAI's and never the client's.
 */
const MISSING_SCOPES = /^You have insufficient permissions for this operation\b/;

/**
 * The policy's facts from an OpenAI(-shaped) error answer: a key-refusal code is about the key (on
 * any status); a 401 for missing scopes is a valid key's refusal of this request (a 403, such as
 * "Project … does not have access to model …" with code `model_not_found`, is that by the policy's
 * rule); a 404 naming the model is about the model; a 429 with a quota code (or
 * `type: "insufficient_quota"`) is a spent quota.
 */
export function openAIErrorFacts(status: number, bodyText: string): UpstreamErrorFacts {
  const facts: UpstreamErrorFacts = parseErrorBody(bodyText);
  if (KEY_REFUSED_CODES.has(facts.code ?? '')) facts.kind = 'credential';
  else if (status === 401 && MISSING_SCOPES.test(facts.message ?? '')) facts.kind = 'forbidden';
  else if (status === 404 && (facts.code === 'model_not_found' || /model/i.test(facts.message ?? ''))) facts.kind = 'unknown_model';
  else if (status === 429 && (NOT_RETRYABLE_429.has(facts.code ?? '') || facts.type === 'insufficient_quota')) facts.kind = 'quota';
  return facts;
}

/** An OpenAI(-shaped) error answer as the client's error, by the shared policy (`upstream-error-policy.ts`). */
export function mapOpenAIError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  return upstreamErrorFor(provider, model, status, openAIErrorFacts(status, bodyText), headers);
}

/**
 * Reads `chat.completion.chunk` events; `[DONE]` ends the stream; `{"error":...}` is an in-band error.
 * A content-delta event as OpenAI serializes it is read without `JSON.parse` (`openai-content-chunk.ts`).
 */
class OpenAIStreamDecoder implements StreamDecoder {
  private finished = false;
  private readonly contentChunks = new ContentChunkReader();
  constructor(private readonly provider: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const data = event.data;
    if (data === '[DONE]') return true;
    let parsed: unknown = this.contentChunks.read(data);
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(data);
      } catch {
        throw malformedResponse(this.provider, 'a stream event that is not JSON');
      }
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

/**
 * OpenAI model families without reasoning: they refuse `reasoning_effort` (400), which a translated
 * request carries when its client asked for thinking (Claude Code always does). Dropped for them.
 */
const NON_REASONING_MODELS = /^(gpt-3\.5|gpt-4(?!\.5)|gpt-4o|gpt-4\.1|chatgpt-4o)/;

/**
 * OpenAI speaks the Responses and embeddings dialects natively (Chat Completions is the canonical
 * form itself).
 */
const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['openai-responses', 'openai-embeddings']);
/** Upstream paths (under the base URL) of the natively spoken operations. */
const NATIVE_PATHS: Readonly<Record<string, string>> = { 'responses.create': '/responses', 'embeddings.create': '/embeddings' };

export class OpenAIProvider extends Provider {
  readonly name: string = 'OpenAI';

  /** Per model family: image tiles or patches as OpenAI documents them (`openai-token-rules.ts`). */
  override promptTokenRules(model: string): PromptTokenRules {
    return openAIPromptTokenRules(model);
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /**
   * A Responses or embeddings request passed through: the client's body with only `model` replaced
   * (an embeddings `encoding_format` included: OpenAI encodes base64 itself), the answer relayed byte
   * for byte and observed (`openai-responses-codec.ts`, `openai-embeddings-codec.ts`) for usage.
   */
  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    const path = NATIVE_PATHS[options.operation];
    if (!this.nativeDialects.has(dialect) || !path) return super.buildNativeCall(dialect, options);
    const { origin, basePath } = splitBaseUrl(options.credential.baseUrl);
    const provider = this.id;
    const decodeError = (status: number, bodyText: string, headers: UpstreamHeaders) => mapOpenAIError(provider, options.model, status, bodyText, headers);
    if (dialect === 'openai-embeddings') return this.postNativeEmbeddings(options, origin, `${basePath}${path}`, openAIEmbeddingsCodec(provider, decodeError));
    return this.postNative(options, origin, `${basePath}${path}`, responsesCodec(provider, options.model, decodeError));
  }

  /**
   * A translated embeddings call (from a dialect OpenAI does not speak, e.g. Gemini's
   * `batchEmbedContents`): `POST /embeddings` with the canonical inputs and `dimensions`, vectors
   * asked as floats (the client's dialect renders them itself).
   */
  override buildEmbeddingCall(request: EmbeddingRequest, { model, credential }: ChatCallOptions): EmbeddingsCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = { model, input: request.input, ...(request.dimensions !== null ? { dimensions: request.dimensions } : {}), encoding_format: 'float' };
    const provider = this.id;
    const decodeError = (status: number, bodyText: string, headers: UpstreamHeaders) => mapOpenAIError(provider, model, status, bodyText, headers);
    return this.postEmbeddings(credential, origin, `${basePath}/embeddings`, body, openAIEmbeddingsCodec(provider, decodeError));
  }

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const stream = request.stream === true;
    const body: ChatCompletionRequest = Object.assign({}, request, { model });
    if (body.reasoning_effort !== undefined && this.refusesReasoning(model)) delete body.reasoning_effort;
    if (body.top_k !== undefined && !this.hasTopK()) delete body.top_k;
    // Always ask for usage so streams are billed; the core strips it if the client did not ask.
    if (stream) body.stream_options = Object.assign({}, request.stream_options, { include_usage: true });
    return this.postJson(credential, origin, `${basePath}/chat/completions`, body, stream, this.codec(model));
  }

  /** True for OpenAI's non-reasoning models; an OpenAI-compatible server decides for itself. */
  protected refusesReasoning(model: string): boolean {
    return NON_REASONING_MODELS.test(model);
  }

  /**
   * OpenAI has no top-k sampling and refuses the field (400 "Unrecognized request argument supplied:
   * top_k"), which a request translated from Gemini or Anthropic carries (Gemini CLI always sends
   * `topK`): a sampling hint, dropped.
   */
  protected hasTopK(): boolean {
    return false;
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
