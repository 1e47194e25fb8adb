/**
 * The docs' promises about what survives what are each proved by a test (issue 39, "Done when"):
 * in the sections named in `CHECKED_SECTIONS`, every sentence is followed by an HTML comment
 * `<!-- test: test/path/file.test.ts "exact test name" -->`, and that file holds a `test(` or
 * `describe(` with exactly that name. A sentence without one fails here: prove it, or say only
 * what is proved.
 *
 * `PENDING_FILES` may be referenced before they exist (tests being written on another branch);
 * once such a file exists its names are checked like any other.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/runnable-blocks.ts';

/** Per doc, the headings (exact text, without the `#`s) of the sections whose every sentence must name its test. */
const CHECKED_SECTIONS: Record<string, readonly string[]> = {
  'docs/operating-safely.md': ['What survives what'],
  'docs/replicas.md': ['What survives what'],
};

/** Test files referenced before they exist: accepted as pending only while absent. */
const PENDING_FILES = new Set(['test/e2e/chaos-replicas.test.ts']);

const CLAIM = /<!--\s*test:\s*(\S+)\s+"([^"]+)"\s*-->/g;

/** The body of the section under `heading` (to the next heading of the same or a higher level), or null. */
function sectionOf(markdown: string, heading: string): string | null {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '').trim() === heading);
  if (start < 0) return null;
  const level = /^#+/.exec(lines[start]!)![0].length;
  let end = start + 1;
  while (end < lines.length && !(/^#{1,6} /.test(lines[end]!) && /^#+/.exec(lines[end]!)![0].length <= level)) end++;
  return lines.slice(start + 1, end).join('\n');
}

/** `text` without fenced code blocks, with code spans and link targets blanked (their dots end no sentence). */
function prose(text: string): string {
  return text
    .replace(/^\s*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, 'CODE')
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/\b(e\.g|i\.e|etc|vs)\./g, '$1');
}

/** A sentence end inside a chunk: `.`, `!` or `?` (then closing marks) followed by a space and a new sentence. */
const SENTENCE_END = /(?<=[.!?][)*_"']*)\s+(?=[A-Z*(_"])/;

/**
 * The sentences of `section` that no `test:` comment follows: the text between two comments must be
 * one sentence (or none), and nothing but markup may follow the last comment.
 */
function unprovedSentences(section: string): string[] {
  const chunks = prose(section).split(CLAIM);
  const unproved: string[] = [];
  // split() with two groups gives [text, path, name, text, path, name, …, text].
  for (let i = 0; i < chunks.length; i += 3) {
    const text = chunks[i]!.replace(/^\s*[-*]\s+/gm, '').trim();
    const last = i === chunks.length - 1;
    const parts = text.split(SENTENCE_END).map((s) => s.trim()).filter((s) => /[A-Za-z]/.test(s));
    // The chunk before a comment: its last sentence is proved; every other one, and all of the last chunk, are not.
    unproved.push(...(last ? parts : parts.slice(0, -1)));
  }
  return unproved;
}

/** The (path, name) pairs the section's comments reference. */
function claimsOf(section: string): Array<{ path: string; name: string }> {
  return [...section.matchAll(CLAIM)].map((m) => ({ path: m[1]!, name: m[2]! }));
}

/** Every `test(…)`/`describe(…)`/`it(…)` title written as a string literal in `source`, unescaped. */
function testNames(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/\b(?:test|describe|it)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)) {
    names.add(m[2]!.replace(/\\(.)/g, '$1'));
  }
  return names;
}

describe('the sentence checker', () => {
  test('reports a sentence without a test comment and accepts one with it', () => {
    const ok = 'One claim. <!-- test: a.test.ts "x" --> Another (`a.b` e.g. this). <!-- test: b.test.ts "y" -->\n';
    assert.deepEqual(unprovedSentences(ok), []);
    assert.deepEqual(unprovedSentences('First claim. Second claim. <!-- test: a.test.ts "x" -->'), ['First claim.']);
    assert.deepEqual(unprovedSentences('A claim. <!-- test: a.test.ts "x" --> A dangling one.'), ['A dangling one.']);
    assert.deepEqual(claimsOf(ok), [{ path: 'a.test.ts', name: 'x' }, { path: 'b.test.ts', name: 'y' }]);
  });

  test('reads test names written with any quote and escapes', () => {
    assert.deepEqual([...testNames("test('a user\\'s row', () => {}); describe(\"b\", () => {}); test(`c`, async () => {})")], ["a user's row", 'b', 'c']);
  });
});

describe('what the docs say survives what', () => {
  for (const [doc, headings] of Object.entries(CHECKED_SECTIONS)) {
    const markdown = readFileSync(join(REPO_ROOT, doc), 'utf8');
    for (const heading of headings) {
      const section = sectionOf(markdown, heading);

      test(`${doc} "${heading}": every sentence names the test that proves it`, () => {
        assert.ok(section !== null, `${doc} has no heading "${heading}"`);
        assert.deepEqual(unprovedSentences(section), [], `sentences of ${doc} "${heading}" without a <!-- test: path "name" --> comment`);
      });

      test(`${doc} "${heading}": every referenced test exists with that exact name`, (t) => {
        assert.ok(section !== null, `${doc} has no heading "${heading}"`);
        const claims = claimsOf(section);
        assert.ok(claims.length > 0);
        const missing: string[] = [];
        for (const { path, name } of claims) {
          const file = join(REPO_ROOT, path);
          if (!existsSync(file)) {
            if (PENDING_FILES.has(path)) t.diagnostic(`pending until ${path} exists: "${name}"`);
            else missing.push(`${path}: no such file`);
            continue;
          }
          if (!testNames(readFileSync(file, 'utf8')).has(name)) missing.push(`${path}: no test named "${name}"`);
        }
        assert.deepEqual(missing, []);
      });
    }
  }
});
