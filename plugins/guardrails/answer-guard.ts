/**
 * The output side of the guardrails: one choice's answer text, piece by piece, through one stream
 * redactor per output rule (block rules first). Each redactor releases text only once no match can
 * still cover it, so a match is decided before any of its characters leaves: a redact rule replaces
 * it, a block rule stops the answer (its replacement throws), whatever the stream's chunking.
 */
import type { Match } from './detectors.ts';
import type { Rule } from './rules.ts';
import { createStreamRedactor, type StreamRedactor } from './stream-redactor.ts';

/** Called at each match a rule decides on: returns the replacement text, or throws to stop the answer. */
export type OnMatch = (rule: Rule, match: Match) => string;

export interface AnswerGuard {
  /** The text to send in place of `text` (`''` while held back); `end` flushes what is held. Throws what `onMatch` throws. */
  push(text: string, end: boolean): string;
}

/** A guard for one choice of one answer, running `rules` in order. */
export function createAnswerGuard(rules: readonly Rule[], onMatch: OnMatch): AnswerGuard {
  const stages: StreamRedactor[] = rules.map((rule) => createStreamRedactor(rule.detectors, { replacement: (match) => onMatch(rule, match) }));
  /** Set once a rule stopped the answer: a redactor that threw mid-release is not used again. */
  let stopped: Error | null = null;
  return {
    push(text, end) {
      if (stopped !== null) throw stopped;
      try {
        let out = text;
        for (const stage of stages) out = end ? stage.push(out) + stage.flush() : stage.push(out);
        return out;
      } catch (err) {
        stopped = err instanceof Error ? err : new Error(String(err));
        throw stopped;
      }
    },
  };
}
