/**
 * auth-guard's key cache: a flood of unknown keys must not evict a known one (each of its requests
 * would hash and query again). Observed through the cache's one visible effect: a key revoked on the
 * gateway's own connection, with no change notice, stays admitted while its record is cached, and is
 * refused once it is read again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openTestStore } from '../helpers/test-store.ts';
import { tempDir } from '../helpers/tmp.ts';
import { manualClock } from '../helpers/test-gateway.ts';
import type { Store } from '../../core/store/store.ts';
import { createServiceRegistry } from '../../core/services.ts';
import { createLog } from '../../core/runtime/log.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey, revokeApiKey } from '../../core/accounts/api-keys.ts';
import { authGuard } from '../../plugins/auth-guard/index.ts';
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { authRefusal } from '../helpers/auth-guard.ts';

const CACHE_SIZE = 4;
let store: Store;
let plugin: Plugin<unknown>;
const clock = manualClock(Date.parse('2026-11-27T00:00:00Z'));

before(async () => {
  store = await openTestStore(tempDir());
  const ctx = { store, services: createServiceRegistry(), clock, log: createLog('error', () => {}) } as unknown as PluginContext;
  plugin = await authGuard.create({ cacheSize: CACHE_SIZE, lastUsedFlushMs: 100_000 }, ctx);
});
after(async () => {
  await plugin.close?.();
  await store.close();
});

const refusal = (key: string) => authRefusal(plugin, key, clock());

test('random keys, many more than the cache holds, leave a known key cached', async () => {
  const user = await createGatewayUser(store.db, { name: 'cached' });
  const { id, key } = await createApiKey(store.db, { gatewayUserId: user.id });
  assert.equal(await refusal(key), null);
  // Revoked on the same connection: no change notice, so only a fresh read would see it.
  assert.equal(await revokeApiKey(store.db, id), true);
  for (let i = 0; i < CACHE_SIZE * 10; i++) assert.equal(await refusal(`tg_${randomBytes(24).toString('base64url')}`), 401);
  assert.equal(await refusal(key), null, 'the known key was evicted by unknown ones and read again');
  // The check itself: once the caches are dropped, the revocation is read.
  store.notifyChange();
  assert.equal(await refusal(key), 401);
});

test('known keys beyond the cache size are read again (the cache is bounded)', async () => {
  const user = await createGatewayUser(store.db, { name: 'many' });
  const first = await createApiKey(store.db, { gatewayUserId: user.id });
  assert.equal(await refusal(first.key), null);
  await revokeApiKey(store.db, first.id);
  for (let i = 0; i < CACHE_SIZE; i++) assert.equal(await refusal((await createApiKey(store.db, { gatewayUserId: user.id })).key), null);
  assert.equal(await refusal(first.key), 401);
});
