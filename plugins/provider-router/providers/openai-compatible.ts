/**
 * The generic OpenAI-compatible upstream (Groq, DeepSeek, OpenRouter, vLLM, LM Studio, Ollama's /v1),
 * declared in the manifest under any id with a base URL and, usually, a key. It speaks OpenAI's wire
 * format, so it extends the OpenAI provider and absorbs the known deviations
 * (shared/reference/provider-wire-formats.md §6): SSE comments and keep-alives (the framer skips
 * them), error bodies whose `error` is a string or whose `code` is a number, no `error` wrapper, and
 * vendor usage fields (DeepSeek `prompt_cache_hit_tokens`, Groq `x_groq.usage`).
 */
import { OpenAIProvider } from './openai.ts';

export class OpenAICompatibleProvider extends OpenAIProvider {
  override readonly name: string = 'OpenAI-compatible';
  /** Local servers (vLLM, LM Studio) often run without a key. */
  override readonly requiresApiKey: boolean = false;
}
