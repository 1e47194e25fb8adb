/**
 * Secrets never reach the audit log: every field whose name says it holds one (a key, secret,
 * password, token, ciphertext, or a hash or nonce of one) is replaced by `"[redacted]"`, at any depth.
 * Names that only point at a secret stay (`key_prefix`, `key_id`, `api_key_id`, `key_count`): the
 * admin UI shows them, and they identify the object changed.
 */

export const REDACTED = '[redacted]';

/** Words that, ending a field name (or being all of it), mark the field as secret. */
const SECRET_LAST_WORDS = new Set(['key', 'apikey', 'secret', 'password', 'passwd', 'token', 'ciphertext', 'hash', 'nonce', 'tag', 'cookie', 'authorization', 'credential']);
/** Words that mark the field as secret wherever they stand in its name. */
const SECRET_ANY_WORDS = new Set(['secret', 'password', 'token', 'ciphertext']);

/** The lower-case words of a field name: `apiKey`, `api_key` and `api-key` all give `api`, `key`. */
function wordsOf(name: string): string[] {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

/** Whether a field of this name holds a secret (see the module's comment). */
export function isSecretField(name: string): boolean {
  const words = wordsOf(name);
  if (words.length === 0) return false;
  return SECRET_LAST_WORDS.has(words[words.length - 1]!) || words.some((w) => SECRET_ANY_WORDS.has(w));
}

/** A deep copy of `value` with every secret field's value replaced by `"[redacted]"`; other values unchanged. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = isSecretField(key) && v !== null && v !== undefined ? REDACTED : redactSecrets(v);
    return out;
  }
  return value;
}
