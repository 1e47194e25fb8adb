/**
 * Google Gemini Developer API upstream (v1beta): translates canonical (OpenAI) chat requests to
 * `generateContent` / `streamGenerateContent?alt=sse` and Gemini's answers, streams and errors back.
 *
 * Sources (docs/provider-wire-formats.md §3 and §7):
 * - request, response, stream, usage: https://ai.google.dev/api/generate-content
 * - `Content` / `Part` shapes: https://ai.google.dev/api/caching#Content
 * - function calling, `toolConfig`: https://ai.google.dev/gemini-api/docs/function-calling
 * - thought signatures: https://ai.google.dev/gemini-api/docs/thought-signatures
 * - JSON mode / `responseJsonSchema`: https://ai.google.dev/gemini-api/docs/structured-output
 * - images and other inline media: https://ai.google.dev/gemini-api/docs/image-understanding
 * - `reasoning_effort` → thinking budget (Google's own OpenAI mapping): https://ai.google.dev/gemini-api/docs/openai
 * - model list: https://ai.google.dev/api/models#method:-models.list
 * - errors, quotas: https://ai.google.dev/gemini-api/docs/troubleshooting , https://ai.google.dev/gemini-api/docs/rate-limits
 * - embeddings (`embedContent`, `batchEmbedContents`): https://ai.google.dev/api/embeddings
 *
 * The work is split by job: `request.ts` (request → body, every field decision), `response.ts`
 * (answer → `chat.completion`), `stream.ts` (SSE events → chunks), `errors.ts` (error answers),
 * `embeddings.ts` (embeddings call → `batchEmbedContents` and back),
 * `tool-call-id.ts` (thought signatures carried in tool-call ids); this file builds the call and
 * lists the models.
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { EmbeddingsCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';
import { invalidRequest } from '../../../../core/errors.ts';
import { malformedResponse, parseUpstreamJson } from '../canonical.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential, type NativeCallOptions } from '../base.ts';
import type { ModelCall } from '../../../../core/upstream/upstream-call.ts';
import { usageOf } from '../canonical.ts';
import { mapGeminiError } from './errors.ts';
import { toGeminiRequest } from './request.ts';
import { toCompletion } from './response.ts';
import { GeminiStreamDecoder } from './stream.ts';
import { decodeBatchEmbed, decodeEmbedContent, toBatchEmbedRequest, withRequestModels } from './embeddings.ts';
import { GEMINI_PROMPT_TOKEN_RULES } from './token-rules.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

/** The model's resource path under the base URL; `models/` is never doubled. */
function modelPath(model: string): string {
  const path = model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
  // The id lands in the URL path: anything beyond Gemini's id alphabet could rewrite the path.
  if (!/^(models|tunedModels)\/[A-Za-z0-9._-]+$/.test(path)) {
    throw invalidRequest(`"${model}" is not a Gemini model id (letters, digits, ".", "_" and "-").`, 'model');
  }
  return path;
}

const NATIVE_DIALECTS: ReadonlySet<string> = new Set(['gemini']);
/** The Gemini method each `gemini` dialect operation calls. */
const NATIVE_ACTIONS: Readonly<Record<string, string>> = {
  'gemini.generateContent': 'generateContent',
  'gemini.streamGenerateContent': 'streamGenerateContent',
  'gemini.countTokens': 'countTokens',
  'gemini.embedContent': 'embedContent',
  'gemini.batchEmbedContents': 'batchEmbedContents',
};

/** Pages of the model list followed at most: a bound against a list that never ends. */
const MAX_MODEL_PAGES = 20;

interface GeminiModelList {
  models?: Array<{ name?: unknown; displayName?: unknown; supportedGenerationMethods?: unknown }>;
  nextPageToken?: unknown;
}

/** The `supportedGenerationMethods` of the models the catalog lists: chat and embeddings. */
function isServedMethod(method: unknown): boolean {
  return method === 'generateContent' || method === 'embedContent';
}

/**
 * Gemini Developer API provider. `buildChatCall` throws 400 (`invalid_request`, naming the
 * parameter) for requests it cannot honour; the codec maps answers per the module doc.
 */
export class GeminiProvider extends Provider {
  readonly name = 'Google Gemini';

  /** Gemini's image crop units (`token-rules.ts`). */
  override promptTokenRules(_model: string): PromptTokenRules {
    return GEMINI_PROMPT_TOKEN_RULES;
  }

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const path = modelPath(model);
    const body = toGeminiRequest(request, this.id);
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const stream = request.stream === true;
    return this.postJson(credential, origin, `${basePath}/${path}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body, stream, this.codec(path.slice(path.indexOf('/') + 1)));
  }

  /** `POST {base}/models/{model}:batchEmbedContents`, one request per input (`embeddings.ts`). */
  override buildEmbeddingCall(request: EmbeddingRequest, { model, credential }: ChatCallOptions): EmbeddingsCall {
    const path = modelPath(model);
    const body = toBatchEmbedRequest(request, path, this.name);
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const provider = this.id;
    const served = path.slice(path.indexOf('/') + 1);
    return this.postEmbeddings(credential, origin, `${basePath}/${path}:batchEmbedContents`, body, {
      decodeError: (status, bodyText, headers) => mapGeminiError(provider, served, status, bodyText, headers),
      decodeEmbeddings: (bodyText) => decodeBatchEmbed(provider, served, bodyText),
    });
  }

  /** Gemini model ids (`gemini-3.1-pro-preview`, `gemini-2.5-flash`) are Google's, listed or not. */
  override claimsModel(modelId: string): boolean {
    return modelId.startsWith('gemini-');
  }

  override get nativeDialects(): ReadonlySet<string> {
    return NATIVE_DIALECTS;
  }

  /**
   * A Gemini API request passed through: the client's body unchanged (the model is in the path, never
   * in the body, which Gemini would refuse), the answer relayed byte for byte, so thought signatures
   * and `functionCall` ids survive; the codec reads `usageMetadata` (thoughts and cached tokens
   * included) for billing. A stream is asked for as SSE, the only stream form the codec reads: a client
   * that wants the JSON-array form (no `alt=sse`) is refused here rather than billed blind.
   */
  override buildNativeCall(dialect: string, options: NativeCallOptions): ModelCall {
    const action = NATIVE_ACTIONS[options.operation];
    if (!NATIVE_DIALECTS.has(dialect) || !action) return super.buildNativeCall(dialect, options);
    if (options.stream && options.query?.alt !== 'sse') {
      throw invalidRequest('A Gemini stream is relayed as server-sent events only: add "?alt=sse" (the Gen AI SDKs and Gemini CLI always do).', 'alt');
    }
    const path = modelPath(options.model);
    const { origin, basePath } = splitBaseUrl(options.credential.baseUrl);
    const served = path.slice(path.indexOf('/') + 1);
    if (action === 'embedContent' || action === 'batchEmbedContents') {
      const provider = this.id;
      const decode = action === 'embedContent' ? decodeEmbedContent : decodeBatchEmbed;
      return this.postNativeEmbeddings(options, origin, `${basePath}/${path}:${action}`, {
        decodeError: (status, bodyText, headers) => mapGeminiError(provider, served, status, bodyText, headers),
        decodeEmbeddings: (bodyText) => decode(provider, served, bodyText),
      });
    }
    const codec = action === 'countTokens' ? this.tokenCountCodec(served) : this.codec(served);
    return this.postNative(options, origin, `${basePath}/${path}:${action}${options.stream ? '?alt=sse' : ''}`, codec);
  }

  /**
   * The client's body: the model is in the path. An embeddings body may also name it in each request
   * (`models/<id>`), which Gemini requires to match the path's: it is set to the model routed to.
   */
  protected override nativeBody(options: NativeCallOptions): Readonly<Record<string, unknown>> {
    const action = NATIVE_ACTIONS[options.operation];
    if (action === 'embedContent' || action === 'batchEmbedContents') return withRequestModels(options.body, modelPath(options.model));
    return options.body;
  }

  /** `countTokens` answers `{"totalTokens": n}`, which bills nothing. */
  private tokenCountCodec(model: string): ResponseCodec {
    const base = this.codec(model);
    return Object.assign({}, base, {
      decodeResponse: (bodyText: string) => {
        parseUpstreamJson<{ totalTokens?: unknown }>(this.id, bodyText, 'a token count');
        return { completion: { id: '', object: 'chat.completion' as const, created: 0, model, choices: [], usage: usageOf(0, 0) }, raw: null };
      },
    });
  }

  /** The key goes in a header, never in `?key=`: query strings end up in access logs. */
  protected override authHeaders(credential: Credential): Record<string, string> {
    return { 'x-goog-api-key': credential.apiKey };
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapGeminiError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: toCompletion(parseUpstreamJson(provider, bodyText, 'a response'), model, provider), raw: null }),
      createStreamDecoder: () => new GeminiStreamDecoder(provider, model),
    };
  }

  /**
   * `GET {base}/models`, following `nextPageToken`; keeps the models that serve `generateContent`
   * (chat) or `embedContent` (embeddings: `text-embedding-004`, `gemini-embedding-001`), so an
   * unprefixed embedding model routes here as OpenAI's and Mistral's do (their lists have both kinds).
   */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const base = credential.baseUrl.replace(/\/+$/, '');
    const entries: CatalogEntry[] = [];
    let pageToken = '';
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const url = `${base}/models?pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
      const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as GeminiModelList | null;
      if (!list || typeof list !== 'object' || (list.models !== undefined && !Array.isArray(list.models))) {
        throw malformedResponse(this.id, 'a model list without "models"');
      }
      for (const m of list.models ?? []) {
        if (typeof m?.name !== 'string' || !Array.isArray(m.supportedGenerationMethods) || !m.supportedGenerationMethods.some(isServedMethod)) continue;
        const entry: CatalogEntry = { id: m.name.replace(/^models\//, ''), created: 0, owned_by: 'google' };
        if (typeof m.displayName === 'string' && m.displayName) entry.display_name = m.displayName;
        entries.push(entry);
      }
      if (typeof list.nextPageToken !== 'string' || !list.nextPageToken) break;
      pageToken = list.nextPageToken;
    }
    return entries;
  }
}
