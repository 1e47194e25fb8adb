/**
 * Token counting with a bounded cost per request, so a local count never blocks the event loop for
 * more than a few milliseconds whatever the client sends (issue 14, item 2).
 *
 * Why: gpt-tokenizer's BPE is quadratic in the length of one pre-token, and a run of CJK characters
 * without punctuation (or a long run of one letter) is one pre-token: measured on Node 20 here,
 * 8,000 such CJK characters take ~160 ms and 49,999 take ~10 s, during which every other request
 * waits. English prose or code is linear (~0.2 µs a character) but a 32 MiB body still costs seconds.
 *
 * How: a `TokenMeter` serves one request's counts (every string of a prompt, or a whole answer).
 * 1. Texts are cut into chunks of at most `CHUNK_CHARS` characters, at a whitespace where one is near
 *    the end (o200k pre-tokens start at a space, so such cuts change nothing), else anywhere but inside
 *    a surrogate pair. This makes the BPE linear (~2.5 µs a CJK character, ~0.2 µs an ASCII one).
 * 2. Chunks are counted exactly while the meter's `exactBudgetUnits` last (1 unit an ASCII character,
 *    `NON_ASCII_UNITS` any other: their measured relative cost; plus `CALL_UNITS` a call, so a request
 *    of thousands of tiny texts is bounded too). Small requests, the common case, end here with exact
 *    counts.
 * 3. The rest of a text beyond the budget is sampled: up to `SAMPLE_CHUNKS` chunks spread evenly over
 *    it are counted (from `sampleBudgetUnits`) and scaled by a cheap prior (ASCII chars / 4 + other
 *    chars) to the whole rest. Once both budgets are spent, the prior alone is used, calibrated by
 *    the ratio of exact tokens to prior seen so far in the request. The prior reads at most
 *    `PRIOR_SCAN_CHARS` characters of a text (strided), and a request's priors read
 *    `PRIOR_BUDGET_READS` in all, then `MIN_PRIOR_READS` a text; a text that could not be counted
 *    exactly is not looked up in the cache (a lookup hashes it). So past the budgets a text costs a
 *    few hundred reads whatever its length: a 32 MiB `count_tokens` body of thousands of long texts
 *    reads ~1.5 M characters, not 32 M (issue 39 item 6).
 *
 * Measured error (`node --import tsx bench/token-estimate.ts`, estimate vs exact o200k count, texts of
 * 200,000 characters whose exact count is far over the budget; the files of 2026-11-26): Chinese prose
 * (TypeScript's zh-cn messages) +3.3%, TypeScript code +2.3%, English Markdown +3.1%, JSON
 * (package-lock) -1.2%; a 20,000-character CJK run without punctuation +0.2%. (Before `CALL_UNITS`,
 * on the same files: +0.3%, +2.4%, +3.8%, +15.1%, +0.1%: which chunks get sampled moves the error of
 * a text whose kind drifts, as package-lock's does.) Stated bound: within 5% for text of one kind;
 * a text that changes kind abruptly past the budget can be off more (the samples are spread, not
 * exhaustive). Texts within the exact budget are off only by chunk cuts (+0.1% on 20,000 characters
 * of English). Work per request, measured: ~5-15 ms where the exact count took 0.1-1.2 s.
 */
import { ownString } from '../runtime/own-string.ts';

/** Characters per chunk given to the BPE: bounds its quadratic cost per pre-token. */
export const CHUNK_CHARS = 128;
/** Relative cost of a non-ASCII character (CJK ~2.5 µs vs ASCII ~0.2 µs a character, chunked). */
export const NON_ASCII_UNITS = 12;
/**
 * Units a call to the tokenizer costs whatever its text: ~1-2 µs (its set-up, the split regex's
 * iterator), ~10-16 ASCII characters' worth. Without it a message of 12,000 three-character text parts
 * was all "small" and held the event loop ~50 ms.
 */
export const CALL_UNITS = 16;
/** Exact counting per request: ~32,000 ASCII characters in 128-character chunks or ~2,700 CJK characters, a few ms. */
export const EXACT_BUDGET_UNITS = 36_000;
/** Sampling per request, once the exact budget is spent: half as much again. */
export const SAMPLE_BUDGET_UNITS = 18_000;
/** Chunks sampled from one text's rest. */
export const SAMPLE_CHUNKS = 12;
/** Characters the prior reads of one text at most (strided beyond). */
export const PRIOR_SCAN_CHARS = 65_536;
/** Characters the priors of one request read in all, before each text gets `MIN_PRIOR_READS` (~1 ms). */
export const PRIOR_BUDGET_READS = 4 * PRIOR_SCAN_CHARS;
/** Characters the prior reads of a text once the request's `PRIOR_BUDGET_READS` are spent: enough to tell its script. */
export const MIN_PRIOR_READS = 64;

type CountFn = (text: string) => number;

export interface TokenMeter {
  /** Tokens in `text`: exact within the meter's budget, estimated beyond it (see the file's TSDoc). */
  count(text: string): number;
  /** True once some text was estimated rather than counted. */
  readonly estimated: boolean;
}

export interface MeterBudget {
  exactBudgetUnits: number;
  sampleBudgetUnits: number;
}

const DEFAULT_BUDGET: MeterBudget = { exactBudgetUnits: EXACT_BUDGET_UNITS, sampleBudgetUnits: SAMPLE_BUDGET_UNITS };

/**
 * Exact counts of whole texts a meter counted before, with the work they took: prompts repeat (a
 * system prompt, the history a chat sends again each turn), and a hit costs a Map lookup instead of
 * ~0.2 µs a character of BPE. A hit still spends the units the text took, so the counts a meter
 * answers never depend on what is cached: the cache saves work, it never turns an estimate exact (the
 * prior it adds for calibration is the text's sum, equal to the chunks' up to float rounding).
 */
export class TextCountCache {
  private readonly counts = new Map<string, CountedText>();
  private chars = 0;

  /**
   * @param maxChars characters held at most (all texts together, each with `ENTRY_CHARS` more); past it the cache starts over,
   *   which costs nothing per request (an LRU's bookkeeping would cost more than most hits save).
   */
  constructor(private readonly maxChars: number) {}

  /**
   * What an entry costs against `maxChars`: its characters plus `ENTRY_CHARS` for the entry itself
   * (the Map slot, the count, the string's header: ~100 bytes). Counted by characters alone, 500,000
   * two-character texts fit the default 1,000,000 and held ~60 MB.
   */
  static readonly ENTRY_CHARS = 64;

  get(text: string): CountedText | undefined {
    return this.counts.get(text);
  }

  set(text: string, counted: CountedText): void {
    if (text.length > this.maxChars / 4) return;
    const cost = text.length + TextCountCache.ENTRY_CHARS;
    if (this.chars + cost > this.maxChars) {
      this.counts.clear();
      this.chars = 0;
    }
    // A copy as the key: a text cut from a larger string (a slice) would keep all of that string alive.
    this.counts.set(ownString(text), counted);
    this.chars += cost;
  }
}

/** A text counted exactly: its tokens, the budget units it took, and its prior (for calibration). */
export interface CountedText {
  readonly tokens: number;
  readonly units: number;
  readonly prior: number;
}

/**
 * Creates a meter for one request over the exact BPE counter `countExact`. With `cache`, texts
 * counted exactly are remembered there and found again (`TextCountCache`).
 */
export function createTokenMeter(countExact: CountFn, budget: MeterBudget = DEFAULT_BUDGET, cache?: TextCountCache): TokenMeter {
  return new BoundedMeter(countExact, budget, cache);
}

// A class rather than closures over an object literal with a getter: one meter is made per count,
// and that literal cost ~2.5 µs to build, more than counting a short message.
class BoundedMeter implements TokenMeter {
  private exactLeft: number;
  private sampleLeft: number;
  private priorReadsLeft = PRIOR_BUDGET_READS;
  estimated = false;
  // Calibration of the prior by what was counted exactly in this request.
  private countedTokens = 0;
  private countedPrior = 0;

  constructor(private readonly countExact: CountFn, budget: MeterBudget, private readonly cache: TextCountCache | undefined) {
    this.exactLeft = budget.exactBudgetUnits;
    this.sampleLeft = budget.sampleBudgetUnits;
  }

  count(text: string): number {
    if (!text) return 0;
    // A text takes at least its length plus a call in units: one that cannot fit is not looked up (hashed).
    const cached = text.length + CALL_UNITS <= this.exactLeft ? this.cache?.get(text) : undefined;
    if (cached && cached.units <= this.exactLeft) {
      this.exactLeft -= cached.units;
      this.countedTokens += cached.tokens;
      this.countedPrior += cached.prior;
      return cached.tokens;
    }
    let tokens = 0;
    let units = 0;
    let prior = 0;
    for (let start = 0; start < text.length;) {
      const end = chunkEnd(text, start);
      const chunkUnits = costUnits(text, start, end);
      if (chunkUnits > this.exactLeft) return tokens + this.sampleRest(text, start);
      this.exactLeft -= chunkUnits;
      const chunkTokens = this.countExact(text.slice(start, end));
      const chunkPrior = this.prior(text, start, end);
      tokens += chunkTokens;
      units += chunkUnits;
      prior += chunkPrior;
      this.countedTokens += chunkTokens;
      this.countedPrior += chunkPrior;
      start = end;
    }
    this.cache?.set(text, { tokens, units, prior });
    return tokens;
  }

  private calibrated(prior: number): number {
    return this.countedPrior > 0 ? prior * (this.countedTokens / this.countedPrior) : prior;
  }

  /** `priorTokens` of `text` from `start` to `end`, its reads taken from the request's prior budget. */
  private prior(text: string, start: number, end: number): number {
    const reads = Math.min(end - start, PRIOR_SCAN_CHARS, Math.max(MIN_PRIOR_READS, this.priorReadsLeft));
    this.priorReadsLeft -= reads;
    return priorTokens(text, start, end, reads);
  }

  private sampleRest(text: string, from: number): number {
    this.estimated = true;
    const restPrior = this.prior(text, from, text.length);
    const stepChars = Math.max(CHUNK_CHARS, Math.floor((text.length - from) / SAMPLE_CHUNKS));
    let sampledTokens = 0;
    let sampledPrior = 0;
    for (let start = from; start < text.length && this.sampleLeft > CALL_UNITS; start += stepChars) {
      const end = chunkEnd(text, start);
      const units = costUnits(text, start, end);
      if (units > this.sampleLeft) break;
      this.sampleLeft -= units;
      sampledTokens += this.countExact(text.slice(start, end));
      sampledPrior += this.prior(text, start, end);
    }
    if (sampledPrior === 0) return Math.ceil(this.calibrated(restPrior));
    this.countedTokens += sampledTokens;
    this.countedPrior += sampledPrior;
    return Math.ceil(restPrior * (sampledTokens / sampledPrior));
  }
}

/** Where the chunk starting at `start` ends: before a whitespace in its second half, else at the size (never mid surrogate pair). */
export function chunkEnd(text: string, start: number): number {
  const max = start + CHUNK_CHARS;
  if (max >= text.length) return text.length;
  for (let i = max; i > start + CHUNK_CHARS / 2; i--) {
    const code = text.charCodeAt(i);
    if (code === 32 || code === 10 || code === 9 || code === 13) return i;
  }
  const before = text.charCodeAt(max - 1);
  return before >= 0xd800 && before <= 0xdbff ? max - 1 : max;
}

/** Units of counting `text` from `start` to `end` in one call: its characters' plus `CALL_UNITS`. */
function costUnits(text: string, start: number, end: number): number {
  let units = CALL_UNITS;
  for (let i = start; i < end; i++) units += text.charCodeAt(i) < 128 ? 1 : NON_ASCII_UNITS;
  return units;
}

/** A cheap guess: ASCII characters / 4 + one token per other character, from about `reads` strided reads. */
function priorTokens(text: string, start: number, end: number, reads: number): number {
  const length = end - start;
  const step = Math.max(1, Math.ceil(length / Math.max(1, reads)));
  let ascii = 0;
  let other = 0;
  for (let i = start; i < end; i += step) {
    if (text.charCodeAt(i) < 128) ascii++;
    else other++;
  }
  const seen = ascii + other;
  return seen === 0 ? 0 : ((ascii / 4 + other) * length) / seen;
}
