/**
 * Redacting streamed text with a sliding window: text is released only once no match can still
 * cover it, already redacted. Whatever the chunking, the concatenated output equals
 * `redact(whole, findAll(whole, detectors))`.
 *
 * How: the redactor replays, piece by piece, the scan {@link findAll} makes over the whole text. For
 * each detector, a match attempt at a position `s` reads only `[s - maxMatchChars, s + maxMatchChars)`
 * (the {@link Detector} contract), so once the text received reaches `s + maxMatchChars` that attempt
 * ends as it would on the whole text: the match is final. Each detector's scan resumes where it stood
 * (after its last final match, or at its horizon), which `find(text, from)` allows; a detector's
 * `pendingStart` moves it further, past positions where no match can start whatever comes next.
 * Overlaps are resolved in order only below the lowest of those points, where every detector's matches
 * are known; text is released up to there, or to the end of a redaction that crosses it. So the text
 * held back is at most the widest detector's `maxMatchChars`, and in plain prose far less.
 */
import type { Detector, Match } from './detectors.ts';
import { compareMatches, defaultReplacement, resolveOverlaps, type Replacement } from './redact.ts';

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export interface StreamRedactorOptions {
  /** Default `[REDACTED:<detector>]`. */
  replacement?: Replacement;
}

export interface StreamRedactor {
  /**
   * Takes the next chunk; returns the text that no match can still cover, redacted (often `''`).
   * @throws Error after {@link flush}.
   */
  push(text: string): string;
  /** Ends the stream: returns the rest, redacted. */
  flush(): string;
  /**
   * UTF-16 units received and not yet returned. After each `push` at most the window (the largest
   * `maxMatchChars` of the detectors), plus one when the window's edge falls inside a surrogate pair;
   * a caller bounds memory by its chunk size plus this. (The redactor also keeps up to a window of
   * returned text before it, which lookbehinds may read.)
   */
  readonly pendingChars: number;
  /** The largest `maxMatchChars` among the detectors: the most text held back between chunks. */
  readonly windowChars: number;
}

/**
 * A redactor for one stream.
 *
 * Offsets kept here are absolute (from the start of the stream); `buffer` holds the text from
 * `bufferStart`: what is not yet released, plus a window of released text before it that lookbehinds
 * may read.
 */
export function createStreamRedactor(detectors: readonly Detector[], options: StreamRedactorOptions = {}): StreamRedactor {
  const replacement = options.replacement ?? defaultReplacement;
  const windowChars = detectors.reduce((max, d) => Math.max(max, d.maxMatchChars), 0);
  const resumeAt = detectors.map(() => 0);
  let buffer = '';
  let bufferStart = 0;
  let released = 0;
  let covered = 0;
  let ended = false;
  /** Final matches not yet resolved against the others (they start at or past the global horizon). */
  let unresolved: Match[] = [];
  /** Resolved matches not yet released, in order. */
  let redactions: Match[] = [];

  /**
   * Moves each detector's scan up to its horizon (`Infinity` at the end of the stream): past every
   * attempt that has read all it can, and past those its `pendingStart` rules out. Returns the global
   * horizon: below it, every detector's matches are known.
   */
  function scan(atEnd: boolean): number {
    const received = bufferStart + buffer.length;
    let known = Infinity;
    for (let k = 0; k < detectors.length; k++) {
      const detector = detectors[k]!;
      const horizon = atEnd ? Infinity : received - detector.maxMatchChars;
      let resume = resumeAt[k]!;
      if (resume < horizon) {
        for (const match of detector.find(buffer, resume - bufferStart)) {
          const start = match.start + bufferStart;
          if (start >= horizon) break;
          unresolved.push({ start, end: match.end + bufferStart, detector: match.detector });
          resume = match.end + bufferStart;
        }
      }
      resume = Math.max(resume, horizon);
      if (resume < received && detector.pendingStart !== undefined) {
        resume = Math.max(resume, bufferStart + detector.pendingStart(buffer, resume - bufferStart));
      }
      resumeAt[k] = resume;
      known = Math.min(known, resume);
    }
    return Math.min(known, received);
  }

  /** Resolves the final matches that start below `horizon`, where no detector can add one. */
  function resolve(horizon: number): void {
    if (unresolved.length === 0) return;
    unresolved.sort(compareMatches);
    let count = 0;
    while (count < unresolved.length && unresolved[count]!.start < horizon) count++;
    if (count === 0) return;
    covered = resolveOverlaps(count === unresolved.length ? unresolved : unresolved.slice(0, count), covered, redactions);
    unresolved = count === unresolved.length ? [] : unresolved.slice(count);
  }

  /** Returns the text from `released` to `until` (never inside a redaction), redacted. */
  function release(until: number): string {
    let out = '';
    let at = released;
    let done = 0;
    for (; done < redactions.length && redactions[done]!.start < until; done++) {
      const match = redactions[done]!;
      out += buffer.slice(at - bufferStart, match.start - bufferStart) + replacement(match);
      at = match.end;
    }
    if (done > 0) redactions = done === redactions.length ? [] : redactions.slice(done);
    out += buffer.slice(at - bufferStart, until - bufferStart);
    released = until;
    return out;
  }

  /** Drops text no scan can read again: before the earliest resume point or release, less a window. */
  function trim(): void {
    let keepFrom = released;
    for (const at of resumeAt) keepFrom = Math.min(keepFrom, at);
    const cut = keepFrom - windowChars - bufferStart;
    if (cut > 0) {
      buffer = buffer.slice(cut);
      bufferStart += cut;
    }
  }

  return {
    push(text: string): string {
      if (ended) throw new Error('stream redactor: push after flush');
      if (text.length === 0) return '';
      buffer += text;
      const horizon = scan(false);
      resolve(horizon);
      let until = Math.max(released, horizon);
      // Never end a release between the halves of a surrogate pair: each output is encoded on its own.
      if (until > released && isHighSurrogate(buffer.charCodeAt(until - 1 - bufferStart))) until--;
      for (const match of redactions) {
        if (match.start >= until) break;
        if (match.end > until) until = match.end;
      }
      if (until <= released) return '';
      const out = release(until);
      trim();
      return out;
    },
    flush(): string {
      if (ended) return '';
      ended = true;
      scan(true);
      resolve(Infinity);
      const out = release(bufferStart + buffer.length);
      buffer = '';
      bufferStart = released;
      return out;
    },
    get pendingChars(): number {
      return bufferStart + buffer.length - released;
    },
    windowChars,
  };
}
