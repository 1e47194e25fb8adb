/**
 * The docs' own links hold: every relative link of README.md, docs/*.md and CONTRIBUTING.md names a
 * file of this repository, and every `#anchor` a heading of the page it points to (GitHub's anchors:
 * the heading lower-cased, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats). Links in
 * code blocks and code spans are not links.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { docFiles, REPO_ROOT } from '../helpers/runnable-blocks.ts';

/** Each line of the Markdown, '' inside fenced blocks (their fences included). */
function outsideFences(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return '';
    }
    return fence === null ? line : '';
  });
}

/** The anchors GitHub gives the page's headings. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

test('every relative link and anchor in the docs resolves', () => {
  const broken: string[] = [];
  for (const file of docFiles()) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    outsideFences(text).forEach((raw, index) => {
      const line = raw.replace(/`[^`]*`/g, '``');
      for (const match of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const resolved = path ? normalize(join(dirname(file), path)) : file;
        const where = `${file}:${index + 1}: ${target}`;
        if (resolved.startsWith('..') || !existsSync(join(REPO_ROOT, resolved))) {
          broken.push(`${where} (no file ${relative('.', resolved)})`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !headingAnchors(readFileSync(join(REPO_ROOT, resolved), 'utf8')).has(anchor)) {
          broken.push(`${where} (no heading #${anchor} in ${resolved})`);
        }
      }
    });
  }
  assert.deepEqual(broken, []);
});

test('anchors follow GitHub: lower case, punctuation dropped, spaces as hyphens, repeats numbered', () => {
  const anchors = headingAnchors('# Walkthrough: your first streamed completion\n```sh\n# not a heading\n```\n## Budgets, rate limits and pricing\n## Notes\n## Notes\n');
  assert.deepEqual([...anchors], ['walkthrough-your-first-streamed-completion', 'budgets-rate-limits-and-pricing', 'notes', 'notes-1']);
});
