/**
 * Mistral (La Plateforme) upstream: `POST {base}/chat/completions` with `Authorization: Bearer KEY`,
 * OpenAI-shaped but with a strict request schema (an unknown field is a 422 `extra_forbidden`), so
 * the upstream body is built from the explicit allow-list below, never by spreading the request.
 *
 * Sources (docs/provider-wire-formats.md §4, §7):
 * - API reference https://docs.mistral.ai/api/ (chat completions, models) and `@mistralai/mistralai`
 *   `src/models/components/{chatcompletionrequest,chatcompletionchoice,completionresponsestreamchoice,
 *   usageinfo,toolchoiceenum,responseformats,imageurlchunk,toolmessage,basemodelcard,modelcapabilities}.ts`
 * - Errors https://docs.mistral.ai/resources/error-glossary ; 422 bodies
 *   `src/models/errors/httpvalidationerror.ts`; unknown model `{"type":"invalid_model","code":"1500"}`
 *   (tmc/langchaingo#1233); rate-limit headers `ratelimitbysize-*` (reference §4.4, third-party).
 *
 * The work is split by job: `request.ts` (request → body, the field table), `response.ts` (answer →
 * `chat.completion`), `stream.ts` (SSE events → chunks), `errors.ts` (error answers),
 * `embeddings.ts` (embeddings body: `POST {base}/embeddings`); this file builds the calls and lists
 * the models.
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { EmbeddingsCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';
import { openAIEmbeddingsCodec } from '../openai/embeddings-codec.ts';
import { malformedResponse } from '../canonical.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from '../base.ts';
import { mapMistralError } from './errors.ts';
import { buildMistralRequest } from './request.ts';
import { decodeMistralCompletion } from './response.ts';
import { MistralStreamDecoder } from './stream.ts';
import { toMistralEmbeddingRequest } from './embeddings.ts';

interface MistralModelCard {
  id?: unknown;
  created?: unknown;
  owned_by?: unknown;
  name?: unknown;
  capabilities?: { completion_chat?: unknown } | null;
}

export class MistralProvider extends Provider {
  readonly name = 'Mistral';

  /** `POST {base}/chat/completions`; throws 400 for a request Mistral cannot honour (module table). */
  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = buildMistralRequest(request, model, this.id);
    return this.postJson(credential, origin, `${basePath}/chat/completions`, body, body.stream, this.codec(model));
  }

  /** `POST {base}/embeddings` (`embeddings.ts`); the answer is OpenAI-shaped, errors are Mistral's. */
  override buildEmbeddingCall(request: EmbeddingRequest, { model, credential }: ChatCallOptions): EmbeddingsCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = toMistralEmbeddingRequest(request, model, this.name);
    const provider = this.id;
    const codec = openAIEmbeddingsCodec(provider, (status, bodyText, headers) => mapMistralError(provider, model, status, bodyText, headers));
    return this.postEmbeddings(credential, origin, `${basePath}/embeddings`, body, codec);
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'sse',
      decodeError: (status, bodyText, headers) => mapMistralError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: decodeMistralCompletion(provider, model, bodyText), raw: null }),
      createStreamDecoder: () => new MistralStreamDecoder(provider, model),
    };
  }

  /**
   * `GET {base}/models` (not paged): chat-capable models (`capabilities.completion_chat`, kept when
   * absent), `display_name` from `name`. Deprecated models stay listed: they answer until retired
   * and the list gives no retirement date. Throws `GatewayError` when the upstream fails.
   */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const url = `${credential.baseUrl.replace(/\/+$/, '')}/models`;
    const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as { data?: MistralModelCard[] } | null;
    if (!list || !Array.isArray(list.data)) throw malformedResponse(this.id, 'a model list without "data"');
    const entries: CatalogEntry[] = [];
    for (const card of list.data) {
      if (typeof card?.id !== 'string' || card.id === '' || card.capabilities?.completion_chat === false) continue;
      const entry: CatalogEntry = {
        id: card.id,
        created: typeof card.created === 'number' ? card.created : 0,
        owned_by: typeof card.owned_by === 'string' ? card.owned_by : 'mistralai',
      };
      if (typeof card.name === 'string' && card.name !== '') entry.display_name = card.name;
      entries.push(entry);
    }
    return entries;
  }
}
