/**
 * Anthropic Messages API upstream: translates the canonical (OpenAI) chat request into
 * `POST /v1/messages`, and Anthropic's message, named-event SSE stream, errors and paged model list
 * back into canonical shapes. The work is split by job: `request.ts` (request → body, every field
 * decision), `response.ts` (message → `chat.completion`), `stream.ts` (SSE events → chunks),
 * `errors.ts` (error answers); this file builds the call and lists the models.
 *
 * Sources (docs/provider-wire-formats.md §2, §7):
 * - Messages: https://platform.claude.com/docs/en/api/messages
 * - Streaming: https://platform.claude.com/docs/en/build-with-claude/streaming
 * - Errors: https://platform.claude.com/docs/en/api/errors ; rate limits and their headers:
 *   https://platform.claude.com/docs/en/api/rate-limits
 * - Versioning: https://platform.claude.com/docs/en/api/versioning (`anthropic-version` is pinned to
 *   `2023-06-01`: under `2026-10-21` `temperature` / `top_p` are refused even at their defaults)
 * - Models: https://docs.anthropic.com/en/api/models-list (cursor paging with `after_id`, `has_more`,
 *   `last_id`)
 *
 * Base URL convention: `https://api.anthropic.com` (no version path); `/v1/messages` and `/v1/models`
 * are appended. A base URL that already ends in `/v1` is accepted as the same thing.
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { ModelCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import { malformedResponse, parseUpstreamJson, usageOf } from '../canonical.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions } from '../base.ts';
import { mapAnthropicError } from './errors.ts';
import { toAnthropicRequest } from './request.ts';
import { toCompletion, type AnthropicMessage } from './response.ts';
import { AnthropicStreamDecoder } from './stream.ts';
import { anthropicPromptTokenRules } from './token-rules.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

/** Pinned API version: the one under which sampling parameters are still accepted (see module doc). */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic speaks the Messages dialect natively: such requests are passed through untouched. */
const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['anthropic-messages']);
/** Upstream paths (under `/v1`) of the Messages dialect's operations. */
const NATIVE_PATHS: Readonly<Record<string, string>> = { 'messages.create': '/messages', 'messages.count_tokens': '/messages/count_tokens' };
/** The largest page `GET /v1/models` serves, and a bound on pages followed (a broken cursor cannot loop). */
const MODEL_PAGE_LIMIT = 1000;
const MAX_MODEL_PAGES = 50;

interface AnthropicModelList {
  data?: Array<{ id?: unknown; display_name?: unknown; created_at?: unknown }>;
  has_more?: unknown;
  last_id?: unknown;
}

/** A model entry → CatalogEntry; `created_at` (RFC 3339) → unix seconds, 0 when absent or invalid. */
function toCatalogEntry(model: { id: string; display_name?: unknown; created_at?: unknown }, ownedBy: string): CatalogEntry {
  const createdMs = typeof model.created_at === 'string' ? Date.parse(model.created_at) : NaN;
  const entry: CatalogEntry = { id: model.id, created: Number.isFinite(createdMs) ? Math.floor(createdMs / 1000) : 0, owned_by: ownedBy };
  if (typeof model.display_name === 'string' && model.display_name !== '') entry.display_name = model.display_name;
  return entry;
}

/**
 * The Anthropic provider. `buildChatCall` throws 400 (`invalid_request`, `param` named) for what the
 * Messages API cannot honour; the codec maps answers, streams and errors as documented above;
 * `listModels` follows the `/v1/models` cursor and throws `GatewayError` when the upstream fails.
 */
export class AnthropicProvider extends Provider {
  readonly name = 'Anthropic';

  /** Per Claude model: image patches and tiers, the tools' system prompt, the tokenizer's scale (`token-rules.ts`). */
  override promptTokenRules(model: string): PromptTokenRules {
    return anthropicPromptTokenRules(model);
  }

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const stream = request.stream === true;
    const body = toAnthropicRequest(request, model, this.id);
    if (stream) body.stream = true;
    const { origin, apiPath } = this.endpoint(credential);
    return this.postJson(credential, origin, `${apiPath}/messages`, body, stream, this.codec(model));
  }

  /** Claude model ids (`claude-sonnet-4-5`, dated or not) are Anthropic's, listed or not. */
  override claimsModel(modelId: string): boolean {
    return modelId.startsWith('claude-');
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /**
   * A Messages request passed through: the client's body with only `model` replaced, its
   * `anthropic-version` / `anthropic-beta` (the pinned version when it sent none), and the answer
   * relayed byte for byte; the codec reads usage from `message_start` and `message_delta` for billing.
   * `count_tokens` answers `{"input_tokens": n}`, which bills nothing.
   */
  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    const path = NATIVE_PATHS[options.operation];
    if (!NATIVE_DIALECTS.has(dialect) || !path) return super.buildNativeCall(dialect, options);
    const { origin, apiPath } = this.endpoint(options.credential);
    const codec = options.operation === 'messages.count_tokens' ? this.tokenCountCodec(options.model) : this.codec(options.model);
    return this.postNative(options, origin, `${apiPath}${path}`, codec);
  }

  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const { origin, apiPath } = this.endpoint(credential);
    const entries: CatalogEntry[] = [];
    let afterId: string | null = null;
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const query = `limit=${MODEL_PAGE_LIMIT}${afterId ? `&after_id=${encodeURIComponent(afterId)}` : ''}`;
      const list = (await this.upstream.getJson(this.id, `${origin}${apiPath}/models?${query}`, this.authHeaders(credential), signal)) as AnthropicModelList;
      if (!list || !Array.isArray(list.data)) throw malformedResponse(this.id, 'a model list without "data"');
      for (const model of list.data) {
        if (typeof model?.id === 'string' && model.id !== '') entries.push(toCatalogEntry(model as { id: string }, this.id));
      }
      if (list.has_more !== true || typeof list.last_id !== 'string' || list.last_id === '') break;
      afterId = list.last_id;
    }
    return entries;
  }

  protected override authHeaders(credential: Credential): Record<string, string> {
    return { 'x-api-key': credential.apiKey, 'anthropic-version': ANTHROPIC_VERSION };
  }

  /** The origin and the `/v1` path under the base URL (a base URL already ending in `/v1` is accepted). */
  private endpoint(credential: Credential): { origin: string; apiPath: string } {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    return { origin, apiPath: `${basePath.replace(/\/v1$/, '')}/v1` };
  }

  /** `count_tokens` answers carry no completion: observed as an empty one with zero usage (nothing billed). */
  private tokenCountCodec(model: string): ResponseCodec {
    const base = this.codec(model);
    return {
      framing: base.framing,
      decodeError: base.decodeError,
      createStreamDecoder: base.createStreamDecoder,
      decodeResponse: (bodyText) => {
        parseUpstreamJson<{ input_tokens?: unknown }>(this.id, bodyText, 'a token count');
        return { completion: { id: '', object: 'chat.completion', created: 0, model, choices: [], usage: usageOf(0, 0) }, raw: null };
      },
    };
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapAnthropicError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({
        completion: toCompletion(parseUpstreamJson<AnthropicMessage>(provider, bodyText, 'a response'), provider),
        raw: null,
      }),
      createStreamDecoder: () => new AnthropicStreamDecoder(provider, model),
    };
  }
}
