/**
 * Azure OpenAI / Foundry upstream (`azure/<deployment>`): OpenAI's wire format at a resource endpoint
 * of the operator's, where a model is addressed by the name of its deployment. It extends the OpenAI
 * provider and differs in:
 * - where calls go: the v1 API (`/openai/v1/...`) or the deployment API
 *   (`/openai/deployments/{deployment}/...?api-version=`), per the manifest (`urls.ts`);
 * - the credential: `api-key: <key>`, not `Authorization: Bearer` (`auth.ts`); or, for a call without
 *   a key when the manifest has `entra`, a Microsoft Entra ID token as `Authorization: Bearer`,
 *   added at dispatch (`entra.ts`);
 * - error answers: Azure's codes (`DeploymentNotFound`, `content_filter`, `401` "Access denied due to
 *   invalid subscription key") and its request id (`errors.ts`);
 * - the model list: the deployments the manifest declares, since neither API lists deployments with
 *   an API key (`/openai/v1/models` lists the resource's base models, not its deployments); the
 *   credential is tested against that base-model list;
 * - prices, prompt-token rules and `reasoning_effort`: judged by the model a deployment runs
 *   (`deployments.<name>.model`), not by its name.
 * Answers are OpenAI's plus Azure's content-filter fields (`prompt_filter_results`,
 * `choices[].content_filter_results`, `finish_reason: "content_filter"`, a first stream chunk with
 * `choices: []` carrying only `prompt_filter_results`), which the OpenAI codec relays unchanged and
 * the dialects read as OpenAI's (`content_filter` → Anthropic `refusal`, Responses `incomplete`).
 *
 * Sources: `urls.ts`, `errors.ts`; https://learn.microsoft.com/azure/ai-foundry/openai/reference
 * (chat completions: `stream_options.include_usage`, `prompt_filter_results`, `content_filter_results`).
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { EmbeddingsCall, ModelCall, ResponseCodec, UpstreamCall, UpstreamRequest } from '../../../../core/upstream/upstream-call.ts';
import type { EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';
import type { UpstreamHeaders } from '../canonical.ts';
import { splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions } from '../base.ts';
import { OpenAIProvider } from '../openai/index.ts';
import { responsesCodec } from '../openai/responses-codec.ts';
import { openAIEmbeddingsCodec } from '../openai/embeddings-codec.ts';
import { azureAuthHeaders } from './auth.ts';
import { EntraTokens } from './entra.ts';
import { mapAzureError } from './errors.ts';
import { azurePath, DEFAULT_AZURE_API_VERSION, type AzureApi, type AzureOperation } from './urls.ts';

const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['openai-responses', 'openai-embeddings']);
/** The Azure operation of each natively spoken dialect operation. */
const NATIVE_OPERATIONS: Readonly<Record<string, AzureOperation>> = { 'responses.create': 'responses', 'embeddings.create': 'embeddings' };

export class AzureProvider extends OpenAIProvider {
  override readonly name: string = 'Azure OpenAI';
  private readonly api: AzureApi = this.settings.azureApi ?? 'v1';
  private readonly apiVersion: string = this.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION;
  /** Entra ID tokens for calls without a key; null without `entra` in the manifest. */
  private readonly entra: EntraTokens | null = this.settings.entra ? new EntraTokens(this.id, this.settings.entra) : null;

  /** With `entra` there is always one: the key when set, else the Entra identity (an empty key). */
  override sharedCredential(): Credential | null {
    if (!this.entra) return super.sharedCredential();
    return { apiKey: this.settings.apiKey, baseUrl: this.baseUrl, source: 'shared' };
  }

  /** `call` with the Entra token added at dispatch when its credential has no key and `entra` is set. */
  private withEntra<T extends UpstreamRequest>(call: T, credential: Credential): T {
    if (this.entra && !credential.apiKey) call.authorize = this.entra.authorize;
    return call;
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /** The model deployment `deployment` runs, as the manifest says; the deployment name when it does not. */
  override priceModelOf(deployment: string): string {
    return this.settings.deployments?.[deployment]?.model ?? deployment;
  }

  override promptTokenRules(deployment: string): PromptTokenRules {
    return super.promptTokenRules(this.priceModelOf(deployment));
  }

  protected override refusesReasoning(deployment: string): boolean {
    return super.refusesReasoning(this.priceModelOf(deployment));
  }

  protected override authHeaders(credential: Credential): Record<string, string> {
    return azureAuthHeaders(credential);
  }

  /** The path of `operation` for `deployment` under the credential's endpoint, and its origin. */
  private target(credential: Credential, operation: AzureOperation, deployment: string): { origin: string; path: string } {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    return { origin, path: azurePath(this.api, this.apiVersion, basePath, operation, deployment) };
  }

  /** OpenAI's body (usage always asked for in a stream), sent to the deployment's chat path. */
  override buildChatCall(request: ChatCompletionRequest, options: ChatCallOptions): UpstreamCall {
    const openAICall = super.buildChatCall(request, options);
    const { origin, path } = this.target(options.credential, 'chat', options.model);
    return this.withEntra(Object.assign(openAICall, { origin, path }), options.credential);
  }

  /** Responses and embeddings passed through as for OpenAI, at Azure's paths, errors read as Azure's. */
  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    const operation = NATIVE_OPERATIONS[options.operation];
    if (!NATIVE_DIALECTS.has(dialect) || !operation) return super.buildNativeCall(dialect, options);
    const { origin, path } = this.target(options.credential, operation, options.model);
    const decodeError = this.errorDecoder(options.model);
    if (operation === 'embeddings') return this.withEntra(this.postNativeEmbeddings(options, origin, path, openAIEmbeddingsCodec(this.id, decodeError)), options.credential);
    return this.withEntra(this.postNative(options, origin, path, responsesCodec(this.id, options.model, decodeError)), options.credential);
  }

  /** A translated embeddings call: OpenAI's body, at the deployment's embeddings path, errors read as Azure's. */
  override buildEmbeddingCall(request: EmbeddingRequest, options: ChatCallOptions): EmbeddingsCall {
    const openAICall = super.buildEmbeddingCall(request, options);
    const { origin, path } = this.target(options.credential, 'embeddings', options.model);
    const codec = Object.assign({}, openAICall.codec, { decodeError: this.errorDecoder(options.model) });
    return this.withEntra(Object.assign(openAICall, { origin, path, codec }), options.credential);
  }

  protected override codec(deployment: string): ResponseCodec {
    return Object.assign(super.codec(deployment), { decodeError: this.errorDecoder(deployment) });
  }

  private errorDecoder(deployment: string): (status: number, bodyText: string, headers: UpstreamHeaders) => ReturnType<typeof mapAzureError> {
    const provider = this.id;
    return (status, bodyText, headers) => mapAzureError(provider, deployment, status, bodyText, headers);
  }

  /**
   * The deployments the manifest declares (`deployments`), without a call: Azure lists no
   * deployments to an API key on the data plane. `owned_by` is the model a deployment runs.
   */
  override listModels(): Promise<CatalogEntry[]> {
    const deployments = Object.entries(this.settings.deployments ?? {});
    return Promise.resolve(deployments.map(([id, deployment]) => ({ id, created: 0, owned_by: deployment.model ?? 'azure' })));
  }

  /** Asks the resource's base-model list (`/openai/v1/models` or `/openai/models`), which needs a valid key. */
  override async testCredential(credential: Credential): Promise<{ ok: boolean; message: string }> {
    const { origin, path } = this.target(credential, 'models', '');
    try {
      const headers = this.entra && !credential.apiKey ? await this.entra.headers() : this.authHeaders(credential);
      await this.upstream.getJson(this.id, `${origin}${path}`, headers);
      return { ok: true, message: `${this.name} accepted the credential.` };
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
  }
}
