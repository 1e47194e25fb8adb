/**
 * The generic OpenAI-compatible upstream (Groq, DeepSeek, OpenRouter, vLLM, LM Studio, Ollama's /v1),
 * declared in the manifest under any id with a base URL and, usually, a key. It speaks OpenAI's wire
 * format, so it extends the OpenAI provider and absorbs the known deviations
 * (docs/provider-wire-formats.md §6):
 * - SSE comments and keep-alives (`: keep-alive`, `: OPENROUTER PROCESSING`) are skipped by the framer;
 * - error bodies whose `error` is a string (LM Studio), whose `code` is a number (OpenRouter), or
 *   that have no `error` wrapper (vLLM) are read by `mapOpenAIError`;
 * - vendor usage fields: Groq's streamed `x_groq.usage` becomes `usage`; DeepSeek's
 *   `prompt_cache_hit_tokens` becomes `prompt_tokens_details.cached_tokens` (its `prompt_tokens`
 *   already includes the hits, https://api-docs.deepseek.com/api/create-chat-completion).
 * Such chunks and bodies are re-serialized; everything else passes through byte for byte.
 */
import type { ChatCompletionChunk, Usage } from '../../../core/canonical/chat-types.ts';
import type { DecodedChunk, ResponseCodec, StreamDecoder } from '../../../core/upstream/upstream-call.ts';
import { OpenAIProvider } from './openai/index.ts';

type VendorUsage = Usage & { prompt_cache_hit_tokens?: number };

/** Adds `cached_tokens` from DeepSeek's field; returns true when it changed `usage`. */
function normalizeUsage(usage: VendorUsage): boolean {
  const hits = usage.prompt_cache_hit_tokens;
  if (typeof hits !== 'number' || usage.prompt_tokens_details?.cached_tokens !== undefined) return false;
  usage.prompt_tokens_details = Object.assign({}, usage.prompt_tokens_details, { cached_tokens: hits });
  return true;
}

/** Normalizes one decoded chunk in place; nulls `raw` when the chunk changed. */
function normalizeChunk(decoded: DecodedChunk): void {
  const chunk = decoded.chunk as ChatCompletionChunk & { x_groq?: { usage?: Usage } };
  let changed = false;
  if (!chunk.usage && chunk.x_groq?.usage) {
    chunk.usage = chunk.x_groq.usage;
    changed = true;
  }
  if (chunk.usage && normalizeUsage(chunk.usage)) changed = true;
  if (changed) decoded.raw = null;
}

export class OpenAICompatibleProvider extends OpenAIProvider {
  override readonly name: string = 'OpenAI-compatible';

  /**
   * Most compatible servers speak Chat Completions and, when they embed at all, OpenAI's embeddings
   * API (vLLM, LM Studio, Ollama's /v1, OpenRouter): embeddings always pass through, and a server
   * without them answers its own 404. The manifest says which also serve more (`openai-responses`).
   */
  private readonly declaredDialects: ReadonlySet<string> = new Set([...(this.settings.nativeDialects ?? []), 'openai-embeddings']);

  override get nativeDialects(): ReadonlySet<string> {
    return this.declaredDialects;
  }

  /** Other servers' model names say nothing about reasoning: `reasoning_effort` goes as the client sent it. */
  protected override refusesReasoning(): boolean {
    return false;
  }
  /** vLLM, Ollama's /v1 and OpenRouter sample with `top_k`; a server without it answers for itself. */
  protected override hasTopK(): boolean {
    return true;
  }

  /** Local servers (vLLM, LM Studio) often run without a key. */
  override readonly requiresApiKey: boolean = false;

  protected override codec(model: string): ResponseCodec {
    const base = super.codec(model);
    return {
      framing: base.framing,
      decodeError: base.decodeError,
      decodeResponse(bodyText) {
        const decoded = base.decodeResponse(bodyText);
        if (decoded.completion.usage && normalizeUsage(decoded.completion.usage)) return { completion: decoded.completion, raw: null };
        return decoded;
      },
      createStreamDecoder(): StreamDecoder {
        const inner = base.createStreamDecoder();
        return {
          decode(event, out) {
            const from = out.length;
            const done = inner.decode(event, out);
            for (let i = from; i < out.length; i++) normalizeChunk(out[i]!);
            return done;
          },
          finish: (out) => inner.finish(out),
        };
      },
    };
  }
}
