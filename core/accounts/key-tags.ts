/**
 * Free-form tags on API keys (`project=search`, `cost-center=42`): set when a key is created or later,
 * copied onto every request log row the key makes, and filterable in the logs and their CSV
 * (docs/admin-api.md "API keys", "Usage logs"). Stored as canonical JSON, keys sorted
 * (`{"cost-center":"42","project":"search"}`), in `api_keys.tags` and `llm_requests.tags`: the
 * request path copies the key's string as is (no per-request serialisation), and a filter is an exact,
 * case-sensitive substring test on both engines (`"project":"search"`). That test is exact because
 * names and values are restricted to characters JSON never escapes and that contain no `"`.
 */
import { invalidRequest, type GatewayError } from '../errors.ts';

/** A key's tags: name → value. */
export type KeyTags = Readonly<Record<string, string>>;

export const MAX_KEY_TAGS = 10;
const NAME = /^[a-z0-9][a-z0-9_.-]{0,39}$/;
const VALUE = /^[A-Za-z0-9_.:/@+-]{1,64}$/;

function badTags(message: string, param: string): GatewayError {
  return invalidRequest(message, param);
}

/**
 * Checks tags from an API body or the CLI; returns them with names in ascending order. Throws 400
 * `invalid_request` (param `param`) for a name not matching `[a-z0-9][a-z0-9_.-]{0,39}`, a value not
 * matching `[A-Za-z0-9_.:/@+-]{1,64}`, or more than `MAX_KEY_TAGS`.
 */
export function checkKeyTags(value: unknown, param = 'tags'): KeyTags {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badTags(`"${param}" must be an object of tag names to values, e.g. {"project":"search","cost-center":"42"}.`, param);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_KEY_TAGS) throw badTags(`A key has at most ${MAX_KEY_TAGS} tags.`, param);
  const out: Record<string, string> = {};
  for (const [name, tagValue] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!NAME.test(name)) throw badTags(`Tag name "${name.slice(0, 50)}" must be 1–40 lowercase letters, digits, "_", "." or "-", starting with a letter or digit.`, param);
    if (typeof tagValue !== 'string' || !VALUE.test(tagValue)) {
      throw badTags(`The value of tag "${name}" must be 1–64 letters, digits or "_.:/@+-".`, param);
    }
    out[name] = tagValue;
  }
  return out;
}

/** `name=value` arguments (the CLI's `--tag`, the logs' `tag` filter) as one tag; throws like `checkKeyTags`. */
export function parseTagArgument(argument: string, param = 'tag'): [name: string, value: string] {
  const eq = argument.indexOf('=');
  if (eq <= 0) throw badTags(`"${param}" must be name=value, e.g. project=search.`, param);
  const [[name, value]] = Object.entries(checkKeyTags({ [argument.slice(0, eq)]: argument.slice(eq + 1) }, param)) as [[string, string]];
  return [name, value];
}

/** The stored column for `tags`: canonical JSON, or null when there are none. */
export function keyTagsColumn(tags: KeyTags | null | undefined): string | null {
  if (!tags) return null;
  const names = Object.keys(tags).sort();
  if (names.length === 0) return null;
  return JSON.stringify(Object.fromEntries(names.map((n) => [n, tags[n]])));
}

/** A stored column as tags; null for none (or a value that is not an object of strings). */
export function parseKeyTagsColumn(column: string | null | undefined): KeyTags | null {
  if (!column) return null;
  try {
    const parsed: unknown = JSON.parse(column);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    return Object.values(parsed).every((v) => typeof v === 'string') ? (parsed as KeyTags) : null;
  } catch {
    return null;
  }
}

/** What a stored column contains when it has tag `name` = `value` (see the file's header). */
export function tagNeedle(name: string, value: string): string {
  return `${JSON.stringify(name)}:${JSON.stringify(value)}`;
}
