/**
 * The bounded token count: exact for small texts, bounded work and a stated error beyond the budget
 * (issue 14, item 2). The counter is the real o200k tokenizer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CALL_UNITS, CHUNK_CHARS, EXACT_BUDGET_UNITS, NON_ASCII_UNITS, PRIOR_BUDGET_READS, SAMPLE_BUDGET_UNITS, TextCountCache, chunkEnd, createTokenMeter,
} from '../../../core/tokens/bounded-token-count.ts';

const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
let seed = 11;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
/** A run of CJK characters without punctuation: one pre-token, the BPE's quadratic case. */
const cjkRun = (chars: number) => Array.from({ length: chars }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 3000))).join('');
const prose = 'The gateway counts tokens locally when the upstream reports no usage, and a budget reserves them before forwarding. ';

/** `countTokens` that also adds up the units of work it was given. */
function meteredCounter() {
  const spent = { units: 0, calls: 0 };
  const count = (text: string) => {
    spent.calls++;
    for (let i = 0; i < text.length; i++) spent.units += text.charCodeAt(i) < 128 ? 1 : NON_ASCII_UNITS;
    return countTokens(text);
  };
  return { count, spent };
}

test('counts a small text exactly', () => {
  const meter = createTokenMeter(countTokens);
  for (const text of ['hi', prose, prose.repeat(20), '你好，世界。今天天气很好。', JSON.stringify({ a: [1, 2, 3], b: 'x' })]) {
    assert.equal(meter.count(text), countTokens(text), text.slice(0, 30));
  }
  assert.equal(meter.estimated, false);
});

test('never hands the tokenizer more than its budgets, whatever the size of the request', () => {
  const { count, spent } = meteredCounter();
  const budget = { exactBudgetUnits: 20_000, sampleBudgetUnits: 10_000 };
  const meter = createTokenMeter(count, budget);
  for (let i = 0; i < 5; i++) meter.count(cjkRun(20_000));
  meter.count(prose.repeat(2_000));
  assert.ok(spent.units <= budget.exactBudgetUnits + budget.sampleBudgetUnits, `spent ${spent.units} units`);
  assert.equal(meter.estimated, true);
});

test('estimates a CJK run beyond the budget within 5% of the exact count', () => {
  const text = cjkRun(6_000);
  const exact = countTokens(text);
  const estimate = createTokenMeter(countTokens, { exactBudgetUnits: 12_000, sampleBudgetUnits: 12_000 }).count(text);
  assert.ok(Math.abs(estimate - exact) / exact < 0.05, `estimate ${estimate} vs exact ${exact}`);
});

test('estimates English beyond the budget within 5% of the exact count', () => {
  const words = prose.split(' ');
  const text = Array.from({ length: 20_000 }, () => words[Math.floor(random() * words.length)]).join(' ');
  const exact = countTokens(text);
  const estimate = createTokenMeter(countTokens, { exactBudgetUnits: 10_000, sampleBudgetUnits: 5_000 }).count(text);
  assert.ok(Math.abs(estimate - exact) / exact < 0.05, `estimate ${estimate} vs exact ${exact}`);
});

test('cuts chunks before a whitespace when one is near, and never inside a surrogate pair', () => {
  const words = 'word '.repeat(100);
  const end = chunkEnd(words, 0);
  assert.ok(end <= CHUNK_CHARS && end > CHUNK_CHARS / 2);
  assert.equal(words[end], ' ');
  const emoji = 'a' + '😀'.repeat(200);
  const cut = chunkEnd(emoji, 0);
  assert.ok(!(emoji.charCodeAt(cut - 1) >= 0xd800 && emoji.charCodeAt(cut - 1) <= 0xdbff), 'cut after a high surrogate');
});

test('tokenizes a text counted before once: later meters find its count in the cache', () => {
  const { count, spent } = meteredCounter();
  const cache = new TextCountCache(1_000_000);
  const text = prose.repeat(20);
  const first = createTokenMeter(count, undefined, cache).count(text);
  const calls = spent.calls;
  const second = createTokenMeter(count, undefined, cache).count(text);
  assert.equal(first, countTokens(text));
  assert.equal(second, first);
  assert.equal(spent.calls, calls, 'no tokenizer call for the cached text');
});

test('answers from the cache exactly what it answers without: a hit still spends the text\'s budget units', () => {
  const budget = { exactBudgetUnits: 3_000, sampleBudgetUnits: 2_000 };
  const texts = [prose.repeat(10), prose.repeat(10), cjkRun(300), prose.repeat(30)];
  const cache = new TextCountCache(1_000_000);
  const warm = createTokenMeter(countTokens, budget, cache);
  for (const text of texts) warm.count(text);
  const cached = createTokenMeter(countTokens, budget, cache);
  const plain = createTokenMeter(countTokens, budget);
  for (const text of texts) assert.equal(cached.count(text), plain.count(text));
  assert.equal(cached.estimated, plain.estimated);
  assert.equal(plain.estimated, true, 'the last text went past the budget');
});

test('holds at most its characters: past them it starts over', () => {
  const { count, spent } = meteredCounter();
  const cache = new TextCountCache(400);
  const meter = () => createTokenMeter(count, undefined, cache);
  meter().count('a'.repeat(90));
  for (let i = 0; i < 4; i++) meter().count(String(i).repeat(90));
  const calls = spent.calls;
  meter().count('a'.repeat(90));
  assert.equal(spent.calls, calls + 1, 'the first text was dropped');
});

/** `count` distinct three-character texts (letters and digits), the same ones on every call. */
const tinyTexts = (count: number) => Array.from({ length: count }, (_, i) => i.toString(36).padStart(3, '_'));

test('counts each entry with its overhead: tiny texts fill the cache by number, not only by characters', () => {
  const { count, spent } = meteredCounter();
  const cache = new TextCountCache(1_000_000);
  const texts = tinyTexts(20_000);
  // 20,000 × 3 characters is far under 1,000,000; with ENTRY_CHARS each costs 67, so the cache started over.
  for (const text of texts) createTokenMeter(count, undefined, cache).count(text);
  const calls = spent.calls;
  createTokenMeter(count, undefined, cache).count(texts[0]!);
  assert.equal(spent.calls, calls + 1, 'the first text was dropped');
  assert.ok(1_000_000 / (3 + TextCountCache.ENTRY_CHARS) < texts.length);
});

test('a request of thousands of tiny texts makes a bounded number of tokenizer calls (CALL_UNITS each)', () => {
  const { count, spent } = meteredCounter();
  const meter = createTokenMeter(count);
  let tokens = 0;
  for (const text of tinyTexts(12_000)) tokens += meter.count(text);
  const bound = Math.floor((EXACT_BUDGET_UNITS + SAMPLE_BUDGET_UNITS) / (3 + CALL_UNITS));
  assert.ok(spent.calls <= bound, `${spent.calls} calls, bound ${bound}`);
  assert.equal(meter.estimated, true, 'the rest was estimated');
  // Exactly, each text is 1-3 tokens: the estimate stays in that range.
  assert.ok(tokens >= 12_000 && tokens <= 36_000, `estimated ${tokens}`);
});

/**
 * A text that counts the characters the meter reads of it (`charCodeAt`): the work of a count that
 * no tokenizer call shows (scanning for chunk costs, the prior's guess), measured without a clock.
 */
class ReadCountingText extends String {
  static reads = 0;
  override charCodeAt(index: number): number {
    ReadCountingText.reads++;
    return super.charCodeAt(index);
  }
}

test('reads a bounded share of a huge request of many texts (a 32 MiB count_tokens body), and stays within 5%', () => {
  const words = prose.split(' ');
  const text = Array.from({ length: 3_000 }, () => words[Math.floor(random() * words.length)]).join(' ').slice(0, 16_000);
  const texts = 2_000;
  const meter = createTokenMeter(countTokens);
  ReadCountingText.reads = 0;
  let tokens = 0;
  for (let i = 0; i < texts; i++) tokens += meter.count(new ReadCountingText(text) as unknown as string);
  const chars = texts * text.length;
  // The budgets' own reads, the prior's per-request reads, and a few hundred per text: not its length.
  const bound = EXACT_BUDGET_UNITS + SAMPLE_BUDGET_UNITS + PRIOR_BUDGET_READS + texts * 600;
  assert.ok(ReadCountingText.reads <= bound, `read ${ReadCountingText.reads} of ${chars} characters, bound ${bound}`);
  const exact = texts * countTokens(text);
  assert.ok(Math.abs(tokens - exact) / exact < 0.05, `estimate ${tokens} vs exact ${exact}`);
});
