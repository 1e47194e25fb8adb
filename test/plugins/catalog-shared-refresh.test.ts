/**
 * The model catalog refreshed once for all replicas: three catalogs (three replicas' worth) on one
 * store and one real redis-server, the provider a real OpenAIProvider against the OpenAI simulator.
 * When the persisted list has expired, the replicas that need it at the same moment ask the
 * upstream once (the one holding the Redis lease); the others keep serving the list they have. A
 * replica that starts later takes the fresh list from the store instead of asking again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore, type Store } from '../../core/store/store.ts';
import { createCoordination, type Coordination } from '../../core/coordination/index.ts';
import { createLog } from '../../core/runtime/log.ts';
import { createUpstreamClient, type UpstreamClient } from '../../core/upstream/upstream-client.ts';
import { loadPersistedCatalog, persistCatalog } from '../../core/catalog/model-catalog-store.ts';
import { createCatalog, type Catalog } from '../../plugins/provider-router/catalog.ts';
import { OpenAIProvider } from '../../plugins/provider-router/providers/openai/index.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { systemClock } from '../../core/runtime/clock.ts';

const skip = skipWithoutRedis();
const log = createLog('error', () => {});
const TTL_MS = 60_000;
let redis: RedisServer;
let sim: OpenAISimulator;
let store: Store;
let upstream: UpstreamClient;
const coordinations: Coordination[] = [];

before(async () => {
  if (skip) return;
  redis = await startRedisServer();
  sim = await startOpenAISimulator();
  store = openStore(join(tempDir(), 'tollgate.db'));
  upstream = createUpstreamClient({ connectTimeoutMs: 5_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, maxResponseBytes: 1 << 20,
    maxStreamBytes: 1 << 20, connectionsPerOrigin: 4, queueTimeoutMs: 5_000, requestDeadlineMs: 10_000 });
});
after(async () => {
  for (const c of coordinations) await c.close();
  await upstream?.close();
  await store?.close();
  await sim?.close();
  await redis?.stop();
});

async function replica(): Promise<Catalog> {
  const coordination = await createCoordination(
    { redis: redis.url, failMode: 'closed', leaseTtlMs: 30_000, budgetReservationTtlMs: 600_000, commandTimeoutMs: 2_000 },
    { log, clock: systemClock, env: {} },
  );
  coordinations.push(coordination);
  const provider = new OpenAIProvider('openai', { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' }, upstream);
  return createCatalog(new Map([['openai', provider]]), {
    ttlMs: TTL_MS, log,
    persisted: await loadPersistedCatalog(store),
    onDiscovered: (id, models) => persistCatalog(store.db, id, models),
    shared: {
      latest: async (id) => (await loadPersistedCatalog(store, id)).get(id),
      lease: (id, ttlMs) => coordination.leases.tryAcquire(`catalog:${id}`, ttlMs),
    },
  });
}

const listCalls = () => sim.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;

describe('catalog refresh shared by replicas', { skip }, () => {
  test('an expired list is fetched once for three replicas; a later replica reads it from the store', async () => {
    // A list two TTLs old: every replica loads it, expired.
    await persistCatalog(store.db, 'openai', [{ id: 'old-model', created: 0, owned_by: 'x' }], Date.now() - 2 * TTL_MS);
    const replicas = await Promise.all([replica(), replica(), replica()]);
    const before = listCalls();
    const lists = await Promise.all(replicas.map((c) => c.modelsOf('openai')));
    assert.equal(listCalls() - before, 1, 'one replica asked the upstream');
    const fresh = lists.filter((l) => !l.some((m) => m.id === 'old-model'));
    assert.equal(fresh.length, 1, 'the lease holder has the new list; the others serve the old one for now');
    assert.ok(fresh[0]!.length > 0);
    const late = await replica();
    const lateList = await late.modelsOf('openai');
    assert.equal(listCalls() - before, 1, 'the replica started later did not ask again');
    assert.deepEqual(lateList.map((m) => m.id), fresh[0]!.map((m) => m.id));
  });
});
