/**
 * The key of a kept answer: SHA-256 of what decides the answer, in a stable serialization (object
 * keys sorted, so two clients that order their JSON differently share an entry), behind the scope's
 * id. Fields that change only how the answer travels or is accounted (`stream`, `user`, `metadata`,
 * ...) are left out, so a streamed question and the same one asked whole share an entry.
 */
import { createHash } from 'node:crypto';
import type { Exchange } from '../../core/sdk/index.ts';
import type { CacheConfig } from './schema.ts';

/**
 * Top-level request fields that do not change what the model answers: transport (`stream`,
 * `stream_options`, `background`), attribution (`user`, `safety_identifier`, `metadata`), storage
 * (`store`), the provider's prompt-cache routing (`prompt_cache_key`) and its service tier.
 */
const TRANSPORT_FIELDS = new Set(['stream', 'stream_options', 'user', 'metadata', 'store', 'service_tier', 'safety_identifier', 'prompt_cache_key', 'background']);

/**
 * Request headers that select API behaviour on a native pass-through (beta features, the API
 * version), so they are part of what the upstream is asked.
 */
const BEHAVIOUR_HEADERS = ['anthropic-beta', 'anthropic-version', 'openai-beta'];

/** JSON of `value` with every object's keys sorted and `undefined` members left out, as `JSON.stringify` would. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : stableJson(item))).join(',')}]`;
  const parts: string[] = [];
  for (const name of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined || typeof member === 'function') continue;
    parts.push(`${JSON.stringify(name)}:${stableJson(member)}`);
  }
  return `{${parts.join(',')}}`;
}

function withoutTransport(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (!TRANSPORT_FIELDS.has(name)) kept[name] = value;
  return kept;
}

/** The part of a key naming whose answers it holds, or null when the scope has nobody to name. */
function scopeOf(ex: Exchange, scope: CacheConfig['scope']): string | null {
  if (scope === 'shared') return 's';
  if (!ex.principal) return null;
  return scope === 'user' ? `u${ex.principal.gatewayUserId}` : `k${ex.principal.apiKeyId}`;
}

/**
 * The key of `ex`'s answer (`v1:<scope>:<sha-256 hex>`), or null when it has none: no request, or a
 * per-user or per-key scope without a principal (no `auth-guard` before the cache).
 *
 * What is hashed is the client's own body when its dialect has one apart from the canonical request
 * (the Messages and Responses APIs): a native pass-through sends that body, with fields the canonical
 * request drops (documents, `top_k`, built-in tools), and two requests differing only there must
 * not share an answer. On OpenAI chat the body is the canonical request. `v1` is the key's format:
 * a change of it starts a fresh cache instead of misreading the old one.
 */
export function cacheKeyOf(ex: Exchange, scope: CacheConfig['scope']): string | null {
  const owner = scopeOf(ex, scope);
  if (owner === null || ex.request === null) return null;
  const body = ex.clientBody ?? ex.request;
  const headers: Record<string, unknown> = {};
  for (const name of BEHAVIOUR_HEADERS) if (ex.headers[name] !== undefined) headers[name] = ex.headers[name];
  const material = stableJson({ dialect: ex.dialect?.id ?? null, body: withoutTransport(body), headers });
  return `v1:${owner}:${createHash('sha256').update(material).digest('hex')}`;
}
