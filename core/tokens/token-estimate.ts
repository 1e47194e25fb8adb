/**
 * Local token counts, for when the upstream reports none: a budget or token limit reserving before
 * forwarding, a stream whose upstream sent no usage (or all zeros for a non-empty answer), a client
 * that disconnected mid-stream. Counts use the `o200k_base` BPE of gpt-tokenizer (the GPT-4o / o-series
 * tokenizer); for other providers' models they are an approximation, which is why rows billed from
 * them are marked `estimated`.
 *
 * A chat request is counted by `prompt-tokens.ts` (message overhead and tool definitions per OpenAI's
 * cookbook, images per the target provider's documented rule) with the target's `PromptTokenRules`
 * (`ex.target.promptTokenRules`, set by the router; OpenAI's defaults before routing). The count is
 * memoized per exchange; when the rules change (a rate limit counts before routing, the budget after)
 * only the rules are applied again to the text counted once (`PromptParts`). Exact counts of prompt
 * texts are also kept across requests (`TextCountCache`): a repeated system prompt or history is
 * looked up, not tokenized again. What the tokenizer itself remembers of a request's texts (its merge
 * cache, whose keys keep whole prompts alive) is dropped once each count is done (`O200kCounter.forget`).
 *
 * The tokenizer's tables take ~27 MB resident (~70 MB while loading) and ~100 ms to load
 * (`o200k-tokenizer.ts`), so they are loaded on the first count a request needs (`ready()`), not at
 * start. A reservation does not need one for a short prompt (`BOUND_PROMPT_MAX_BYTES` of text): it
 * holds the prompt's byte bound (`promptTokensBound`), which no count exceeds, and the budget and
 * rate-limit plugins count only when that bound does not fit. So a gateway whose users have no budget
 * or token limit, or send short prompts, and whose upstreams report usage never loads them. Callers
 * await `ready()` (or `readyFor(ex)`, for a reservation) before counting (the budget and rate-limit
 * hooks, the proxy when an answer ends without usage); a count before that (a bug) or after a failed
 * load uses `roughTokens`, an over-estimate, and is logged.
 *
 * Each request's count is bounded in work (`bounded-token-count.ts`): exact for small texts, sampled
 * and extrapolated beyond a budget of a few ms, so a huge or adversarial prompt (a 50,000-character CJK
 * run, which the BPE takes ~10 s over) never blocks the event loop; the error bound is stated there.
 */
import type { TokenCounts } from '../canonical/chat-types.ts';
import type { Exchange } from '../exchange.ts';
import { isTokenInput, type EmbeddingRequest } from '../canonical/embedding-types.ts';
import { isEmbeddingRequest } from '../canonical/canonical-request.ts';
import { createTokenMeter, TextCountCache } from './bounded-token-count.ts';
import type { Log } from '../runtime/log.ts';
import { promptParts, promptTokensWith, type PromptParts } from './prompt-tokens.ts';
import { DEFAULT_PROMPT_TOKEN_RULES, type PromptTokenRules } from './prompt-token-rules.ts';
import { loadO200kCounter } from './o200k-tokenizer.ts';

export interface TokenEstimator {
  /**
   * Starts loading the tokenizer (once) and resolves when counts are exact; null when they already
   * are, so a hot path pays nothing: `const loading = tokens.ready(); if (loading) await loading;`.
   * Never rejects (a failed load is logged and counts stay rough).
   */
  ready(): Promise<void> | null;
  /**
   * What must load before `ex`'s prompt can be reserved: the tokenizer, unless its byte bound serves
   * (`promptTokensBound`) or it is loaded already; null when nothing must, so a hot path pays nothing.
   * Never rejects.
   */
  readyFor(ex: Exchange): Promise<void> | null;
  /**
   * A bound on `ex`'s prompt tokens, made without the tokenizer, for a reservation: each text counted
   * as its UTF-8 bytes (o200k_base is a byte-level BPE: no token is shorter than one byte, so no text
   * has more tokens than bytes; a role is one token), message framing, tool definitions and images as
   * `promptTokens` counts them, with the target's rules. Never below `promptTokens(ex)`. Null when the
   * prompt's texts pass `BOUND_PROMPT_MAX_BYTES`: the bound would then hold back too much, and the
   * prompt is counted (`promptTokens`, after `readyFor`).
   */
  promptTokensBound(ex: Exchange): number | null;
  /** Tokens in `text` (bounded work: exact when small, estimated beyond the budget). */
  count(text: string): number;
  /**
   * Prompt tokens of the canonical `ex.request` (for an embeddings call, of its inputs), computed once
   * per exchange (memoized on `ex.promptTokensEstimate`).
   */
  promptTokens(ex: Exchange): number;
  /** Tokens of what the upstream generated so far (`ex.generated`). */
  completionTokens(ex: Exchange): number;
}

/**
 * Tokens of `text` without the tokenizer: UTF-8 bytes / 3, rounded up. An over-estimate for the texts
 * o200k_base compresses well (English: ~4 characters per token) and about right for CJK (3 bytes, ~1 token).
 */
export function roughTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/**
 * UTF-8 bytes of prompt text up to which a reservation holds the byte bound (`promptTokensBound`)
 * rather than an exact count. Why: a short prompt's exact count saves a reservation at most this many
 * tokens, little beside the output cap every reservation also holds (4096 by default), while counting
 * needs the tokenizer's tables (~27 MB resident, ~100 ms to load): a gateway whose users send short
 * prompts never loads them. Where the difference could decide (a token limit or a budget that the
 * bound does not fit), the budget and rate-limit plugins count exactly and decide again, so the bound
 * never refuses or caps a request the count would serve. Settled to the reported usage either way.
 */
export const BOUND_PROMPT_MAX_BYTES = 2048;

/** Roles, each one o200k_base token (`test/core/prompt-bound.test.ts` checks it). */
const ONE_TOKEN_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool', 'developer', 'function']);

// The byte bound's running total: module state rather than a counter object per request, since a
// bound is taken synchronously, start to end, by `promptTokensBound` alone.
let boundBytes = 0;

/** A text's tokens bounded by its UTF-8 bytes (a role: 1); stops measuring once past the maximum, whose bound is discarded. */
function boundTokens(text: string): number {
  if (boundBytes > BOUND_PROMPT_MAX_BYTES) return 0;
  const tokens = text.length <= 9 && ONE_TOKEN_ROLES.has(text) ? 1 : Buffer.byteLength(text, 'utf8');
  boundBytes += tokens;
  return tokens;
}

/** Characters of prompt texts whose exact counts an estimator keeps (`TextCountCache`): ~1-2 MB. */
const PROMPT_CACHE_CHARS = 1_000_000;

/** The estimator, its tokenizer loaded on first need (see the module doc). `log` reports a rough count or a failed load. */
export function createTokenEstimator(log?: Log): TokenEstimator {
  let countTokens: ((text: string) => number) | null = null;
  /** The tokenizer's `forget` once loaded: called after each count a request asks for (`O200kCounter`). */
  let forget = (): void => {};
  let loading: Promise<void> | null = null;
  let warned = false;
  const ready = (): Promise<void> | null => {
    if (countTokens) return null;
    const startedMs = performance.now();
    loading ??= loadO200kCounter().then(
      (counter) => {
        countTokens = counter.count;
        forget = counter.forget;
        log?.info('token counting: tokenizer loaded', { ms: Math.round(performance.now() - startedMs) });
      },
      (err: unknown) => {
        log?.error('token counting: the tokenizer could not be loaded; counts are rough over-estimates', { err: String(err) });
        countTokens = roughTokens;
      },
    );
    return loading;
  };
  const count = (text: string): number => {
    if (countTokens) return countTokens(text);
    if (!warned) {
      warned = true;
      log?.warn('token counting: a count before the tokenizer loaded; using a rough over-estimate');
    }
    void ready();
    return roughTokens(text);
  };
  // One meter per count: the budget bounds the work of a whole request, not of each string.
  const meter = () => createTokenMeter(count);
  // Prompts repeat (system prompts, resent history): their counts are kept, ~1 MB of text at most;
  // not before the tokenizer is loaded, whose counts would replace the rough ones.
  const promptTexts = new TextCountCache(PROMPT_CACHE_CHARS);
  const promptCounter = () => {
    const m = createTokenMeter(count, undefined, countTokens ? promptTexts : undefined);
    return (text: string) => m.count(text);
  };
  // The rules each exchange's memoized count was made with, and the rules-free parts it was made from
  // (WeakMaps: no fields on the exchange).
  const countedWith = new WeakMap<Exchange, PromptTokenRules>();
  const partsOf = new WeakMap<Exchange, PromptParts>();
  const promptTokensBound = (ex: Exchange): number | null => {
    boundBytes = 0;
    let tokens = 0;
    const request = ex.request;
    if (request && isEmbeddingRequest(request)) tokens = embeddingTokens(request, boundTokens);
    else if (request) tokens = promptTokensWith(promptParts(request, boundTokens), ex.target?.promptTokenRules ?? DEFAULT_PROMPT_TOKEN_RULES);
    return boundBytes > BOUND_PROMPT_MAX_BYTES ? null : tokens;
  };
  return {
    ready,
    readyFor: (ex) => (countTokens || promptTokensBound(ex) !== null ? null : ready()),
    promptTokensBound,
    count(text) {
      const tokens = meter().count(text);
      forget();
      return tokens;
    },
    promptTokens(ex) {
      const rules = ex.target?.promptTokenRules ?? DEFAULT_PROMPT_TOKEN_RULES;
      const request = ex.request;
      // An embeddings call's count has no rules in it (texts and token ids only): it never changes with the target.
      const embedding = request !== null && isEmbeddingRequest(request);
      if (ex.promptTokensEstimate !== null && ((countedWith.get(ex) ?? rules) === rules || embedding)) return ex.promptTokensEstimate;
      // A null estimate means the request changed (or was never counted): count its text again.
      const parts = ex.promptTokensEstimate === null ? undefined : partsOf.get(ex);
      if (parts) ex.promptTokensEstimate = promptTokensWith(parts, rules);
      else if (embedding) {
        ex.promptTokensEstimate = embeddingTokens(request, promptCounter());
        forget();
      } else if (request) {
        const counted = promptParts(request, promptCounter());
        forget();
        partsOf.set(ex, counted);
        ex.promptTokensEstimate = promptTokensWith(counted, rules);
      } else ex.promptTokensEstimate = 0;
      countedWith.set(ex, rules);
      return ex.promptTokensEstimate;
    },
    completionTokens(ex) {
      const tokens = meter().count(ex.generated.join(''));
      forget();
      return tokens;
    },
  };
}

/** The estimator with its tokenizer loaded (tests, and callers that count at once). */
export async function loadTokenEstimator(log?: Log): Promise<TokenEstimator> {
  const estimator = createTokenEstimator(log);
  await estimator.ready();
  return estimator;
}

/**
 * Input tokens of an embeddings call: each text counted as it is (no message overhead: the inputs are
 * embedded one by one, not wrapped in a chat), token-id inputs by their length.
 */
function embeddingTokens(request: EmbeddingRequest, count: (text: string) => number): number {
  let tokens = 0;
  if (isTokenInput(request.input)) for (const ids of request.input) tokens += ids.length;
  else for (const text of request.input) tokens += count(text);
  return tokens;
}

/**
 * Makes `ex.usage` billable when the upstream's report is missing or cut short, and marks it
 * `ex.usageEstimated`. Runs when an answer ends (normally, or early: `cut`) after the upstream
 * accepted the request. Rules:
 * - no usage, or all zeros while text was generated: prompt and completion both counted locally;
 * - the answer ended early (`cut`: the upstream cut it, a timeout, the shutdown; or the client left):
 *   completion is the larger of the reported and the counted tokens (a report sent before the end,
 *   Anthropic's `message_start`, is stale), prompt is the reported one when there is one, else
 *   counted: the provider bills the input it processed even when the answer never arrived.
 */
export function completeUsage(ex: Exchange, estimator: TokenEstimator, cut = false): void {
  const reported = ex.usage;
  const missing = usageMissing(ex);
  const early = cut || ex.clientAborted;
  if (!missing && !early) return;
  const generated = estimator.completionTokens(ex);
  if (missing && reported !== null && generated === 0 && !early) return; // a real zero: nothing generated
  const usage: TokenCounts = {
    promptTokens: reported && reported.promptTokens > 0 ? reported.promptTokens : estimator.promptTokens(ex),
    completionTokens: Math.max(reported?.completionTokens ?? 0, generated),
    cachedTokens: reported?.cachedTokens ?? 0,
    cacheWriteTokens: reported?.cacheWriteTokens ?? 0,
  };
  ex.usage = usage;
  ex.usageEstimated = true;
}

/** No usage, or all zeros: `completeUsage` will count. */
function usageMissing(ex: Exchange): boolean {
  return ex.usage === null || (ex.usage.promptTokens === 0 && ex.usage.completionTokens === 0);
}

/** `completeUsage`, after loading the tokenizer when this exchange needs a count (the only await). */
export async function settleUsage(ex: Exchange, estimator: TokenEstimator, cut = false): Promise<void> {
  if (usageMissing(ex) || ex.clientAborted || cut) {
    const loading = estimator.ready();
    if (loading) await loading;
  }
  completeUsage(ex, estimator, cut);
}
