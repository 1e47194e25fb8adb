/**
 * auth-guard: authenticates every request by gateway API key (`Authorization: Bearer <key>`,
 * `x-api-key: <key>`, or as Google's clients send it, `x-goog-api-key: <key>` or `?key=<key>`), then
 * sets `ex.principal`. Unknown, revoked or expired keys get 401
 * `invalid_api_key`, whose message says what was wrong when it can tell (a provider's key sent to the
 * gateway, a missing `Bearer `: `key-advice.ts`); a disabled user gets 403 `permission_denied`.
 *
 * Lookups are by SHA-256 of the key and cached, misses too (a client retrying a wrong key costs no
 * query), but apart: a flood of random keys evicts only other misses, never a known key, whose
 * every request would otherwise hash and query again. The caches are cleared whenever another
 * process commits to the database (`store.onExternalChange`), so a key revoked with the CLI stops
 * working within about 250 ms on SQLite (its change poll) and as soon as the CLI's NOTIFY arrives
 * on PostgreSQL. A cache miss is a synchronous statement on SQLite and one awaited query on
 * PostgreSQL (`key-store.ts`).
 *
 * It also offers the `authGuard` service (core `services.ts`): single-use test tickets that stand for
 * a key for one request, for the admin key test (the key itself is never stored, so nothing else could
 * present it).
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { invalidApiKey, permissionDenied } from '../../core/errors.ts';
import { hashApiKey, parseModelsColumn } from '../../core/accounts/api-keys.ts';
import { UNKNOWN_ENDPOINT } from '../../core/routes.ts';
import { createKeyStore, type KeyRow, type KeyStore } from './key-store.ts';
import { authGuardSchema, type AuthGuardConfig } from './schema.ts';
import { TEST_TICKET_PREFIX, TEST_TICKET_TTL_MS, type AuthGuardService } from '../../core/services.ts';
import { keyWithoutBearer, malformedAuthorizationMessage, providerKeyKind, providerKeyMessage } from './key-advice.ts';

interface KeyRecord {
  principal: Principal;
  expiresAtMs: number | null;
  revoked: boolean;
  userDisabled: boolean;
}

/** The key presented by the client, or null: Bearer, else `x-api-key`, else `x-goog-api-key`, else `?key=`. */
export function presentedKey(headers: Exchange['headers'], query: Exchange['query'] = {}): string | null {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1]! : null;
  }
  for (const apiKey of [headers['x-api-key'], headers['x-goog-api-key'], query.key]) {
    if (typeof apiKey === 'string' && apiKey.trim()) return apiKey.trim();
  }
  return null;
}

/**
 * The 401 for a request that presented no usable key: what is wrong with what it sent, if anything.
 * With no key at all, it says where the request's dialect puts one (`Dialect.keyAdvice`, e.g. Gemini's
 * `x-goog-api-key`), else the gateway's own headers.
 */
function missingKey(ex: Exchange): Error {
  const authorization = ex.headers.authorization;
  if (!authorization) {
    return invalidApiKey(`Missing API key. Pass a Tollgate key as ${ex.dialect?.keyAdvice ?? '"Authorization: Bearer <key>" or "x-api-key: <key>"'}.`);
  }
  const bare = keyWithoutBearer(authorization);
  const kind = bare === null ? null : providerKeyKind(bare);
  return invalidApiKey(kind ? providerKeyMessage(kind) : malformedAuthorizationMessage(bare !== null));
}

/** The 401 for a key no gateway user holds; a provider's key is named as such. */
function unknownKey(key: string): Error {
  const kind = providerKeyKind(key);
  return invalidApiKey(kind ? providerKeyMessage(kind) : undefined);
}

function toRecord(row: KeyRow | undefined): KeyRecord | false {
  if (!row) return false;
  return {
    principal: { gatewayUserId: row.userId, gatewayUserName: row.name, apiKeyId: row.apiKeyId, rpm: row.rpm, tpm: row.tpm, keyRpm: row.keyRpm, keyTpm: row.keyTpm, models: parseModelsColumn(row.models), maxConcurrent: row.max_concurrent, keyTags: row.tags,
      team: row.teamId === null ? null : { id: row.teamId, name: row.teamName!, rpm: row.teamRpm, tpm: row.teamTpm, maxConcurrent: row.teamMaxConcurrent, models: parseModelsColumn(row.teamModels) } },
    expiresAtMs: row.expires_at ? Date.parse(row.expires_at) : null,
    revoked: row.revoked_at !== null,
    userDisabled: row.disabled === 1,
  };
}

function createAuthGuard(config: AuthGuardConfig, ctx: PluginContext): Plugin {
  const { store, log } = ctx;
  const keys = createKeyStore(store);
  const known = new LRUCache<string, KeyRecord>({ max: config.cacheSize });
  const unknown = new LRUCache<string, true>({ max: config.cacheSize });
  const remember = (hash: string, record: KeyRecord | false) => {
    if (record) known.set(hash, record);
    else unknown.set(hash, true);
  };
  // A lookup that started before a change must not cache what it read: it may be the old row.
  let generation = 0;
  const unsubscribe = store.onExternalChange(() => {
    generation++;
    known.clear();
    unknown.clear();
  });

  const lastUsed = new Map<number, number>();
  const flushLastUsed = (): void | Promise<void> => {
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed];
    lastUsed.clear();
    try {
      const done = keys.touch(entries);
      if (done) return done.catch((err: unknown) => log.warn('auth-guard: could not record when keys were last used', { err: String(err) }));
    } catch (err) {
      log.warn('auth-guard: could not record when keys were last used', { err: String(err) });
    }
  };
  const timer = setInterval(() => void flushLastUsed(), config.lastUsedFlushMs);
  timer.unref();

  /** The key's record; synchronous on a cache hit and on SQLite. */
  function find(hash: string): KeyRecord | false | Promise<KeyRecord | false> {
    const cached = known.get(hash);
    if (cached) return cached;
    if (unknown.get(hash)) return false;
    const row = keys.lookup(hash);
    if (!(row instanceof Promise)) {
      const record = toRecord(row);
      remember(hash, record);
      return record;
    }
    const startedAt = generation;
    return row.then((found) => {
      const record = toRecord(found);
      if (startedAt === generation) remember(hash, record);
      return record;
    });
  }

  function identifyQuietly(ex: Exchange): void | Promise<void> {
    const key = presentedKey(ex.headers, ex.query);
    if (!key || key.startsWith(TEST_TICKET_PREFIX)) return;
    const identify = (record: KeyRecord | false) => {
      const live = record && !record.revoked && !record.userDisabled && (record.expiresAtMs === null || record.expiresAtMs > ex.startedAtMs);
      if (live) ex.principal = record.principal;
    };
    const record = find(hashApiKey(key));
    return record instanceof Promise ? record.then(identify) : identify(record);
  }

  const tickets = createTestTickets(keys, ctx.clock);
  ctx.services.provide('authGuard', tickets.service);

  /** Admits the request as `record`'s key, or throws why not. */
  function admit(ex: Exchange, key: string, isTicket: boolean, record: KeyRecord | false): void | Promise<void> {
    if (!record) throw unknownKey(key);
    if (record.revoked) throw invalidApiKey();
    if (record.expiresAtMs !== null && record.expiresAtMs <= ex.startedAtMs) throw invalidApiKey('This API key has expired. Ask an operator for a new one.');
    if (record.userDisabled) throw permissionDenied('This gateway user is disabled. Ask an operator to enable it.');
    ex.principal = record.principal;
    // A test call counts as a use too: an admin who just tested a key expects "Last used" to say so.
    lastUsed.set(record.principal.apiKeyId, ex.startedAtMs);
    // Written at once: the admin UI reloads the key list right after the test returns.
    if (isTicket) return flushLastUsed();
  }

  return {
    name: 'auth-guard',
    headersOnly: true,
    onRequest(ex) {
      // A path no endpoint has answers its 404 to anyone (the endpoint list is public, as the OpenAPI
      // document is); a valid key only attributes the request for the log.
      if (ex.operation === UNKNOWN_ENDPOINT) return identifyQuietly(ex);
      const key = presentedKey(ex.headers, ex.query);
      if (!key) throw missingKey(ex);
      const isTicket = key.startsWith(TEST_TICKET_PREFIX);
      const hash = isTicket ? tickets.redeem(key, ex.startedAtMs) : hashApiKey(key);
      if (hash === null) throw invalidApiKey('This test ticket is unknown, used or expired.');
      const record = find(hash);
      return record instanceof Promise ? record.then((found) => admit(ex, key, isTicket, found)) : admit(ex, key, isTicket, record);
    },
    async close() {
      clearInterval(timer);
      unsubscribe();
      await flushLastUsed();
    },
  };
}

/**
 * Test tickets held in memory: ticket → the key hash it stands for, until redeemed or expired. Only
 * this process can redeem them, which is the point: the admin API calls its own HTTP server.
 */
function createTestTickets(keys: KeyStore, clock: PluginContext['clock']) {
  const pending = new Map<string, { keyHash: string; expiresAtMs: number }>();

  const service: AuthGuardService = {
    async issueTestTicket(apiKeyId) {
      const keyHash = await keys.hashOf(apiKeyId);
      if (keyHash === undefined) return null;
      const nowMs = clock();
      for (const [ticket, entry] of pending) if (entry.expiresAtMs <= nowMs) pending.delete(ticket);
      const ticket = TEST_TICKET_PREFIX + randomBytes(32).toString('base64url');
      pending.set(ticket, { keyHash, expiresAtMs: nowMs + TEST_TICKET_TTL_MS });
      return ticket;
    },
  };

  return {
    service,
    /** The key hash a live ticket stands for (the ticket is used up), or null. */
    redeem(ticket: string, nowMs: number): string | null {
      const entry = pending.get(ticket);
      if (!entry) return null;
      pending.delete(ticket);
      return entry.expiresAtMs > nowMs ? entry.keyHash : null;
    },
  };
}

export const authGuard = definePlugin<AuthGuardConfig>({
  name: 'auth-guard',
  description: 'Authenticates requests by gateway API key and sets the principal.',
  configSchema: authGuardSchema,
  first: { why: 'nothing else may run for a request that is not authenticated' },
  create: createAuthGuard,
});
