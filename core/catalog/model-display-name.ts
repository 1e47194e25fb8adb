/**
 * `getModelDisplayName`: the one place every endpoint gets a model's human name from.
 *
 * The upstream's own name wins when it gives one (Anthropic `display_name`, Gemini `displayName`,
 * Mistral `name`). Otherwise the name is derived from the id: the `provider/` prefix and an Ollama
 * `:latest` tag are dropped, a remaining `:tag` becomes ` (tag)`, `-`/`_` separate words, a word that
 * is a known acronym is upper-cased (GPT, AI, VL, TTS...), any other word starting with a letter gets
 * a capital first letter, and dates or versions stay as they are: `gpt-4o-mini` → "GPT 4o Mini",
 * `llama3.2:latest` → "Llama3.2", `qwen2.5-coder:7b` → "Qwen2.5 Coder (7b)". Never empty: an id with
 * no usable characters is returned as it is.
 */

const ACRONYMS = new Set(['gpt', 'ai', 'vl', 'tts', 'llm', 'hd', 'api', 'it', 'moe', 'r1', 'v3']);

function deriveFromId(id: string): string {
  let name = id.slice(id.lastIndexOf('/') + 1).replace(/:latest$/, '');
  let tag = '';
  const colon = name.indexOf(':');
  if (colon > 0) {
    tag = ` (${name.slice(colon + 1)})`;
    name = name.slice(0, colon);
  }
  const words = name.split(/[-_\s]+/).filter(Boolean).map((word) => {
    if (ACRONYMS.has(word.toLowerCase())) return word.toUpperCase();
    return /^[a-z]/.test(word) ? word[0]!.toUpperCase() + word.slice(1) : word;
  });
  return words.length > 0 ? words.join(' ') + tag : '';
}

/** A model's display name (see module doc). `model.id` may carry a `provider/` prefix. */
export function getModelDisplayName(model: { id: string; display_name?: string | null }): string {
  const own = model.display_name?.trim();
  if (own) return own;
  return deriveFromId(model.id) || model.id;
}
