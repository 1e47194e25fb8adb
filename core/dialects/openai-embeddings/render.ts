/**
 * Rendering an embeddings answer as OpenAI's `CreateEmbeddingResponse` (openai-node
 * `src/resources/embeddings.ts`): `{object: "list", data: [{object: "embedding", index, embedding}],
 * model, usage: {prompt_tokens, total_tokens}}`, each vector as JSON numbers or, with
 * `encoding_format: "base64"`, as base64 of little-endian float32s (what OpenAI sends and openai-node's
 * `toFloat32Array` decodes; the SDK asks for base64 whenever its caller names no format).
 *
 * An embeddings exchange is never streamed and never answers a chat completion: the proxy hands its
 * decoded result to `embeddings()` (`core/proxy/embeddings-relay.ts`), so the chat methods of the contract
 * are unreachable here and fail loudly if that ever changes.
 */
import type { EmbeddingResult } from '../../canonical/embedding-types.ts';
import { vectorToBase64 } from '../../canonical/embedding-types.ts';
import { embeddingRequestOf } from '../../canonical/canonical-request.ts';
import type { GatewayError } from '../../errors.ts';
import type { Exchange } from '../../exchange.ts';
import { sseError } from '../../proxy/sse.ts';
import type { ResponseRenderer } from '../dialect.ts';

function notAChatAnswer(): never {
  throw new Error('the openai-embeddings dialect renders embeddings only, never a chat completion or chunk');
}

class OpenAIEmbeddingsRenderer implements ResponseRenderer {
  constructor(private readonly ex: Exchange) {}

  completion(): string {
    return notAChatAnswer();
  }

  chunk(): string {
    return notAChatAnswer();
  }

  end(): string {
    return notAChatAnswer();
  }

  error(err: GatewayError): string {
    return sseError(err.toBody());
  }

  embeddings(result: EmbeddingResult): string {
    const { ex } = this;
    const base64 = embeddingRequestOf(ex.request)?.encodingFormat === 'base64';
    const promptTokens = ex.usage?.promptTokens ?? 0;
    return JSON.stringify({
      object: 'list',
      data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(vector) : vector })),
      model: result.model || ex.target?.model || '',
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  }
}

export function createOpenAIEmbeddingsRenderer(ex: Exchange): ResponseRenderer {
  return new OpenAIEmbeddingsRenderer(ex);
}
