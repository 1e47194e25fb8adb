/**
 * Rendering canonical answers as OpenAI Chat Completions: the canonical shapes ARE this dialect's, so
 * a completion or chunk whose upstream bytes are already canonical is sent byte for byte. Streams are
 * SSE `data:` lines ending in `data: [DONE]`; after an error, one `data: {"error":{...}}` event (what
 * openai-node raises as `APIError`). Usage the gateway asked for on the client's behalf is removed
 * unless the client asked too (a usage-only chunk is dropped, usage on a content chunk nulled), and a
 * client that asked for `include_usage` gets a usage chunk even when the gateway had to count it.
 */
import type { ChatCompletionChunk, TokenCounts } from '../../canonical/chat-types.ts';
import type { GatewayError } from '../../errors.ts';
import type { Exchange } from '../../exchange.ts';
import type { DecodedChunk, DecodedResponse } from '../../upstream/upstream-call.ts';
import { sseData, sseError, SSE_DONE } from '../../proxy/sse.ts';
import type { ResponseRenderer } from '../dialect.ts';

/** The usage-only chunk (`choices: []`) OpenAI sends last when `include_usage` is set. */
function usageChunk(ex: Exchange, counts: TokenCounts): ChatCompletionChunk {
  return {
    id: `chatcmpl-${ex.id.slice(4)}`,
    object: 'chat.completion.chunk',
    created: Math.floor(ex.startedAtMs / 1000),
    model: ex.modelServed ?? ex.target?.model ?? '',
    choices: [],
    usage: {
      prompt_tokens: counts.promptTokens,
      completion_tokens: counts.completionTokens,
      total_tokens: counts.promptTokens + counts.completionTokens,
      prompt_tokens_details: { cached_tokens: counts.cachedTokens },
    },
  };
}

class OpenAIChatRenderer implements ResponseRenderer {
  constructor(private readonly ex: Exchange) {}

  completion(decoded: DecodedResponse): string {
    return decoded.raw ?? JSON.stringify(decoded.completion);
  }

  chunk({ chunk, raw }: DecodedChunk): string {
    if (chunk.usage && !this.ex.clientWantsUsage) {
      if (chunk.choices.length === 0) return '';
      return sseData(JSON.stringify(Object.assign({}, chunk, { usage: null })));
    }
    return sseData(raw ?? JSON.stringify(chunk));
  }

  end(): string {
    const { ex } = this;
    // The contract: a client that asked for include_usage gets a usage chunk, estimated if need be.
    if (ex.usageEstimated && ex.clientWantsUsage && ex.usage) return sseData(JSON.stringify(usageChunk(ex, ex.usage))) + SSE_DONE;
    return SSE_DONE;
  }

  error(err: GatewayError): string {
    return sseError(err.toBody());
  }
}

export function createOpenAIChatRenderer(ex: Exchange): ResponseRenderer {
  return new OpenAIChatRenderer(ex);
}
