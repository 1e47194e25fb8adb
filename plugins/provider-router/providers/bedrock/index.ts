/**
 * AWS Bedrock upstream (`bedrock/<model id or inference profile id>`, e.g.
 * `bedrock/anthropic.claude-sonnet-4-6-v1:0`, `bedrock/us.anthropic.claude-sonnet-4-6-v1:0`).
 * - Claude natively (`claude.ts`): a Messages request (Claude Code through `/api/v1/messages`) goes
 *   as the client's body to `InvokeModel` / `InvokeModelWithResponseStream`, and its answer comes
 *   back as Anthropic's; an OpenAI Chat or Responses request is translated by the Anthropic
 *   provider's request mapping and read back by its codecs. Only the URL, the signing and the
 *   framing differ from Anthropic.
 * - Other models through the Converse API (`converse.ts`), translated from the canonical request.
 * - Every call SigV4-signed at dispatch with static keys or the standard AWS chain (`auth.ts`);
 *   errors by the shared policy (`errors.ts`); the binary event stream rewritten into SSE
 *   (`event-stream.ts`).
 * - Models from `ListFoundationModels` and `ListInferenceProfiles` on the control plane
 *   (`model-list.ts`: text-output models and the profiles routing to them); prices from
 *   the dataset's `aws` rows, a geographic inference profile (`us.`, `eu.`, …) and an in-region id
 *   priced as the dataset's `regional.` row, `global.` as its own.
 *
 * Endpoints: runtime `https://bedrock-runtime.{region}.amazonaws.com`, control plane
 * `https://bedrock.{region}.amazonaws.com` (manifest `baseUrl` / `controlPlaneUrl` override them).
 * Sources: https://docs.aws.amazon.com/general/latest/gr/bedrock.html (endpoints);
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListFoundationModels.html ;
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListInferenceProfiles.html.
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { ModelCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { UpstreamClient } from '../../../../core/upstream/upstream-client.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions, type ProviderSettings } from '../base.ts';
import { toAnthropicRequest } from '../anthropic/request.ts';
import { anthropicPromptTokenRules } from '../anthropic/token-rules.ts';
import { awsKeyOf, BedrockSigner } from './auth.ts';
import { anthropicModelOf, BEDROCK_ANTHROPIC_VERSION, bedrockClaudeBody, claudeCodec, isClaudeModel } from './claude.ts';
import { converseCodec, toConverseRequest } from './converse.ts';
import { listBedrockModels } from './model-list.ts';

const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['anthropic-messages']);
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
/** Geographic cross-region inference profiles' prefixes, priced as the dataset's `regional.` rows. */
const GEO_PREFIX = /^(us|eu|apac|jp|au|ca|us-gov)\./;

export class BedrockProvider extends Provider {
  readonly name = 'AWS Bedrock';
  override readonly requiresApiKey = false;
  private readonly region: string;
  private readonly signer: BedrockSigner;
  /** The manifest's static keys as one credential string; '' = the AWS chain. */
  private readonly staticKey: string;

  constructor(id: string, settings: ProviderSettings, upstream: UpstreamClient) {
    super(id, settings, upstream);
    this.region = settings.region ?? 'us-east-1';
    this.signer = new BedrockSigner(id, this.region);
    this.staticKey = settings.apiKey || awsKeyOf(settings.accessKeyId, settings.secretAccessKey, settings.sessionToken);
  }

  override get baseUrl(): string {
    return this.settings.baseUrl || `https://bedrock-runtime.${this.region}.amazonaws.com`;
  }

  private get controlPlaneUrl(): string {
    return this.settings.controlPlaneUrl || `https://bedrock.${this.region}.amazonaws.com`;
  }

  /** Always one: static keys when the manifest has them, else the AWS chain (resolved when a call is signed). */
  override sharedCredential(): Credential {
    return { apiKey: this.staticKey, baseUrl: this.baseUrl, source: 'shared' };
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /** Messages requests to a Claude model are passed through; token counts are counted locally. */
  override speaksNatively(dialect: string, model: string, operation?: string): boolean {
    return NATIVE_DIALECTS.has(dialect) && isClaudeModel(model) && operation !== 'messages.count_tokens';
  }

  override promptTokenRules(model: string): PromptTokenRules {
    return isClaudeModel(model) ? anthropicPromptTokenRules(anthropicModelOf(model)) : super.promptTokenRules(model);
  }

  override priceModelOf(model: string): string {
    if (model.startsWith('global.') || model.startsWith('regional.')) return model;
    const base = model.replace(GEO_PREFIX, '');
    return base.startsWith('anthropic.') ? `regional.${base}` : base;
  }

  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    if (!this.speaksNatively(dialect, options.model, options.operation)) return super.buildNativeCall(dialect, options);
    const body = bedrockClaudeBody(options.body, options.headers);
    return Object.assign(this.invokeCall(options.credential, options.model, body, options.stream), { passthrough: true as const, relayErrors: false });
  }

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const stream = request.stream === true;
    if (isClaudeModel(model)) {
      // Anthropic's body for this request, minus `model` (the path names it), plus Bedrock's version.
      const body: Record<string, unknown> = Object.assign({}, toAnthropicRequest(request, model, this.id) as unknown as Record<string, unknown>);
      delete body.model;
      body.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
      return this.invokeCall(credential, model, body, stream);
    }
    const path = `/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`;
    return this.signedCall(credential, path, toConverseRequest(request, this.id), stream, converseCodec(this.id, model));
  }

  private invokeCall(credential: Credential, model: string, body: Record<string, unknown>, stream: boolean): UpstreamCall {
    const path = `/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;
    return this.signedCall(credential, path, body, stream, claudeCodec(this.id, model));
  }

  private signedCall(credential: Credential, path: string, body: unknown, stream: boolean, codec: ResponseCodec): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    return {
      provider: this.id, origin, path: `${basePath}${path}`, method: 'POST',
      headers: { 'content-type': 'application/json', accept: stream ? EVENT_STREAM : 'application/json' },
      body: JSON.stringify(body), stream, codec,
      authorize: this.signer.authorizerFor(credential.apiKey),
    };
  }

  /** `ListFoundationModels` and `ListInferenceProfiles` (`model-list.ts`), each GET signed for `credential`. */
  listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const base = this.controlPlaneUrl.replace(/\/+$/, '');
    return listBedrockModels(this.id, async (pathAndQuery) => {
      const url = new URL(`${base}${pathAndQuery}`);
      const headers = await this.signer.headersFor(credential.apiKey, 'GET', url, { accept: 'application/json' }, null);
      return this.upstream.getJson(this.id, url.href, Object.assign({ accept: 'application/json' }, headers), signal);
    });
  }
}

