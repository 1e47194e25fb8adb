/**
 * auth-guard: authenticates every request by gateway API key (`Authorization: Bearer <key>` or
 * `x-api-key: <key>`), then sets `ex.principal`. Unknown, revoked or expired keys get 401
 * `invalid_api_key`; a disabled user gets 403 `permission_denied`.
 *
 * Lookups are by SHA-256 of the key and cached (misses too, so guessing costs no queries). The cache
 * is cleared whenever another process commits to the database (`store.onExternalChange`), so a key
 * revoked with the CLI stops working within about 250 ms.
 */
import { LRUCache } from 'lru-cache';
import type { Plugin, PluginContext, PluginFactory } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { invalidApiKey, permissionDenied } from '../../core/errors.ts';
import { hashApiKey } from '../../core/api-keys.ts';
import { nowIso, prepareQuery } from '../../core/db.ts';
import { authGuardSchema, type AuthGuardConfig } from './schema.ts';

interface KeyRecord {
  principal: Principal;
  expiresAtMs: number | null;
  revoked: boolean;
  userDisabled: boolean;
}

/** The key presented by the client, or null. */
export function presentedKey(headers: Exchange['headers']): string | null {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1]! : null;
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey ? apiKey.trim() : null;
}

function createAuthGuard(config: AuthGuardConfig, ctx: PluginContext): Plugin {
  const { store } = ctx;
  const lookup = prepareQuery(
    store.sqlite,
    store.db
      .selectFrom('api_keys as k')
      .innerJoin('gateway_users as u', 'u.id', 'k.gateway_user_id')
      .select(['k.id as apiKeyId', 'k.expires_at', 'k.revoked_at', 'u.id as userId', 'u.name', 'u.disabled', 'u.rpm', 'u.tpm', 'k.rpm as keyRpm', 'k.tpm as keyTpm'])
      .where('k.key_hash', '=', ''),
  );
  const touch = prepareQuery(store.sqlite, store.db.updateTable('api_keys').set({ last_used_at: '' }).where('id', '=', 0));
  const cache = new LRUCache<string, KeyRecord | false>({ max: config.cacheSize });
  const unsubscribe = store.onExternalChange(() => cache.clear());

  const lastUsed = new Map<number, number>();
  const flushLastUsed = () => {
    if (lastUsed.size === 0 || !store.sqlite.open) return;
    const entries = [...lastUsed];
    lastUsed.clear();
    store.sqlite.transaction(() => {
      for (const [id, atMs] of entries) touch.run(nowIso(atMs), id);
    })();
  };
  const timer = setInterval(flushLastUsed, config.lastUsedFlushMs);
  timer.unref();

  function find(hash: string): KeyRecord | false {
    const cached = cache.get(hash);
    if (cached !== undefined) return cached;
    const row = lookup.get(hash);
    const record: KeyRecord | false = row
      ? {
          principal: { gatewayUserId: row.userId, gatewayUserName: row.name, apiKeyId: row.apiKeyId, rpm: row.rpm, tpm: row.tpm, keyRpm: row.keyRpm, keyTpm: row.keyTpm },
          expiresAtMs: row.expires_at ? Date.parse(row.expires_at) : null,
          revoked: row.revoked_at !== null,
          userDisabled: row.disabled === 1,
        }
      : false;
    cache.set(hash, record);
    return record;
  }

  return {
    name: 'auth-guard',
    onRequest(ex) {
      const key = presentedKey(ex.headers);
      if (!key) throw invalidApiKey('Missing API key. Pass a Tollgate key as "Authorization: Bearer <key>" or "x-api-key: <key>".');
      const record = find(hashApiKey(key));
      if (!record || record.revoked) throw invalidApiKey();
      if (record.expiresAtMs !== null && record.expiresAtMs <= ex.startedAtMs) throw invalidApiKey('This API key has expired. Ask an operator for a new one.');
      if (record.userDisabled) throw permissionDenied('This gateway user is disabled. Ask an operator to enable it.');
      ex.principal = record.principal;
      lastUsed.set(record.principal.apiKeyId, ex.startedAtMs);
    },
    close() {
      clearInterval(timer);
      unsubscribe();
      flushLastUsed();
    },
  };
}

export const authGuard: PluginFactory<AuthGuardConfig> = {
  name: 'auth-guard',
  description: 'Authenticates requests by gateway API key and sets the principal.',
  configSchema: authGuardSchema,
  create: createAuthGuard,
};
