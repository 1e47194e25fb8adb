/**
 * Local token counts, for when the upstream reports none: a budget or token limit reserving before
 * forwarding, a stream whose upstream sent no usage (or all zeros for a non-empty answer), a client
 * that disconnected mid-stream. Counts use the `o200k_base` BPE of gpt-tokenizer (the GPT-4o / o-series
 * tokenizer); for other providers' models they are an approximation, which is why rows billed from
 * them are marked `estimated`.
 *
 * Message overhead follows OpenAI's cookbook "How to count tokens with tiktoken": 3 tokens per
 * message, 1 per `name`, 3 to prime the reply. Images count as 765 tokens (a high-detail 1024×1024
 * image) because their size is unknown here. A string longer than `EXACT_CHARS_MAX` is counted as
 * ⌈chars / 3⌉ (above the ~4 chars per token of prose) so a huge prompt never blocks the event loop.
 */
import type { ChatCompletionRequest, ChatMessage, TokenCounts } from './chat-types.ts';
import type { Exchange } from './exchange.ts';
import { isTokenInput, type EmbeddingRequest } from './embedding-types.ts';

const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;
const IMAGE_TOKENS = 765;
/** Beyond this many characters a string is estimated, not tokenized (tokenizing costs ~1.7 µs/token). */
export const EXACT_CHARS_MAX = 50_000;

export interface TokenEstimator {
  /** Tokens in `text`. */
  count(text: string): number;
  /**
   * Prompt tokens of the canonical `ex.request` (or, for an embeddings call, of `ex.embedding`'s
   * inputs), computed once per exchange (memoized on `ex.promptTokensEstimate`).
   */
  promptTokens(ex: Exchange): number;
  /** Tokens of what the upstream generated so far (`ex.generated`). */
  completionTokens(ex: Exchange): number;
}

/** Loads the tokenizer (its merge table is ~2 MB; about 150 ms once per process). */
export async function loadTokenEstimator(): Promise<TokenEstimator> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const count = (text: string): number => {
    if (!text) return 0;
    return text.length > EXACT_CHARS_MAX ? Math.ceil(text.length / 3) : countTokens(text);
  };
  return {
    count,
    promptTokens(ex) {
      if (ex.promptTokensEstimate === null) {
        ex.promptTokensEstimate = ex.embedding ? embeddingTokens(ex.embedding, count) : ex.request ? requestTokens(ex.request, count) : 0;
      }
      return ex.promptTokensEstimate;
    },
    completionTokens(ex) {
      return count(ex.generated.join(''));
    },
  };
}

function messageTokens(message: ChatMessage, count: (text: string) => number): number {
  let tokens = TOKENS_PER_MESSAGE + count(message.role);
  if (message.name) tokens += TOKENS_PER_NAME + count(message.name);
  const content = message.content;
  if (typeof content === 'string') tokens += count(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') tokens += count(part.text);
      else if (part.type === 'image_url') tokens += IMAGE_TOKENS;
      else tokens += count(JSON.stringify(part));
    }
  }
  for (const call of message.tool_calls ?? []) tokens += count(call.function.name) + count(call.function.arguments);
  return tokens;
}

/** Prompt tokens of a chat request: messages with their overhead, plus tool definitions. */
function requestTokens(body: ChatCompletionRequest, count: (text: string) => number): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const message of body.messages) tokens += messageTokens(message, count);
  if (Array.isArray(body.tools) && body.tools.length > 0) tokens += count(JSON.stringify(body.tools));
  return tokens;
}

/**
 * Input tokens of an embeddings call: each text counted as it is (no message overhead: the inputs are
 * embedded one by one, not wrapped in a chat), token-id inputs by their length.
 */
function embeddingTokens(request: EmbeddingRequest, count: (text: string) => number): number {
  let tokens = 0;
  if (isTokenInput(request.input)) for (const ids of request.input) tokens += ids.length;
  else for (const text of request.input as string[]) tokens += count(text);
  return tokens;
}

/**
 * Makes `ex.usage` billable when the upstream's report is missing or cut short, and marks it
 * `ex.usageEstimated`. Runs when an answer ends (normally or by a client disconnect) after the
 * upstream accepted the request. Rules:
 * - no usage, or all zeros while text was generated: prompt and completion both counted locally;
 * - the client left mid-answer: completion is the larger of the reported and the counted tokens
 *   (a cumulative usage report may be stale), prompt is the reported one when there is one.
 */
export function completeUsage(ex: Exchange, estimator: TokenEstimator): void {
  const reported = ex.usage;
  const missing = reported === null || (reported.promptTokens === 0 && reported.completionTokens === 0);
  if (!missing && !ex.clientAborted) return;
  const generated = estimator.completionTokens(ex);
  if (missing && reported !== null && generated === 0 && !ex.clientAborted) return; // a real zero: nothing generated
  const usage: TokenCounts = {
    promptTokens: reported && reported.promptTokens > 0 ? reported.promptTokens : estimator.promptTokens(ex),
    completionTokens: Math.max(reported?.completionTokens ?? 0, generated),
    cachedTokens: reported?.cachedTokens ?? 0,
    cacheWriteTokens: reported?.cacheWriteTokens ?? 0,
  };
  ex.usage = usage;
  ex.usageEstimated = true;
}
