/**
 * `text` as a string of its own. V8 keeps a substring of 13 characters or more as a slice of the
 * string it was cut from, so a substring kept long (a cache key, a field of a log row) keeps the whole
 * parent alive: a prompt, an upstream's answer. Prepending a character makes V8 build a new flat
 * string; the slice of it that is returned holds only that copy.
 */
export function ownString(text: string): string {
  return (' ' + text).slice(1);
}
