/**
 * Google Vertex AI upstream (`vertex/<model>`, e.g. `vertex/claude-sonnet-4-5@20250929`,
 * `vertex/gemini-2.5-flash`), in one project and location per provider entry.
 * - Claude natively (`claude.ts`): a Messages request (Claude Code through `/api/v1/messages`) goes
 *   as the client's body, `model` left out and `anthropic_version` added, to
 *   `publishers/anthropic/models/{model}:rawPredict` / `:streamRawPredict`, and its answer comes back
 *   as Anthropic's; an OpenAI Chat or Responses request is translated by the Anthropic provider's
 *   request mapping and read back by its codecs.
 * - Gemini (every other model id) through `publishers/google/models/{model}:generateContent` /
 *   `:streamGenerateContent?alt=sse`, translated and read back by the Gemini provider's codecs:
 *   Vertex's `generateContent` takes and answers the same `GenerateContentRequest` /
 *   `GenerateContentResponse`; only the URL and the authentication differ.
 * - Every call carries an OAuth access token added at dispatch (`auth.ts`); errors by the shared
 *   policy (`errors.ts`).
 * - The model list is the manifest's `models` (ids as Vertex names them), once a token proves the
 *   credential: Vertex's publisher-model list (`publishers.models.list`) is the whole Model Garden,
 *   hundreds of models that a project may not call (Claude must be enabled per project), so it says
 *   nothing about this deployment. Other ids can still be called. Prices from the dataset's `google`
 *   rows (which hold Vertex's Claude and Gemini prices), by the id without its `@version`.
 *
 * Endpoint: `https://{location}-aiplatform.googleapis.com`, `https://aiplatform.googleapis.com` for
 * `global` (manifest `baseUrl` overrides it); paths `/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`.
 * Sources: https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent ;
 * .../streamRawPredict ; https://cloud.google.com/vertex-ai/generative-ai/docs/learn/locations (global endpoint).
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { ModelCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { UpstreamClient } from '../../../../core/upstream/upstream-client.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';
import { invalidRequest } from '../../../../core/errors.ts';
import { parseUpstreamJson } from '../canonical.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions, type ProviderSettings } from '../base.ts';
import { toAnthropicRequest } from '../anthropic/request.ts';
import { anthropicPromptTokenRules } from '../anthropic/token-rules.ts';
import { toGeminiRequest } from '../gemini/request.ts';
import { toCompletion } from '../gemini/response.ts';
import { GeminiStreamDecoder } from '../gemini/stream.ts';
import { GEMINI_PROMPT_TOKEN_RULES } from '../gemini/token-rules.ts';
import { VertexTokens } from './auth.ts';
import { anthropicModelOf, claudeCodec, isClaudeModel, VERTEX_ANTHROPIC_VERSION, vertexClaudeBody } from './claude.ts';
import { mapVertexError } from './errors.ts';

const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['anthropic-messages']);
/** A Vertex model id: it lands in the URL path, so nothing beyond this alphabet may rewrite it. */
const MODEL_ID = /^[A-Za-z0-9._-]+(@[A-Za-z0-9._-]+)?$/;

/** The default endpoint of `location`. */
export function vertexBaseUrl(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

export class VertexProvider extends Provider {
  readonly name = 'Google Vertex AI';
  override readonly requiresApiKey = false;
  private readonly project: string;
  private readonly location: string;
  private readonly tokens: VertexTokens;
  /** The manifest's credential JSON; '' = its credentials file, else Application Default Credentials. */
  private readonly sharedKey: string;

  constructor(id: string, settings: ProviderSettings, upstream: UpstreamClient) {
    super(id, settings, upstream);
    this.project = settings.project ?? '';
    this.location = settings.location ?? 'global';
    this.tokens = new VertexTokens(id, settings.credentialsFile);
    this.sharedKey = settings.credentialsJson || settings.apiKey || '';
  }

  override get baseUrl(): string {
    return this.settings.baseUrl || vertexBaseUrl(this.location);
  }

  /** Always one: the manifest's credential JSON, else its file or ADC (resolved when a call is authorized). */
  override sharedCredential(): Credential {
    return { apiKey: this.sharedKey, baseUrl: this.baseUrl, source: 'shared' };
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /** Messages requests to a Claude model are passed through; token counts are counted locally. */
  override speaksNatively(dialect: string, model: string, operation?: string): boolean {
    return NATIVE_DIALECTS.has(dialect) && isClaudeModel(model) && operation !== 'messages.count_tokens';
  }

  override promptTokenRules(model: string): PromptTokenRules {
    return isClaudeModel(model) ? anthropicPromptTokenRules(anthropicModelOf(model)) : GEMINI_PROMPT_TOKEN_RULES;
  }

  /** The dataset names models without Vertex's `@version`: `claude-sonnet-4-5@20250929` → `claude-sonnet-4-5`. */
  override priceModelOf(model: string): string {
    return anthropicModelOf(model);
  }

  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    if (!this.speaksNatively(dialect, options.model, options.operation)) return super.buildNativeCall(dialect, options);
    const beta = options.headers['anthropic-beta'];
    const call = this.vertexCall(options.credential, 'anthropic', options.model, options.stream ? 'streamRawPredict' : 'rawPredict',
      vertexClaudeBody(options.body), options.stream, claudeCodec(this.id, options.model), beta ? { 'anthropic-beta': beta } : {});
    // Vertex's own refusals are Google's `Status` bodies, not Anthropic's: rendered, never relayed.
    return Object.assign(call, { passthrough: true as const, relayErrors: false });
  }

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const stream = request.stream === true;
    if (isClaudeModel(model)) {
      // Anthropic's body for this request, minus `model` (the path names it), plus Vertex's version.
      const body: Record<string, unknown> = Object.assign({}, toAnthropicRequest(request, model, this.id) as unknown as Record<string, unknown>);
      delete body.model;
      if (stream) body.stream = true;
      body.anthropic_version = VERTEX_ANTHROPIC_VERSION;
      return this.vertexCall(credential, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict', body, stream, claudeCodec(this.id, model));
    }
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return this.vertexCall(credential, 'google', model, method, toGeminiRequest(request, this.id), stream, this.geminiCodec(model));
  }

  /** A POST to `{base}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`, token added at dispatch. */
  private vertexCall(
    credential: Credential, publisher: string, model: string, method: string, body: unknown, stream: boolean, codec: ResponseCodec,
    extraHeaders: Record<string, string> = {},
  ): UpstreamCall {
    if (!MODEL_ID.test(model)) throw invalidRequest(`"${model}" is not a Vertex AI model id (letters, digits, ".", "_", "-", and one "@version").`, 'model');
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const resource = `/v1/projects/${this.project}/locations/${this.location}/publishers/${publisher}/models/${model}`;
    return {
      provider: this.id, origin, path: `${basePath.replace(/\/v1$/, '')}${resource}:${method}`, method: 'POST',
      headers: Object.assign({}, extraHeaders, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' }),
      body: JSON.stringify(body), stream, codec,
      authorize: this.tokens.authorizerFor(credential.apiKey),
    };
  }

  private geminiCodec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapVertexError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: toCompletion(parseUpstreamJson(provider, bodyText, 'a response'), model, provider), raw: null }),
      createStreamDecoder: () => new GeminiStreamDecoder(provider, model),
    };
  }

  /**
   * The manifest's `models` (module doc), each owned by its publisher (`anthropic` or `google`), once
   * a token proves the credential (`testCredential`); rejects with the token's 502 when none can be had.
   */
  async listModels(credential: Credential): Promise<CatalogEntry[]> {
    await this.tokens.headersFor(credential.apiKey);
    return (this.settings.models ?? []).map((id) => ({ id, created: 0, owned_by: isClaudeModel(id) ? 'anthropic' : 'google' }));
  }
}
