/**
 * Per-key model allow-lists (`api_keys.models`, docs/contract.md "Errors": 403 `permission_denied`):
 * a key limited to glob patterns may call a model when a pattern matches the name it asked for (a
 * group name, `provider/model`, a bare id) or, for a name that is not a group, the `provider/model`
 * it resolved to (so `openai/*` also admits the bare `gpt-4o-mini` that OpenAI serves). `*` matches
 * any run of characters, `/` included; `?` one character (UTF-16 code unit); everything else is literal.
 *
 * Patterns are matched by `compileGlob`, not by a regular expression: `^.*-.*-.*-.*-mini$` backtracks
 * through every way of placing its stars, so a key holder's 256-character model name took 2 s
 * (issue 39, item 8). The compiled matcher never backtracks: the text before the first star must
 * start the name, the text after the last star end it, and each piece between is placed at its
 * leftmost fit after the previous one (leftmost leaves the most room for the rest, so no other
 * placement can succeed where it fails). At most name length × pattern length characters are compared.
 */
import { gatewayError } from '../../../core/errors.ts';

/** Counts a matcher's work, for tests that hold it to its bound. */
export interface GlobStats {
  /** Characters of the name compared with the pattern; added to on every `matches`. */
  comparisons: number;
}

/** A compiled glob pattern. */
export interface GlobMatcher {
  readonly pattern: string;
  /** True when the whole `name` matches. */
  matches(name: string, stats?: GlobStats): boolean;
}

const QUESTION_MARK = 0x3f;

/** `pattern` compiled: its literal pieces between stars (`?` kept as a one-character wildcard). */
export function compileGlob(pattern: string): GlobMatcher {
  const pieces = pattern.split('*');
  const head = pieces[0]!;
  // null: no star, the whole name is `head`.
  const tail = pieces.length > 1 ? pieces[pieces.length - 1]! : null;
  const middle = pieces.slice(1, -1).filter((piece) => piece !== '');
  return {
    pattern,
    matches(name, stats) {
      let comparisons = 0;
      /** True when `piece` fits `name` at `at` (the caller checked it ends inside the name). */
      const fitsAt = (piece: string, at: number): boolean => {
        for (let k = 0; k < piece.length; k++) {
          comparisons++;
          const c = piece.charCodeAt(k);
          if (c !== QUESTION_MARK && c !== name.charCodeAt(at + k)) return false;
        }
        return true;
      };
      let matched: boolean;
      if (tail === null) matched = name.length === head.length && fitsAt(head, 0);
      else if (name.length < head.length + tail.length) matched = false;
      else if (!fitsAt(head, 0) || !fitsAt(tail, name.length - tail.length)) matched = false;
      else {
        matched = true;
        let from = head.length;
        const end = name.length - tail.length;
        for (const piece of middle) {
          let at = from;
          while (at + piece.length <= end && !fitsAt(piece, at)) at++;
          if (at + piece.length > end) {
            matched = false;
            break;
          }
          from = at + piece.length;
        }
      }
      if (stats) stats.comparisons += comparisons;
      return matched;
    },
  };
}

/** True when one of `patterns` matches one of `names`; null patterns allow everything. */
export function modelAllowed(patterns: readonly string[] | null | undefined, names: readonly string[], stats?: GlobStats): boolean {
  if (!patterns) return true;
  return patterns.some((p) => {
    const matcher = compileGlob(p);
    return names.some((name) => matcher.matches(name, stats));
  });
}

/**
 * Throws 403 `permission_denied` naming the model and the key's patterns unless one matches; then the
 * same for the caller's team's allow-list (`team`, schema v23), which applies on top of the key's.
 */
export function checkModelAllowed(patterns: readonly string[] | null | undefined, requested: string, resolved: string | null = null, team: { name: string; models: readonly string[] | null } | null = null): void {
  const names = resolved && resolved !== requested ? [requested, resolved] : [requested];
  if (!modelAllowed(patterns, names)) {
    throw gatewayError('permission_denied', {
      message: `This API key may not use the model "${requested}". Models it may use: ${listed(patterns!)}. Ask an operator to change the key's models.`,
      param: 'model',
    });
  }
  if (team && !modelAllowed(team.models, names)) {
    throw gatewayError('permission_denied', {
      message: `Your team "${team.name}" may not use the model "${requested}". Models it may use: ${listed(team.models!)}. Ask an operator to change the team's models.`,
      param: 'model',
    });
  }
}

const listed = (patterns: readonly string[]) => (patterns.length > 0 ? patterns.map((p) => `"${p}"`).join(', ') : 'none');
