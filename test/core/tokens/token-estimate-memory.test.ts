/**
 * Counting a request's texts does not keep them alive afterwards (`O200kCounter.forget`,
 * core/tokens/o200k-tokenizer.ts): gpt-tokenizer's merge cache (up to 100,000 entries) is keyed by pre-tokens,
 * and one of 13 characters or more is a V8 slice of the text it came from, so without the per-request
 * clear every prompt holding one such string (a hash, a CJK run, a long word) stayed in the heap.
 * Through the estimator's three counting paths: `count`, `promptTokens` and `completionTokens`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../../core/exchange.ts';
import { loadTokenEstimator } from '../../../core/tokens/token-estimate.ts';
import { exposedGc } from '../../../core/runtime/start-up-memory.ts';

let seed = 7;
const letter = () => String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 26));

/** ~100 KB of ordinary words with one 40-letter string (one slice-keyed merge-cache entry); distinct per call. */
function prompt(): string {
  const words: string[] = [];
  for (let i = 0; i < 2_000; i++) words.push(['the', 'value', 'of', 'this', 'function', 'is', 'returned'][i % 7]!);
  words.push(Array.from({ length: 40 }, letter).join(''));
  for (let i = 0; i < 14_000; i++) words.push(['and', 'then', 'we', 'call', 'it', 'again'][i % 6]!);
  return words.join(' ');
}

test('200 distinct 100 KB prompts counted leave no more than a few MB of heap behind', async () => {
  const estimator = await loadTokenEstimator();
  const gc = exposedGc();
  const counts: number[] = [];
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let i = 0; i < 200; i++) {
    const text = prompt();
    const ex = { request: { model: 'gpt-4o', messages: [{ role: 'user', content: text }] }, target: null, promptTokensEstimate: null, generated: [text] };
    if (i % 3 === 0) counts.push(estimator.count(text));
    else if (i % 3 === 1) counts.push(estimator.promptTokens(ex as unknown as Exchange));
    else counts.push(estimator.completionTokens(ex as unknown as Exchange));
  }
  gc();
  const grownMb = (process.memoryUsage().heapUsed - heapBefore) / 1048576;
  // Kept, they were ~14 MB (most of the 200 ~100 KB texts); the prompt-count cache keeps ~1 MB of texts by design.
  assert.ok(grownMb < 5, `heap grew ${grownMb.toFixed(1)} MB`);
  assert.ok(counts.every((n) => n > 15_000), 'every text was counted');
});
