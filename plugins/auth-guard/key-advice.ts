/**
 * What a refused key was, in words a client's developer can act on: a provider's own key sent to the
 * gateway (the commonest first-hour mistake: one `OPENAI_API_KEY` variable for both), or a Tollgate key
 * without its `Bearer ` prefix. The key itself is never echoed, not even in part.
 *
 * The shapes are the vendors' documented, distinctive prefixes. Generic shapes (Mistral's bare
 * 32-character keys) match too much to name a vendor, so they are not guessed.
 */

/** Distinctive prefixes of provider keys, most specific first (`sk-ant-` before `sk-`). */
const PROVIDER_KEY_SHAPES: ReadonlyArray<{ shape: RegExp; what: string }> = [
  { shape: /^sk-ant-/, what: 'an Anthropic API key' },
  { shape: /^sk-or-/, what: 'an OpenRouter API key' },
  { shape: /^sk-proj-/, what: 'an OpenAI project API key' },
  { shape: /^sk-(?:svcacct|admin)-/, what: 'an OpenAI API key' },
  { shape: /^sk-[A-Za-z0-9_-]{20,}$/, what: 'an OpenAI API key' },
  { shape: /^AIza[0-9A-Za-z_-]{30,}$/, what: 'a Google (Gemini) API key' },
];

/** Which provider's key `key` looks like (`'an Anthropic API key'`), or null. */
export function providerKeyKind(key: string): string | null {
  return PROVIDER_KEY_SHAPES.find((entry) => entry.shape.test(key))?.what ?? null;
}

/** The 401 message for a provider key sent to the gateway. */
export function providerKeyMessage(kind: string): string {
  return `This looks like ${kind}; send a Tollgate key (tg_...) to the gateway. The provider key belongs in the gateway's manifest (or its environment) or in \`tollgate credentials set\`, not in the client.`;
}

/**
 * The key in an `Authorization` header that lacks the `Bearer ` scheme (`Authorization: tg_...`),
 * or null when the header is well formed or names another scheme.
 */
export function keyWithoutBearer(authorization: string): string | null {
  const value = authorization.trim();
  return value !== '' && !/\s/.test(value) ? value : null;
}

/** The 401 message for an `Authorization` header that is not `Bearer <key>`. */
export function malformedAuthorizationMessage(bareKey: boolean): string {
  return bareKey
    ? 'The Authorization header has no "Bearer " prefix: send "Authorization: Bearer <key>" (or "x-api-key: <key>").'
    : 'The Authorization header must use the Bearer scheme: send "Authorization: Bearer <key>" (or "x-api-key: <key>").';
}
