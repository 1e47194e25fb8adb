/**
 * Finding every detector's matches in a text, resolving where they overlap, and replacing them.
 */
import type { Detector, Match } from './detectors.ts';

/** What replaces a match: the text put in its place. */
export type Replacement = (match: Match) => string;

/** `[REDACTED:<detector>]`. */
export const defaultReplacement: Replacement = (match) => `[REDACTED:${match.detector}]`;

/**
 * Order of resolution: earliest start first, then the longest, then by detector id (so that the order
 * never depends on which detector was scanned first).
 */
export function compareMatches(a: Match, b: Match): number {
  return a.start - b.start || b.end - a.end || (a.detector < b.detector ? -1 : a.detector > b.detector ? 1 : 0);
}

/**
 * Resolves overlaps among `sorted` (in {@link compareMatches} order), appending the result to `out`:
 * the earliest match wins (at the same start the longest); a later match that overlaps it keeps only
 * its part past the winner's end, and one inside it is dropped. Dropping the overhanging part
 * instead would leave that much of a secret in clear. Every matched character stays covered.
 *
 * @param coveredEnd where the matches already resolved end (0 at the start of a text).
 * @returns the new covered end.
 */
export function resolveOverlaps(sorted: readonly Match[], coveredEnd: number, out: Match[]): number {
  let covered = coveredEnd;
  for (const match of sorted) {
    if (match.end <= covered) continue;
    out.push(match.start >= covered ? match : { start: covered, end: match.end, detector: match.detector });
    covered = match.end;
  }
  return covered;
}

/**
 * Every detector's matches in `text`, in order, without overlaps (see {@link resolveOverlaps}).
 * Offsets are UTF-16 units, `end` exclusive.
 */
export function findAll(text: string, detectors: readonly Detector[]): Match[] {
  let raw: Match[] = [];
  for (const detector of detectors) {
    const found = detector.find(text);
    raw = raw.length === 0 ? found : raw.concat(found);
  }
  if (raw.length === 0) return raw;
  raw.sort(compareMatches);
  const resolved: Match[] = [];
  resolveOverlaps(raw, 0, resolved);
  return resolved;
}

/**
 * `text` with each match replaced.
 *
 * @param matches in order and not overlapping, as {@link findAll} returns them.
 * @param replacement default {@link defaultReplacement}.
 */
export function redact(text: string, matches: readonly Match[], replacement: Replacement = defaultReplacement): string {
  if (matches.length === 0) return text;
  let out = '';
  let at = 0;
  for (const match of matches) {
    out += text.slice(at, match.start) + replacement(match);
    at = match.end;
  }
  return out + text.slice(at);
}
