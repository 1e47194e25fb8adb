/**
 * gpt-tokenizer's `o200k_base` encoding (GPT-4o, GPT-4.1, o-series), loaded for counting.
 *
 * The library publishes its rank table as a 2.4 MB ES module of one array literal. Compiling that
 * module leaves ~14 MB more resident than the table itself needs (parser and bytecode memory the
 * allocator keeps) and peaks ~11 MB higher while loading. The bundle therefore ships the same table as
 * JSON (`dist/o200k_base.json`, written by `bin/build.js` from the library's module) and hands it to
 * the library's own `GptEncoding.getEncodingApi`, which is what the library's `encoding/o200k_base`
 * entry does with the module: the tokenizer and its counts are the library's either way. Running from
 * the TypeScript sources (tests, a checkout without a build) imports the module as published.
 */
import { readFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A rank table as gpt-tokenizer takes it: index = rank; a string, or the bytes of a token that is not valid UTF-8. */
export type O200kRanks = readonly (string | readonly number[])[];

/** The JSON rank table beside the bundle (`bin/build.js`). */
export const O200K_JSON_URL = new URL('./o200k_base.json', import.meta.url);

/** Where the running code reads the table from: the JSON beside the bundle, none under tsx (a .ts module). */
const DEFAULT_JSON_URL = import.meta.url.endsWith('.ts') ? null : O200K_JSON_URL;

/** The library's rank table, as its module exports it. */
export async function libraryO200kRanks(): Promise<O200kRanks> {
  return (await import('gpt-tokenizer/bpeRanks/o200k_base')).default;
}

async function ranksFrom(jsonUrl: URL | null): Promise<O200kRanks> {
  if (jsonUrl) {
    try {
      // Read off the event loop (2 MB); the parse and the library's set-up still take ~100 ms on it, once.
      return JSON.parse(await readFile(jsonUrl, 'utf8')) as O200kRanks;
    } catch (err) {
      // A bundle built before the table was written beside it: the module still has it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return libraryO200kRanks();
}

/**
 * Special-token text (`<|endoftext|>`, `<|endofprompt|>`) counted as the ordinary text it is in a
 * prompt, as OpenAI counts message content. gpt-tokenizer's default refuses it: `countTokens` throws
 * "Disallowed special token found", which made any prompt quoting one a 500 for every user whose
 * budget or token limit needs a count. One object for every call.
 */
const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() };

/** The loaded counter. */
export interface O200kCounter {
  /** Tokens of `text` in o200k_base; special-token text counts as ordinary text. Never throws on a string. */
  count(this: void, text: string): number;
  /**
   * Drops what the tokenizer remembers of the texts counted so far. Call once a request's counting is
   * done. Why: gpt-tokenizer keeps a merge cache of up to 100,000 pre-tokens it had to merge, and a
   * pre-token of 13 characters or more (a CJK run, a hash, a long word) is a V8 slice of the text it
   * came from, so each cached one keeps that whole prompt alive: 1,000 distinct 100 KB prompts with one
   * such string each left +69 MB of heap, growing without a bound a gateway can live with. Cleared
   * per request, counting is also faster (npm packages' sources, 16 M characters in 128-character
   * chunks as the meter cuts them: ~80-90 ns a character against ~140 with the cache kept, ~110 with
   * no cache): repeats within one prompt still hit.
   */
  forget(this: void): void;
}

/**
 * Loads the encoding and returns its counter: gpt-tokenizer's `countTokens` (as
 * `gpt-tokenizer/encoding/o200k_base` exports it) with special-token text counted as ordinary text
 * (`ORDINARY_TEXT`). The table comes from `jsonUrl` when given and present, else from the library's
 * module. Rejects when the table cannot be read.
 */
export async function loadO200kCounter(jsonUrl: URL | null = DEFAULT_JSON_URL): Promise<O200kCounter> {
  const [{ GptEncoding }, ranks] = await Promise.all([import('gpt-tokenizer/GptEncoding'), ranksFrom(jsonUrl)]);
  // The table's parse (~45 ms), the library's set-up (~50 ms: a 200k-entry Map) and its first count
  // (~4 ms: the split regex compiles) each hold the event loop; a turn between them lets the requests
  // waiting meanwhile through, so the longest stall is one step's, not their sum.
  await nextTurn();
  const encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks);
  await nextTurn();
  encoding.countTokens('Warm up.');
  encoding.clearMergeCache();
  // Cleared only after counts: `Map#clear` allocates a new table, which the long-lived tokenizer then
  // holds, so every request that counted nothing new would promote one to the old generation.
  let counted = false;
  return {
    count(text) {
      counted = true;
      return encoding.countTokens(text, ORDINARY_TEXT);
    },
    forget() {
      if (!counted) return;
      counted = false;
      encoding.clearMergeCache();
    },
  };
}
