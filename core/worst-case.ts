/**
 * The worst case of a model call, which budgets and token limits reserve before forwarding: the
 * prompt counted locally (`token-estimate.ts`) plus every output token the request may make the
 * model generate: its output cap (`max_completion_tokens`, else `max_tokens`, else the plugin's
 * configured estimate) for each of its `n` choices. An embeddings call (`ex.embedding`) generates
 * nothing: its worst case is its inputs alone, no output tokens (not a default output estimate).
 * One helper, so budget and rate-limit reserve the same thing.
 */
import { maxOutputTokens } from './chat-types.ts';
import type { Exchange } from './exchange.ts';
import type { TokenEstimator } from './token-estimate.ts';
import { withChatOutputCap } from './dialects/openai-chat/index.ts';

export interface WorstCaseTokens {
  /** Prompt tokens, counted locally once per exchange. */
  promptTokens: number;
  /** Output tokens of all choices: the per-choice cap × `n`. */
  outputTokens: number;
  /** The per-choice output cap (the request's, or the default). */
  outputTokensPerChoice: number;
  /** `n`: how many choices the request asks for (at least 1). */
  choices: number;
}

/**
 * The worst case of `ex`'s canonical request; zeros when the exchange is not a model call.
 * `defaultMaxOutputTokens` applies when the request sets no output cap.
 */
export function worstCaseTokens(ex: Exchange, tokens: TokenEstimator, defaultMaxOutputTokens: number): WorstCaseTokens {
  const request = ex.request;
  if (!request) return { promptTokens: 0, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 };
  if (ex.embedding) return { promptTokens: tokens.promptTokens(ex), outputTokens: 0, outputTokensPerChoice: 0, choices: 1 };
  const perChoice = maxOutputTokens(request) ?? defaultMaxOutputTokens;
  const choices = typeof request.n === 'number' && request.n > 1 ? Math.floor(request.n) : 1;
  return { promptTokens: tokens.promptTokens(ex), outputTokens: perChoice * choices, outputTokensPerChoice: perChoice, choices };
}

/**
 * Lowers `ex`'s output limit to `tokens` per choice: in the canonical request (what translating
 * providers send) and in the client's own body in its dialect's field (what a native pass-through
 * sends). The caller rebuilds the upstream call afterwards (`UpstreamCall.withOutputCap`).
 */
export function capOutputTokens(ex: Exchange, tokens: number): void {
  if (ex.request) ex.request = withChatOutputCap(ex.request, tokens);
  if (ex.clientBody && ex.dialect) ex.clientBody = ex.dialect.capOutput(ex.clientBody, tokens);
}
