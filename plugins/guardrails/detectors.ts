/**
 * The guardrails' detectors: what counts as an email, a phone number, a payment card, an IBAN or a
 * secret, and operators' own patterns. Pure functions over strings, importing nothing from core/, so
 * that the plugin can sit on the public SDK alone.
 *
 * Every built-in is one global regex scanned left to right, sometimes followed by a check (Luhn,
 * mod-97, digit count). The regexes have no nested quantifiers over overlapping classes and every
 * repetition is bounded, so each attempt reads a bounded span and a scan is linear in the input; a
 * left boundary (a lookbehind) keeps attempts from restarting inside a run of the same characters.
 */
import { ibanLength, ibanValid, knownCardPrefix, luhnValid } from './checksums.ts';

/** A span of text a detector matched: UTF-16 offsets, `end` exclusive. */
export interface Match {
  start: number;
  end: number;
  /** The detector's id. */
  detector: string;
}

/**
 * A detector. `find` behaves as one left-to-right scan, which the stream redactor relies on:
 * - matches come in order and do not overlap;
 * - `find(text, from)` returns exactly the matches of `find(text)` that start at or after `from`,
 *   for any `from` not strictly inside one of them (text before `from` is read as context only);
 * - an attempt at position `s` reads no text outside `[s - maxMatchChars, s + maxMatchChars)`, so a
 *   match is never longer than `maxMatchChars`.
 */
export interface Detector {
  readonly id: string;
  /** One line for operators: what it finds. */
  readonly description: string;
  /** The longest span, in UTF-16 units, one match attempt reads, the match itself included. */
  readonly maxMatchChars: number;
  find(text: string, from?: number): Match[];
  /**
   * Optional, for streams: the earliest index at or after `from` where a match could start once more
   * text is appended to `text` (`text.length` when none could). It may answer too early, never too
   * late. Without it a stream holds back `maxMatchChars`; with it, only what could still be a match.
   */
  pendingStart?(text: string, from: number): number;
}

/**
 * Checks a regex candidate `text[start, end)`: returns the end of the accepted match (at most `end`),
 * or -1 to reject it, in which case the scan resumes at `start + 1`.
 */
type Accept = (text: string, start: number, end: number) => number;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A detector over one global regex. Rejected and empty candidates move the scan on by one position
 * (a code point under the `u`/`v` flags) so that every position outside an accepted match is tried,
 * which is what makes `find(text, from)` agree with `find(text)`.
 */
function regexDetector(
  id: string, description: string, maxMatchChars: number, regex: RegExp, accept?: Accept,
  pendingStart?: (text: string, from: number) => number,
): Detector {
  const unicode = regex.unicode || regex.flags.includes('v');
  return {
    id,
    description,
    maxMatchChars,
    pendingStart,
    find(text: string, from = 0): Match[] {
      const matches: Match[] = [];
      regex.lastIndex = from;
      for (let found = regex.exec(text); found !== null; found = regex.exec(text)) {
        const start = found.index;
        const candidateEnd = start + found[0].length;
        const end = accept === undefined ? candidateEnd : accept(text, start, candidateEnd);
        if (end > start) {
          matches.push({ start, end, detector: id });
          regex.lastIndex = end;
        } else {
          regex.lastIndex = start + (unicode && isHighSurrogate(text.charCodeAt(start)) ? 2 : 1);
        }
      }
      return matches;
    },
  };
}

/** The most characters of an email's local part: its `@` is at most this far from its start. */
const EMAIL_LOCAL_CHARS = 64;

const EMAIL = /(?<![\w.%+@-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w-]|\.[A-Za-z0-9])/g;

/** An email needs an `@` within 64 characters of its start: text far enough before the next one is clear. */
function emailPendingStart(text: string, from: number): number {
  const at = text.indexOf('@', from);
  return Math.max(from, (at === -1 ? text.length : at) - EMAIL_LOCAL_CHARS);
}

/**
 * Phones: `+` and 9-15 digits with optional single separators (E.164 as people write it, parentheses
 * allowed), or national forms that have separators: an area code in parentheses or a first group of
 * 2-5 digits then groups of 2-4 (`020 7946 0958`, `(415) 555-2671`, `06 12 34 56 78`), or the NANP
 * `415.555.2671`. A run of plain digits (an id, a price) is never a phone; a date with a time after
 * it stops at the date; the left boundary keeps a later group of a longer number from starting one.
 */
const PHONE = /(?<![\w+.\-()]|\d[ .-])(?:\+[1-9](?:[ .-]?\(?\d\)?){8,14}|(?:1[ .-])?(?:\(\d{2,5}\)[ .-]?|\d{2,5}[ -])\d{2,4}(?:[ -]\d{2,4}){0,4}|\d{3}\.\d{3}\.\d{4})(?![\w+:]|[.-]\d)/g;

function acceptPhone(text: string, start: number, end: number): number {
  let digits = 0;
  for (let i = start; i < end; i++) if (isDigit(text.charCodeAt(i))) digits++;
  return digits >= 9 && digits <= 15 ? end : -1;
}

/** 13-19 digits, single spaces or dashes allowed between any two. */
const CARD = /(?<![\w.])\d(?:[ -]?\d){12,18}(?!\w)/g;

/** The first six digits of the number in `text[start, ...)`, separators skipped. */
function iin6(text: string, start: number): number {
  let value = 0;
  for (let i = start, taken = 0; taken < 6; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) continue;
    value = value * 10 + code - 48;
    taken++;
  }
  return value;
}

/**
 * The longest prefix of the candidate, ending where a digit group ends, that is a known network's
 * card and passes Luhn: a card followed by another group of digits is still found.
 */
function acceptCard(text: string, start: number, end: number): number {
  let digits = 0;
  for (let i = start; i < end; i++) if (isDigit(text.charCodeAt(i))) digits++;
  const prefix = iin6(text, start);
  let i = end;
  while (digits >= 13) {
    if (digits <= 19 && knownCardPrefix(prefix, digits) && luhnValid(text, start, i)) return i;
    while (i > start && isDigit(text.charCodeAt(i - 1))) {
      i--;
      digits--;
    }
    i--;
  }
  return -1;
}

/** Country, check digits, then the BBAN compact or in space-separated groups of four. */
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?|[A-Z0-9]{11,30})(?![A-Za-z0-9])/g;

/** Cuts the candidate to its country's length (a group boundary must fall there), then mod-97. */
function acceptIban(text: string, start: number, end: number): number {
  const expected = ibanLength(text.slice(start, start + 2));
  let chars = 0;
  let i = start;
  for (; i < end; i++) {
    if (text.charCodeAt(i) === 32) continue;
    chars++;
    if (chars === expected) {
      i++;
      break;
    }
  }
  if (expected === undefined ? chars < 15 || chars > 34 : chars !== expected) return -1;
  if (i < end && text.charCodeAt(i) !== 32) return -1;
  return ibanValid(text, start, i) ? i : -1;
}

/**
 * Secrets, each a documented format: OpenAI `sk-`/`sk-proj-` and Anthropic `sk-ant-` keys, Stripe live
 * secret and restricted keys, AWS access key ids, GitHub tokens (classic prefixes and fine-grained
 * `github_pat_`), Slack tokens, Google API keys, Tollgate keys (`tg_` + 43 base64url, from
 * core/accounts/api-keys.ts), JWTs; an AWS secret access key only after its label (alone it is any 40
 * base64 characters); PEM private-key blocks up to 4,500 characters between the lines (an RSA-4096 key
 * is ~3,300), whose body stops at the first `-----` so an unterminated BEGIN reads no further.
 */
const SECRET = new RegExp([
  '(?<![A-Za-z0-9_-])(?:',
  'sk-[A-Za-z0-9_-]{20,250}',
  '|[sr]k_live_[A-Za-z0-9]{20,250}',
  '|A[KS]IA[A-Z0-9]{16}',
  '|gh[oprsu]_[A-Za-z0-9]{36,251}',
  '|github_pat_[A-Za-z0-9_]{22,251}',
  '|xox[abprs]-[A-Za-z0-9-]{10,250}',
  '|AIza[A-Za-z0-9_-]{35}',
  '|tg_[A-Za-z0-9_-]{43}',
  '|eyJ[A-Za-z0-9_-]{5,1000}\\.eyJ[A-Za-z0-9_-]{5,2500}\\.[A-Za-z0-9_-]{0,1000}',
  ')(?![A-Za-z0-9_-])',
  '|(?<=(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|SecretAccessKey|secretAccessKey)["\']?\\s{0,4}[:=]\\s{0,4}["\']?)',
  '[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])',
  '|-----BEGIN (?:[A-Z0-9]{1,12} ){0,2}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\\s:,.]|-(?!----)){0,4500}',
  '-----END (?:[A-Z0-9]{1,12} ){0,2}PRIVATE KEY(?: BLOCK)?-----',
].join(''), 'g');

/**
 * What every secret starts with: a token's prefix (after a boundary, as in {@link SECRET}), a PEM
 * header, or an AWS label. The longest is 21 characters; an AWS secret starts at most 11 characters
 * (quote, spaces, `=`) after its label ends.
 */
const TOKEN_LEADS = [
  'sk-', 'sk_live_', 'rk_live_', 'AKIA', 'ASIA', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_',
  'xoxa-', 'xoxb-', 'xoxp-', 'xoxr-', 'xoxs-', 'AIza', 'tg_', 'eyJ',
];
const OTHER_LEADS = ['-----BEGIN ', 'aws_secret_access_key', 'AWS_SECRET_ACCESS_KEY', 'SecretAccessKey', 'secretAccessKey'];
const SECRET_LEAD = new RegExp(`(?<![A-Za-z0-9_-])(?:${TOKEN_LEADS.join('|')})|${OTHER_LEADS.join('|')}`, 'g');
const SECRET_LEAD_REACH = 21 + 11;
const TOKEN_BOUNDARY = /[A-Za-z0-9_-]/;

interface LeadPrefix {
  text: string;
  /** Whether only token leads start so, which need a boundary before them. */
  bounded: boolean;
}

/** Every proper prefix of a lead, longest first: a text ending in one may be starting a secret. */
const SECRET_LEAD_PREFIXES: readonly LeadPrefix[] = (() => {
  const bounded = new Map<string, boolean>();
  const add = (lead: string, isToken: boolean): void => {
    for (let k = 1; k < lead.length; k++) {
      const prefix = lead.slice(0, k);
      bounded.set(prefix, isToken && bounded.get(prefix) !== false);
    }
  };
  for (const lead of TOKEN_LEADS) add(lead, true);
  for (const lead of OTHER_LEADS) add(lead, false);
  return [...bounded].map(([text, isBounded]) => ({ text, bounded: isBounded })).sort((a, b) => b.text.length - a.text.length);
})();

/**
 * A secret starts at a lead, or just after an AWS label (hence the search starting a label's reach
 * before `from`); text ending in the beginning of a lead is held from there.
 */
function secretPendingStart(text: string, from: number): number {
  SECRET_LEAD.lastIndex = Math.max(0, from - SECRET_LEAD_REACH);
  const lead = SECRET_LEAD.exec(text);
  if (lead !== null) return Math.max(from, lead.index);
  for (const prefix of SECRET_LEAD_PREFIXES) {
    const at = text.length - prefix.text.length;
    if (at < from || !text.startsWith(prefix.text, at)) continue;
    if (prefix.bounded && at > 0 && TOKEN_BOUNDARY.test(text[at - 1]!)) continue;
    return at;
  }
  return text.length;
}

// maxMatchChars below: the longest attempt each regex can read, lookarounds included, rounded up.
/** `email`: addresses with a dotted domain and a letters-only TLD (longest attempt ~605). */
export const email: Detector = regexDetector('email', 'email addresses', 640, EMAIL, undefined, emailPendingStart);
/** `phone`: see {@link PHONE}; 9-15 digits (longest attempt ~62). */
export const phone: Detector = regexDetector('phone', 'phone numbers: + international, or national with separators', 64, PHONE, acceptPhone);
/** `payment-card`: 13-19 digits, Luhn-checked, of a known network (longest attempt 38). */
export const paymentCard: Detector = regexDetector('payment-card', 'payment card numbers of known networks, Luhn-checked', 40, CARD, acceptCard);
/** `iban`: mod-97-checked, with its country's length when known (longest attempt 44). */
export const iban: Detector = regexDetector('iban', 'IBANs, mod-97-checked, with their country length', 48, IBAN, acceptIban);
/**
 * `secret`: see {@link SECRET}. The longest attempt is a PEM block (~4,620) or a JWT (3 + 1,000 + 4 +
 * 2,500 + 1 + 1,000 + 1); streams hold that much back only once a secret's lead has been seen.
 */
export const secret: Detector = regexDetector('secret', 'API keys, tokens, JWTs and PEM private keys', 4700, SECRET, undefined, secretPendingStart);

/** Every built-in detector, in a fixed order: email, phone, payment-card, iban, secret. */
export const BUILT_IN_DETECTORS: readonly Detector[] = [email, phone, paymentCard, iban, secret];

/** How an operator's pattern becomes a detector; see {@link compilePattern}. */
export interface PatternOptions {
  /** The id its matches carry (`[REDACTED:<id>]`); default `custom`. */
  id?: string;
  description?: string;
  /**
   * The longest match, in UTF-16 units, the pattern can produce, lookarounds included; default 256.
   * The stream redactor holds back this much text. A longer match is refused and the scan tries again
   * one character later; a pattern that can read further than this (`a+`) may redact a stream
   * differently from the same text whole, so operators should bound their repetitions (`a{1,40}`).
   */
  maxMatchChars?: number;
}

const PATTERN_FLAGS = /^[imsuv]*$/;
const MAX_PATTERN_MATCH_CHARS = 65_536;

/**
 * An operator's regex as a detector. The regex is compiled once, here, always global.
 *
 * @param source the regex source, without slashes.
 * @param flags any of `i`, `m`, `s`, `u`, `v` (`g` is implied; `y` and `d` are refused).
 * @throws Error naming the problem: an unknown or refused flag, a syntax error (the engine's own
 *   message), a pattern that matches the empty string, or a `maxMatchChars` that is not an integer
 *   from 1 to 65,536.
 *
 * JavaScript regexes backtrack: a pattern with nested quantifiers can take exponential time on some
 * inputs. Patterns come from the operator's config, not from requests, so this is the operator's
 * to avoid.
 */
export function compilePattern(source: string, flags = '', options: PatternOptions = {}): Detector {
  const plainFlags = flags.replace('g', '');
  if (!PATTERN_FLAGS.test(plainFlags)) {
    throw new Error(`pattern /${source}/: flags "${flags}" are not allowed (use any of i, m, s, u, v)`);
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, `${plainFlags}g`);
  } catch (err) {
    throw new Error(`pattern /${source}/ is not a valid regular expression: ${(err as Error).message}`, { cause: err });
  }
  if (regex.test('')) throw new Error(`pattern /${source}/ matches the empty string`);
  const maxMatchChars = options.maxMatchChars ?? 256;
  if (!Number.isInteger(maxMatchChars) || maxMatchChars < 1 || maxMatchChars > MAX_PATTERN_MATCH_CHARS) {
    throw new Error(`pattern /${source}/: maxMatchChars must be an integer from 1 to ${MAX_PATTERN_MATCH_CHARS}, got ${maxMatchChars}`);
  }
  const id = options.id ?? 'custom';
  return regexDetector(id, options.description ?? `pattern /${source}/`, maxMatchChars, regex, (_text, start, end) => (end - start <= maxMatchChars ? end : -1));
}
