/**
 * Namespaced function tools (`{"type":"namespace","name":"crm","tools":[function tools]}`, which
 * Codex sends for its sub-agents) on a translated route: chat has no namespaces, so each function is
 * flattened to `<namespace>__<name>` (chat function names allow only `[a-zA-Z0-9_-]`), and a call of
 * such a name is split back into `name` and `namespace`, as OpenAI's own `function_call` items carry
 * them. Source: https://platform.openai.com/docs/api-reference/responses/create (tools: namespace;
 * function_call: `namespace`).
 */
const SEPARATOR = '__';

/** The chat name of `name` in `namespace`. */
export function flatName(namespace: string, name: string): string {
  return `${namespace}${SEPARATOR}${name}`;
}

/** The namespaces a request's `tools` declare. */
export function declaredNamespaces(body: Readonly<Record<string, unknown>> | null): string[] {
  const tools = body?.tools;
  if (!Array.isArray(tools)) return [];
  const named = (t: unknown): t is { type: 'namespace'; name: string } =>
    typeof t === 'object' && t !== null && (t as { type?: unknown }).type === 'namespace' && typeof (t as { name?: unknown }).name === 'string';
  return (tools as unknown[]).filter(named).map((t) => t.name);
}

/** A chat function name back as the client declared it: `{name, namespace}` for a flattened one. */
export function splitName(chatName: string, namespaces: readonly string[]): { name: string; namespace?: string } {
  for (const namespace of namespaces) {
    const prefix = `${namespace}${SEPARATOR}`;
    if (chatName.startsWith(prefix) && chatName.length > prefix.length) return { name: chatName.slice(prefix.length), namespace };
  }
  return { name: chatName };
}
