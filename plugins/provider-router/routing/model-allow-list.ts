/**
 * Per-key model allow-lists (`api_keys.models`, docs/contract.md "Errors": 403 `permission_denied`):
 * a key limited to glob patterns may call a model when a pattern matches the name it asked for (a
 * group name, `provider/model`, a bare id) or, for a name that is not a group, the `provider/model`
 * it resolved to (so `openai/*` also admits the bare `gpt-4o-mini` that OpenAI serves). `*` matches
 * any run of characters, `/` included; `?` one character; everything else is literal.
 */
import { gatewayError } from '../../../core/errors.ts';

/** A glob pattern as an anchored regular expression. */
export function globRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** True when one of `patterns` matches one of `names`; null patterns allow everything. */
export function modelAllowed(patterns: readonly string[] | null | undefined, names: readonly string[]): boolean {
  if (!patterns) return true;
  return patterns.some((p) => {
    const re = globRegExp(p);
    return names.some((name) => re.test(name));
  });
}

/** Throws 403 `permission_denied` naming the model and the key's patterns unless one matches. */
export function checkModelAllowed(patterns: readonly string[] | null | undefined, requested: string, resolved: string | null = null): void {
  const names = resolved && resolved !== requested ? [requested, resolved] : [requested];
  if (modelAllowed(patterns, names)) return;
  const allowed = patterns!.length > 0 ? patterns!.map((p) => `"${p}"`).join(', ') : 'none';
  throw gatewayError('permission_denied', {
    message: `This API key may not use the model "${requested}". Models it may use: ${allowed}. Ask an operator to change the key's models.`,
    param: 'model',
  });
}
