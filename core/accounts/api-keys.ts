/**
 * Gateway API keys: `tg_` + 43 base64url characters (32 random bytes, 256 bits). Only the SHA-256 of
 * the key and a display prefix are stored; the key is returned once, at creation.
 */
import { hash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKey, Database } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import { keyTagsColumn, parseKeyTagsColumn, type KeyTags } from './key-tags.ts';

export const API_KEY_PREFIX = 'tg_';
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/**
 * SHA-256 of the key, lowercase hex: what `api_keys.key_hash` holds. Runs on every authenticated
 * request: the one-shot `crypto.hash` (Node ≥ 20.12) costs ~0.4 µs where a `createHash` object costs ~1.4.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A fresh random key. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The part of a key safe to show, e.g. `tg_AbCdEfGh`. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

export interface CreatedApiKey {
  id: number;
  /** The key in clear: shown once, never stored. */
  key: string;
  key_prefix: string;
  gateway_user_id: number;
  name: string | null;
  expires_at: string | null;
  created_at: string;
  /** Per-key limits on top of the user's; null = none. */
  rpm: number | null;
  tpm: number | null;
  /** Glob patterns of the models the key may call; null = all. */
  models: string[] | null;
  /** Free-form tags copied onto every log row of the key (`key-tags.ts`); null = none. */
  tags: KeyTags | null;
}

export interface NewApiKeyInput {
  gatewayUserId: number;
  name?: string | null;
  /** ISO-8601, or null for a key that never expires. */
  expiresAt?: string | null;
  rpm?: number | null;
  tpm?: number | null;
  /** Glob patterns of the models the key may call (`openai/*`, `claude-*`, a group name); null or absent = all. */
  models?: readonly string[] | null;
  /** Tags, already checked by `checkKeyTags`; null or absent = none. */
  tags?: KeyTags | null;
}

/** `api_keys.models` as stored (a JSON array) from patterns; null = all models. */
export function modelsColumn(models: readonly string[] | null | undefined): string | null {
  return models ? JSON.stringify(models) : null;
}

/** `api_keys.models` as patterns; null = all models (also for a value that is not a JSON array of strings). */
export function parseModelsColumn(column: string | null): string[] | null {
  if (column === null) return null;
  try {
    const parsed: unknown = JSON.parse(column);
    return Array.isArray(parsed) && parsed.every((p) => typeof p === 'string') ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Patterns from a comma-separated list (the CLI's `--models`, the admin form): trimmed, empties
 * dropped; null for an empty list (all models).
 */
export function parseModelPatterns(list: string): string[] | null {
  const patterns = list.split(',').map((p) => p.trim()).filter(Boolean);
  return patterns.length > 0 ? patterns : null;
}

/** Creates a key for a user. */
export async function createApiKey(db: Kysely<Database>, input: NewApiKeyInput): Promise<CreatedApiKey> {
  const key = generateApiKey();
  const createdAt = nowIso();
  const row = await db
    .insertInto('api_keys')
    .values({
      gateway_user_id: input.gatewayUserId,
      name: input.name ?? null,
      key_hash: hashApiKey(key),
      key_prefix: displayPrefix(key),
      created_at: createdAt,
      expires_at: input.expiresAt ?? null,
      rpm: input.rpm ?? null,
      tpm: input.tpm ?? null,
      models: modelsColumn(input.models),
      tags: keyTagsColumn(input.tags),
    })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    key,
    key_prefix: displayPrefix(key),
    gateway_user_id: input.gatewayUserId,
    name: input.name ?? null,
    expires_at: input.expiresAt ?? null,
    created_at: createdAt,
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    models: input.models ? [...input.models] : null,
    tags: parseKeyTagsColumn(keyTagsColumn(input.tags)),
  };
}

/** A key as listed: never its hash. */
export type ApiKeyView = Omit<ApiKey, 'key_hash' | 'models' | 'tags'> & { status: 'active' | 'revoked' | 'expired'; models: string[] | null; tags: KeyTags | null };

const VIEW_COLUMNS = ['id', 'gateway_user_id', 'name', 'key_prefix', 'created_at', 'expires_at', 'revoked_at', 'last_used_at', 'rpm', 'tpm', 'models', 'tags'] as const;

export function keyStatus(key: Pick<ApiKey, 'revoked_at' | 'expires_at'>, nowMs = Date.now()): ApiKeyView['status'] {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= nowMs) return 'expired';
  return 'active';
}

/** Lists keys, newest first, optionally for one user. */
export async function listApiKeys(db: Kysely<Database>, gatewayUserId?: number): Promise<ApiKeyView[]> {
  let query = db
    .selectFrom('api_keys')
    .select(VIEW_COLUMNS)
    .orderBy('id', 'desc');
  if (gatewayUserId !== undefined) query = query.where('gateway_user_id', '=', gatewayUserId);
  const rows = await query.execute();
  return rows.map((r) => ({ ...r, models: parseModelsColumn(r.models), tags: parseKeyTagsColumn(r.tags), status: keyStatus(r) }));
}

/** Revokes a key now. Returns false when no such key exists; revoking twice keeps the first time. */
export async function revokeApiKey(db: Kysely<Database>, id: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: nowIso() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return true;
  const exists = await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst();
  return exists !== undefined;
}

/** One key as listed, or undefined. `nowMs` decides whether it has expired. */
export async function findApiKey(db: Kysely<Database>, id: number, nowMs = Date.now()): Promise<ApiKeyView | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(VIEW_COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { ...row, models: parseModelsColumn(row.models), tags: parseKeyTagsColumn(row.tags), status: keyStatus(row, nowMs) } : undefined;
}

/**
 * Replaces key `id`'s tags (null or `{}` = none); the key's later requests carry the new ones, earlier
 * log rows keep theirs. Returns false when no such key exists.
 */
export async function setApiKeyTags(db: Kysely<Database>, id: number, tags: KeyTags | null): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ tags: keyTagsColumn(tags) }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Per user: how many keys it has (revoked and expired included) and when any of them was last used. */
export interface UserKeyStats {
  keyCount: number;
  /** ISO-8601, null when no key was ever used. */
  lastUsedAt: string | null;
}

/** Key counts and last use for the given users; users without keys are absent from the map. */
export async function keyStatsByUser(db: Kysely<Database>, gatewayUserIds: readonly number[]): Promise<Map<number, UserKeyStats>> {
  const out = new Map<number, UserKeyStats>();
  if (gatewayUserIds.length === 0) return out;
  const rows = await db
    .selectFrom('api_keys')
    .select((eb) => ['gateway_user_id', eb.fn.countAll<number>().as('key_count'), eb.fn.max('last_used_at').as('last_used_at')])
    .where('gateway_user_id', 'in', gatewayUserIds)
    .groupBy('gateway_user_id')
    .execute();
  for (const row of rows) out.set(row.gateway_user_id, { keyCount: Number(row.key_count), lastUsedAt: row.last_used_at ?? null });
  return out;
}
