/**
 * Ollama native API upstream (`POST {base}/api/chat`, `GET {base}/api/tags`), translated to and from
 * the canonical OpenAI Chat Completions shapes. Base URL convention: `http://127.0.0.1:11434` (no
 * `/api`, no `/v1`). Ollama needs no key; when one is configured (a reverse proxy, Ollama's cloud) it
 * is sent as `Authorization: Bearer <key>`.
 *
 * Sources (docs/provider-wire-formats.md §5 and §7):
 * - Chat request / response / stream: https://docs.ollama.com/api/chat ,
 *   https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion ,
 *   ollama-js `src/interfaces.ts` (`ChatRequest`, `Message`, `ToolCall`, `ChatResponse`).
 * - Streaming (NDJSON by default, last line `"done": true`): https://docs.ollama.com/api/streaming .
 * - Sampling options (`options.temperature`, `top_p`, `num_predict`, `stop`, `seed`, penalties):
 *   https://docs.ollama.com/modelfile#valid-parameters-and-values .
 * - Tools (`arguments` are objects, results use `tool_name`): https://docs.ollama.com/capabilities/tool-calling .
 * - Images (`images: [<raw base64>]` on the message): https://docs.ollama.com/capabilities/vision .
 * - JSON mode / structured outputs (`format: "json" | <JSON Schema>`): https://docs.ollama.com/capabilities/structured-outputs .
 * - Errors (`{"error": "..."}`, and mid-stream as an NDJSON line with the status unchanged):
 *   https://docs.ollama.com/api/errors ; 503 "server busy" when `OLLAMA_MAX_QUEUE` is exceeded
 *   (https://docs.ollama.com/faq#how-does-ollama-handle-concurrent-requests).
 * - Models: https://docs.ollama.com/api/tags (one unpaged list; no display names).
 * - Embeddings: https://docs.ollama.com/api/embed (`embeddings.ts`).
 *
 * The work is split by job: `request.ts` (request → body, every field decision), `response.ts`
 * (answer → `chat.completion`), `stream.ts` (NDJSON lines → chunks), `errors.ts` (error answers);
 * this file builds the call and lists the models.
 */
import type { ChatCompletionRequest } from '../../../../core/canonical/chat-types.ts';
import type { EmbeddingsCall, ResponseCodec, UpstreamCall } from '../../../../core/upstream/upstream-call.ts';
import type { EmbeddingRequest } from '../../../../core/canonical/embedding-types.ts';
import { malformedResponse } from '../canonical.ts';
import { Provider, splitBaseUrl, type CatalogEntry, type ChatCallOptions, type Credential } from '../base.ts';
import { mapOllamaError } from './errors.ts';
import { toOllamaRequest } from './request.ts';
import { toChatCompletion } from './response.ts';
import { OllamaStreamDecoder } from './stream.ts';
import { decodeOllamaEmbed, toOllamaEmbedRequest } from './embeddings.ts';

/**
 * The `ollama` provider type. `buildChatCall` throws 400 (`GatewayError`, `param` set) for requests
 * Ollama cannot honour; the codec maps answers, NDJSON streams and errors as described above.
 * `listModels` reads `GET {base}/api/tags` and throws `GatewayError` (502 `upstream_unreachable` when
 * Ollama is not running).
 */
export class OllamaProvider extends Provider {
  readonly name = 'Ollama';
  override readonly requiresApiKey = false;

  buildChatCall(request: ChatCompletionRequest, { model, credential }: ChatCallOptions): UpstreamCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = toOllamaRequest(request, model, this.id);
    return this.postJson(credential, origin, `${basePath}/api/chat`, body, body.stream, this.codec(model));
  }

  /** `POST {base}/api/embed` (`embeddings.ts`). */
  override buildEmbeddingCall(request: EmbeddingRequest, { model, credential }: ChatCallOptions): EmbeddingsCall {
    const { origin, basePath } = splitBaseUrl(credential.baseUrl);
    const body = toOllamaEmbedRequest(request, model, this.name);
    const provider = this.id;
    return this.postEmbeddings(credential, origin, `${basePath}/api/embed`, body, {
      decodeError: (status, bodyText, headers) => mapOllamaError(provider, model, status, bodyText, headers),
      decodeEmbeddings: (bodyText) => decodeOllamaEmbed(provider, model, bodyText),
    });
  }

  private codec(model: string): ResponseCodec {
    const provider = this.id;
    return {
      framing: 'ndjson',
      decodeError: (status, bodyText, headers) => mapOllamaError(provider, model, status, bodyText, headers),
      decodeResponse: (bodyText) => ({ completion: toChatCompletion(bodyText, model, provider), raw: null }),
      createStreamDecoder: () => new OllamaStreamDecoder(provider, model),
    };
  }

  /** The locally pulled models (`GET /api/tags`, one unpaged list): id = `name`, created = `modified_at`. */
  async listModels(credential: Credential, signal?: AbortSignal): Promise<CatalogEntry[]> {
    const url = `${credential.baseUrl.replace(/\/+$/, '')}/api/tags`;
    const list = (await this.upstream.getJson(this.id, url, this.authHeaders(credential), signal)) as {
      models?: Array<{ name?: unknown; model?: unknown; modified_at?: unknown }>;
    };
    if (!list || !Array.isArray(list.models)) throw malformedResponse(this.id, 'a model list without "models"');
    const entries: CatalogEntry[] = [];
    for (const m of list.models) {
      const id = typeof m?.name === 'string' && m.name ? m.name : typeof m?.model === 'string' ? m.model : '';
      if (!id) continue;
      const ms = typeof m.modified_at === 'string' ? Date.parse(m.modified_at) : NaN;
      entries.push({ id, created: Number.isFinite(ms) ? Math.floor(ms / 1000) : 0, owned_by: 'ollama' });
    }
    return entries;
  }
}
