/**
 * The o200k_base counter: the JSON rank table the build writes is the library's own, counts from it
 * equal the library's entry point, and a missing table falls back to the library's module.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { countTokens as libraryCount } from 'gpt-tokenizer/encoding/o200k_base';
import { libraryO200kRanks, loadO200kCounter, O200K_JSON_URL } from '../../../core/tokens/o200k-tokenizer.ts';
import { tempDir } from '../../helpers/tmp.ts';

const TEXTS = [
  '',
  'Say hello',
  'The quick brown fox jumps over the lazy dog. '.repeat(40),
  'Grüße aus Köln — naïve café, ½ × 3 ≤ 2',
  '東京は日本の首都です。人口は約1400万人です。',
  '🙂👍🏽 family: 👨‍👩‍👧‍👦 and flags 🇩🇪🇯🇵',
  'function f(x) {\n\treturn x ** 2; // squares\n}\n',
  'Привет, как дела? مرحبا كيف حالك؟ नमस्ते',
  '\u0000\u0001 control \uFFFD replacement',
];

// The bundle's table sits beside dist/tollgate.js; this test reads it from there.
const BUNDLE_JSON_URL = new URL('../../../dist/o200k_base.json', import.meta.url);

test('the build writes the library\'s rank table as JSON, and counts from it equal the library\'s', async () => {
  // `npm test` builds first; build here when this file runs alone.
  if (!existsSync(BUNDLE_JSON_URL)) execFileSync(process.execPath, [new URL('../../../bin/build.js', import.meta.url).pathname]);
  assert.deepEqual(JSON.parse(readFileSync(BUNDLE_JSON_URL, 'utf8')), await libraryO200kRanks());
  const fromJson = (await loadO200kCounter(BUNDLE_JSON_URL)).count;
  const fromModule = (await loadO200kCounter(null)).count;
  for (const text of TEXTS) {
    const expected = libraryCount(text);
    assert.equal(fromJson(text), expected, `JSON table: ${JSON.stringify(text.slice(0, 30))}`);
    assert.equal(fromModule(text), expected, `module: ${JSON.stringify(text.slice(0, 30))}`);
  }
  assert.ok(fromJson(TEXTS[2]!) > 300, 'a long text has many tokens');
});

test('special-token text in a prompt is counted as ordinary text, not refused', async () => {
  const { count } = await loadO200kCounter(null);
  // The library's default throws on these; OpenAI counts message content as ordinary text: the same
  // count as the library's with no special token disallowed.
  assert.throws(() => libraryCount('Say <|endoftext|>'), /Disallowed special token/);
  for (const text of ['<|endoftext|>', 'Say <|endoftext|> then <|endofprompt|> twice <|endoftext|>', '<|fim_prefix|> <|im_start|>']) {
    const expected = libraryCount(text, { disallowedSpecial: new Set() });
    assert.equal(count(text), expected, JSON.stringify(text));
    assert.ok(expected > 3, 'counted as the characters it is made of, not as one special token');
  }
});

test('without the JSON table the counter reads the library module', async () => {
  const missing = pathToFileURL(join(tempDir('o200k-'), 'o200k_base.json'));
  assert.equal((await loadO200kCounter(missing)).count('Say hello'), libraryCount('Say hello'));
  // Under tsx (these tests) the default is the module; the bundle's default is its own JSON.
  assert.equal(O200K_JSON_URL.pathname.endsWith('/core/tokens/o200k_base.json'), true);
  assert.equal((await loadO200kCounter()).count('Say hello'), libraryCount('Say hello'));
});
