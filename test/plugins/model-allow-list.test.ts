/**
 * Per-key model allow-lists: glob patterns compiled to a matcher without backtracking (issue 39, item
 * 8: `*-*-*-*-mini` against a 256-character model name took 2 s as a regular expression). The cases
 * are a table of names accepted and refused; the adversarial ones also hold the matcher to its bound
 * of character comparisons (name length × pattern length), counted, never timed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGlob, modelAllowed, type GlobStats } from '../../plugins/provider-router/routing/model-allow-list.ts';
import { MAX_MODEL_CHARS } from '../../core/dialects/model-field.ts';

describe('glob patterns', () => {
  const cases: Array<[pattern: string, name: string, matches: boolean]> = [
    ['openai/*', 'openai/gpt-4o-mini', true],
    ['openai/*', 'openai/', true],
    ['openai/*', 'anthropic/claude', false],
    ['*', '', true],
    ['*', 'any/thing at all', true],
    ['claude-*', 'claude-3-5-haiku', true],
    ['claude-*', 'xclaude-3', false],
    ['*-mini', 'gpt-4o-mini', true],
    ['*-mini', 'gpt-4o-mini-2024', false],
    ['gpt-4?', 'gpt-4o', true],
    ['gpt-4?', 'gpt-4', false],
    ['gpt-4?', 'gpt-4oo', false],
    ['gpt-4.1', 'gpt-4.1', true],
    ['gpt-4.1', 'gpt-4x1', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['a*b*c', 'abcbc', true],
    ['*a*a*', 'a', false],
    ['*a*a*', 'aa', true],
    ['**', 'x', true],
    ['a**b', 'ab', true],
    ['?*?', 'a', false],
    ['?*?', 'ab', true],
    ['(x)+[y]', '(x)+[y]', true],
    ['(x)+[y]', 'xxy', false],
    ['smart', 'smart', true],
    ['smart', 'smarter', false],
    ['*-*-*-*-mini', 'openai/gpt-4o-mini-tts-mini', true],
    ['*-*-*-*-mini', 'openai/gpt-4o-mini', false],
  ];
  for (const [pattern, name, expected] of cases) {
    test(`"${pattern}" ${expected ? 'matches' : 'does not match'} "${name}"`, () => {
      assert.equal(compileGlob(pattern).matches(name), expected);
    });
  }
});

describe('adversarial names', () => {
  const pattern = '*-*-*-*-mini';
  const bound = (name: string, p: string) => name.length * p.length;

  test(`"${pattern}" against ${MAX_MODEL_CHARS} dashes: no match, within name length × pattern length comparisons`, () => {
    const name = '-'.repeat(MAX_MODEL_CHARS);
    const stats: GlobStats = { comparisons: 0 };
    assert.equal(compileGlob(pattern).matches(name, stats), false);
    assert.ok(stats.comparisons > 0 && stats.comparisons <= bound(name, pattern), `${stats.comparisons} comparisons`);
  });

  test('a long name that does match, and one that misses by its last character', () => {
    const matching = `${'-'.repeat(MAX_MODEL_CHARS - 5)}-mini`;
    const missing = `${'-'.repeat(MAX_MODEL_CHARS - 5)}-minx`;
    for (const [name, expected] of [[matching, true], [missing, false]] as const) {
      const stats: GlobStats = { comparisons: 0 };
      assert.equal(compileGlob(pattern).matches(name, stats), expected);
      assert.ok(stats.comparisons <= bound(name, pattern), `${stats.comparisons} comparisons`);
    }
  });

  test('many stars and question marks against a name of repeated near-misses stay within the bound', () => {
    const p = '*a?*a?*a?*a?*a?*a?*b';
    const name = 'a'.repeat(MAX_MODEL_CHARS);
    const stats: GlobStats = { comparisons: 0 };
    assert.equal(compileGlob(p).matches(name, stats), false);
    assert.ok(stats.comparisons <= bound(name, p), `${stats.comparisons} comparisons`);
  });

  test('modelAllowed, which the router calls for a key with patterns, computes with the compiled matcher', () => {
    const name = '-'.repeat(MAX_MODEL_CHARS);
    const stats: GlobStats = { comparisons: 0 };
    assert.equal(modelAllowed([pattern, 'openai/*'], [name, `openai-compatible/${name}`], stats), false);
    assert.ok(stats.comparisons > 0, 'the comparisons were counted by the compiled matcher');
    assert.equal(modelAllowed([pattern, 'openai/*'], ['gpt-4o-mini', `openai/gpt-4o-mini`]), true);
    assert.equal(modelAllowed(null, [name]), true);
  });
});
