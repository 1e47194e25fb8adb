/**
 * The one abstract base every provider extends. A provider turns the canonical (OpenAI) request into
 * its upstream call, reads the upstream's answers, errors and streams back into canonical shapes
 * (the `ResponseCodec` it attaches to the call), lists its models, and tests a credential.
 * Provider knowledge lives only in the provider's own file; shared code never compares provider ids.
 */
import type { ChatCompletionRequest } from '../../../core/canonical/chat-types.ts';
import type { EmbeddingRequest } from '../../../core/canonical/embedding-types.ts';
import type { EmbeddingsCall, EmbeddingsCodec, ModelCall, ResponseCodec, StreamFraming, UpstreamCall, UpstreamRequest } from '../../../core/upstream/upstream-call.ts';
import type { UpstreamClient } from '../../../core/upstream/upstream-client.ts';
import type { PoolKeyConfig } from '../routing/key-pool.ts';
import { DEFAULT_PROMPT_TOKEN_RULES, type PromptTokenRules } from '../../../core/tokens/prompt-token-rules.ts';

/** A provider's entry in the router config (after `${ENV}` substitution). */
export interface ProviderSettings {
  /** Implementation, e.g. `openai`. */
  type: string;
  /** Upstream base URL including any version path, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Shared (gateway-wide) API key; empty = none. */
  apiKey: string;
  /** A pool of shared keys the router spreads requests over (`key-pool.ts`); `apiKey`, when set, is its first. */
  apiKeys?: PoolKeyConfig[];
  /** Dialects an OpenAI-compatible server also speaks natively (e.g. `openai-responses`). */
  nativeDialects?: string[];
  /** Azure: which data-plane API the calls use (`azure/urls.ts`); default `v1`. */
  azureApi?: 'v1' | 'deployments';
  /** Azure: the `api-version` query of the deployment-style API, e.g. `2024-10-21`. */
  apiVersion?: string;
  /** Azure: the deployments clients may see listed, by deployment name, with the model each runs (for prices). */
  deployments?: Record<string, { model?: string }>;
  /** Azure: Microsoft Entra ID instead of a key when no key is set (`azure/entra.ts`); `{}` = the default Azure credential. */
  entra?: { tenantId?: string; clientId?: string; clientSecret?: string; authorityHost?: string; managedIdentity?: boolean };
  /** Bedrock: the AWS region of the runtime and control-plane endpoints and of the SigV4 scope, e.g. `us-east-1`. */
  region?: string;
  /** Bedrock: the control-plane base URL (model lists); default `https://bedrock.{region}.amazonaws.com`. */
  controlPlaneUrl?: string;
  /** Bedrock: a static AWS access key id; absent = the standard AWS credential chain. */
  accessKeyId?: string;
  /** Bedrock: the secret of `accessKeyId`. */
  secretAccessKey?: string;
  /** Bedrock: the session token of temporary static credentials. */
  sessionToken?: string;
  /** Vertex AI: the Google Cloud project id the calls are billed to, e.g. `my-project`. */
  project?: string;
  /** Vertex AI: the location (region) of the endpoint, e.g. `us-east5`, or `global`. */
  location?: string;
  /** Vertex AI: path of a service-account key file (JSON); absent = `credentialsJson`, else Application Default Credentials. */
  credentialsFile?: string;
  /** Vertex AI: a service-account key's JSON text (usually from an environment variable). */
  credentialsJson?: string;
  /** Vertex AI: the model ids listed in `GET /api/v1/models`, e.g. `claude-sonnet-4-5@20250929`. */
  models?: string[];
}

/** The credential used for one call. */
export interface Credential {
  apiKey: string;
  baseUrl: string;
  source: 'user' | 'shared';
}

/** A model as discovered from the provider's list endpoint. */
export interface CatalogEntry {
  /** Model id as the provider names it (no `provider/` prefix). */
  id: string;
  /** Unix seconds, 0 when the provider does not say. */
  created: number;
  owned_by: string;
  /** The provider's own display name, when it has one. */
  display_name?: string;
}

export interface ChatCallOptions {
  /** Upstream model id. */
  model: string;
  credential: Credential;
}

/** A native pass-through: the client's own body in a dialect the provider speaks. */
export interface NativeCallOptions extends ChatCallOptions {
  /** The dialect operation, e.g. `messages.create`, `messages.count_tokens` (picks the upstream path). */
  operation: string;
  /** The client's validated body, in the dialect's shape; only `model` is replaced. */
  body: Readonly<Record<string, unknown>>;
  /** True when the client asked for a streamed answer. */
  stream: boolean;
  /** The dialect's allow-listed request headers the client sent (lowercase names). */
  headers: Record<string, string>;
  /** The client's query parameters (Gemini's `alt=sse` picks the stream's form); absent when none. */
  query?: Readonly<Record<string, string>>;
}

const NO_DIALECTS: ReadonlySet<string> = new Set();

const STREAM_ACCEPT: Record<StreamFraming, string> = { sse: 'text/event-stream', ndjson: 'application/x-ndjson' };

export abstract class Provider {
  /** Human name, e.g. "OpenAI". */
  abstract readonly name: string;
  /** False for providers that run without a key (local servers). */
  readonly requiresApiKey: boolean = true;

  constructor(
    /** The id clients use as the model prefix, e.g. `openai`. */
    readonly id: string,
    protected readonly settings: ProviderSettings,
    protected readonly upstream: UpstreamClient,
  ) {}

  /** The provider's configured base URL. */
  get baseUrl(): string {
    return this.settings.baseUrl;
  }

  /** The gateway-wide credential, or null when the provider needs a key and none is configured. */
  sharedCredential(): Credential | null {
    if (this.requiresApiKey && !this.settings.apiKey) return null;
    return { apiKey: this.settings.apiKey, baseUrl: this.settings.baseUrl, source: 'shared' };
  }

  /**
   * Headers that carry `credential` upstream. Default: `Authorization: Bearer <key>` (OpenAI, Mistral,
   * compatible servers, a proxy in front of Ollama), none without a key. Providers that differ override.
   */
  protected authHeaders(credential: Credential): Record<string, string> {
    return credential.apiKey ? { authorization: `Bearer ${credential.apiKey}` } : {};
  }

  /**
   * A JSON `POST` of `body` to `origin` + `path` carrying `credential`, read back with `codec`. A
   * streamed call accepts the codec's framing (`text/event-stream` or `application/x-ndjson`).
   */
  protected postJson(credential: Credential, origin: string, path: string, body: unknown, stream: boolean, codec: ResponseCodec): UpstreamCall {
    return {
      provider: this.id,
      origin,
      path,
      method: 'POST',
      headers: Object.assign({}, this.authHeaders(credential), { 'content-type': 'application/json', accept: stream ? STREAM_ACCEPT[codec.framing] : 'application/json' }),
      body: JSON.stringify(body),
      stream,
      codec,
    };
  }

  /**
   * How this provider's prompt tokens differ from the local `o200k_base` count for `model` (images,
   * the tools' system prompt, tokenizer scale), for budgets and limits that reserve before forwarding.
   * Default: OpenAI's GPT-4o rules (`DEFAULT_PROMPT_TOKEN_RULES`); providers with documented rules override.
   */
  promptTokenRules(_model: string): PromptTokenRules {
    return DEFAULT_PROMPT_TOKEN_RULES;
  }

  /** Builds the upstream chat call, streamed when `request.stream` is true. */
  abstract buildChatCall(request: ChatCompletionRequest, options: ChatCallOptions): UpstreamCall;

  /**
   * Builds the upstream call of a translated embeddings request, whose codec decodes the answer to
   * canonical vectors. A provider declares that it embeds by implementing this (or by speaking the
   * `openai-embeddings` dialect natively); without either, the router refuses embeddings for it with
   * a 400 naming it. Throws 400 (`invalid_request`, param named) for a request it cannot honour,
   * e.g. token-id input to an API that takes text only.
   */
  buildEmbeddingCall?(request: EmbeddingRequest, options: ChatCallOptions): EmbeddingsCall;

  /** True when this provider can answer an embeddings call, translated or native. */
  get embeds(): boolean {
    return typeof this.buildEmbeddingCall === 'function' || this.nativeDialects.has('openai-embeddings');
  }

  /** A JSON `POST` of an embeddings `body` to `origin` + `path` carrying `credential`, read back with `codec`. */
  protected postEmbeddings(credential: Credential, origin: string, path: string, body: unknown, codec: EmbeddingsCodec): EmbeddingsCall {
    return {
      kind: 'embeddings',
      provider: this.id,
      origin,
      path,
      method: 'POST',
      headers: Object.assign({}, this.authHeaders(credential), { 'content-type': 'application/json', accept: 'application/json' }),
      body: JSON.stringify(body),
      codec,
    };
  }

  /**
   * The model id whose price applies to `model` (the upstream model id): `model` itself by default;
   * a provider whose ids are names of the operator's own (Azure deployments) answers the model
   * behind it, so the price dataset's row for it applies.
   */
  priceModelOf(model: string): string {
    return model;
  }

  /**
   * True when a bare model id no catalog lists belongs to this provider's family (its own naming,
   * e.g. `claude-*`), so it is routed here when no other provider claims it. None by default.
   */
  claimsModel(_modelId: string): boolean {
    return false;
  }

  /**
   * Dialect ids (`core/dialects/`) this provider speaks natively: requests in them are passed through
   * (`buildNativeCall`) instead of translated through the canonical request. None by default.
   */
  get nativeDialects(): ReadonlySet<string> {
    return NO_DIALECTS;
  }

  /**
   * True when a request in `dialect` for `model` (the operation `operation`, e.g.
   * `messages.count_tokens`) is passed through (`buildNativeCall`) rather than translated. Default:
   * `dialect` is one of `nativeDialects`, whatever the model; a provider whose models speak different
   * wire formats (Bedrock: Claude natively, others through Converse) narrows it.
   */
  speaksNatively(dialect: string, _model: string, _operation?: string): boolean {
    return this.nativeDialects.has(dialect);
  }

  /**
   * Builds a native pass-through call for `dialect` (one of `nativeDialects`): the client's body with
   * only the model replaced, the credential's auth headers and the allow-listed dialect headers. The
   * call is marked `passthrough`; its codec decodes the dialect's answers to canonical shapes for
   * observation only. Providers that declare native dialects override this.
   */
  buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    throw new Error(`provider "${this.id}" declares no native dialect "${dialect}" (options for ${options.model})`);
  }

  /**
   * A native pass-through `POST` to `origin` + `path`: the client's body with only `model` replaced,
   * the credential's auth headers, then the dialect headers the client sent. Those come from the
   * dialect's allow-list of protocol headers (`anthropic-version`, `anthropic-beta`), never a
   * credential header, so the client may choose its API version but never the key.
   */
  protected postNative(options: NativeCallOptions, origin: string, path: string, codec: ResponseCodec): UpstreamCall {
    return Object.assign(this.nativeRequest(options, origin, path, options.stream ? STREAM_ACCEPT[codec.framing] : 'application/json'), {
      stream: options.stream,
      passthrough: true as const,
      codec,
    });
  }

  /** `postNative` for an embeddings operation: one JSON answer, read back with an embeddings codec. */
  protected postNativeEmbeddings(options: NativeCallOptions, origin: string, path: string, codec: EmbeddingsCodec): EmbeddingsCall {
    return Object.assign(this.nativeRequest(options, origin, path, 'application/json'), { kind: 'embeddings' as const, passthrough: true as const, codec });
  }

  private nativeRequest(options: NativeCallOptions, origin: string, path: string, accept: string): UpstreamRequest {
    return {
      provider: this.id,
      origin,
      path,
      method: 'POST',
      headers: Object.assign({}, this.authHeaders(options.credential), options.headers, { 'content-type': 'application/json', accept }),
      body: JSON.stringify(this.nativeBody(options)),
    };
  }

  /** The body a native call sends: the client's with `model` replaced. A dialect that names the model in the path overrides it. */
  protected nativeBody(options: NativeCallOptions): Readonly<Record<string, unknown>> {
    return Object.assign({}, options.body, { model: options.model });
  }


  /** Fetches the provider's model list. Throws `GatewayError` when the upstream fails. */
  abstract listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]>;

  /** Checks a credential with the cheapest authenticated call (the model list). */
  async testCredential(credential: Credential): Promise<{ ok: boolean; message: string }> {
    try {
      const models = await this.listModels(credential);
      return { ok: true, message: `${this.name} accepted the credential (${models.length} models).` };
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
  }
}

const splitCache = new Map<string, { origin: string; basePath: string }>();

/**
 * Splits a base URL into undici's origin and a path prefix without trailing slash. Memoized: it runs
 * on every request and there are only a handful of distinct base URLs.
 */
export function splitBaseUrl(baseUrl: string): { origin: string; basePath: string } {
  let split = splitCache.get(baseUrl);
  if (!split) {
    const url = new URL(baseUrl);
    split = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
    if (splitCache.size < 1_000) splitCache.set(baseUrl, split);
  }
  return split;
}
