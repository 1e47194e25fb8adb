/**
 * The worst case of a model call, which budgets and token limits reserve before forwarding: the
 * prompt's tokens (a short prompt's byte bound, else counted locally: `token-estimate.ts`; `exact`
 * counts even a short one) plus every output token the request may make the
 * model generate: its output cap (`max_completion_tokens`, else `max_tokens`, else the plugin's
 * configured estimate) for each of its `n` choices. An embeddings call (`isEmbeddingRequest`) generates
 * nothing: its worst case is its inputs alone, no output tokens (not a default output estimate).
 * One helper, so budget and rate-limit reserve the same thing.
 */
import { maxOutputTokens, withChatOutputCap } from '../canonical/chat-types.ts';
import { chatRequestOf, isEmbeddingRequest } from '../canonical/canonical-request.ts';
import type { Exchange } from '../exchange.ts';
import type { TokenEstimator } from './token-estimate.ts';

export interface WorstCaseTokens {
  /** Prompt tokens: the byte bound of a short prompt (`promptBound`), else counted locally once per exchange. */
  promptTokens: number;
  /**
   * True when `promptTokens` is the byte bound (`TokenEstimator.promptTokensBound`): the exact count
   * may be lower, so a caller the bound does not fit counts exactly (`exact`) and decides again.
   */
  promptBound: boolean;
  /** Output tokens of all choices: the per-choice cap × `n`. */
  outputTokens: number;
  /** The per-choice output cap (the request's, or the default). */
  outputTokensPerChoice: number;
  /** `n`: how many choices the request asks for (at least 1). */
  choices: number;
}

/**
 * The worst case of `ex`'s canonical request; zeros when the exchange is not a model call.
 * `defaultMaxOutputTokens` applies when the request sets no output cap. The prompt is its byte bound
 * when short, unless `exact`; otherwise counted, so the tokenizer must be loaded (`tokens.readyFor(ex)`,
 * or `tokens.ready()` for `exact`) or the count is rough.
 */
export function worstCaseTokens(ex: Exchange, tokens: TokenEstimator, defaultMaxOutputTokens: number, exact = false): WorstCaseTokens {
  const request = ex.request;
  if (!request) return { promptTokens: 0, promptBound: false, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 };
  const bound = exact ? null : tokens.promptTokensBound(ex);
  const promptTokens = bound ?? tokens.promptTokens(ex);
  const promptBound = bound !== null;
  if (isEmbeddingRequest(request)) return { promptTokens, promptBound, outputTokens: 0, outputTokensPerChoice: 0, choices: 1 };
  const perChoice = maxOutputTokens(request) ?? defaultMaxOutputTokens;
  const choices = typeof request.n === 'number' && request.n > 1 ? Math.floor(request.n) : 1;
  return { promptTokens, promptBound, outputTokens: perChoice * choices, outputTokensPerChoice: perChoice, choices };
}

/**
 * Lowers `ex`'s output limit to `tokens` per choice: in the canonical request (what translating
 * providers send) and in the client's own body in its dialect's field (what a native pass-through
 * sends). The caller rebuilds the upstream call afterwards (`UpstreamCall.withOutputCap`).
 */
export function capOutputTokens(ex: Exchange, tokens: number): void {
  const chat = chatRequestOf(ex.request);
  if (chat) ex.request = withChatOutputCap(chat, tokens);
  if (ex.clientBody && ex.dialect) ex.clientBody = ex.dialect.capOutput(ex.clientBody, tokens);
}
