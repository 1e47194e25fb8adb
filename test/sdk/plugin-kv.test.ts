/**
 * `ctx.kv()` of the plugin SDK (issue 40): a plugin written on `tollgate/plugin`, hosted as the
 * gateway hosts it (`hostPlugin`), keeps entries in its own key-value store. The same cases run on
 * the gateway's database (SQLite; PostgreSQL with `TOLLGATE_TEST_STORE=postgres`) and on a real
 * redis-server, each engine as the gateway builds it; the database's TTLs follow a settable clock,
 * Redis's its own (PX). Two engines on one database or one Redis play two replicas writing at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definePlugin, reply } from '../../core/sdk/index.ts';
import { startGateway } from '../../core/gateway.ts';
import { validateManifest } from '../../core/manifest.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import type { KvOptions, PluginContext as SdkContext, PluginKv } from '../../core/sdk/index.ts';
import { hostPlugin } from '../../core/sdk/host.ts';
import type { PluginContext } from '../../core/plugin.ts';
import type { PluginKvEngine } from '../../core/store/plugin-kv.ts';
import { createDatabaseKv, type DatabaseKvEngine } from '../../core/store/plugin-kv-database.ts';
import { createRedisKv, kvEntryPrefix } from '../../core/coordination/redis-plugin-kv.ts';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { localLeases } from '../../core/coordination/leases.ts';
import { createLog } from '../../core/runtime/log.ts';
import { createMetricsRegistry } from '../../core/runtime/metrics.ts';
import type { Store } from '../../core/store/store.ts';
import { openTestStore, TEST_STORE_ENGINE, testStoreEnv } from '../helpers/test-store.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { freePort } from '../helpers/free-port.ts';
import { eventually } from '../helpers/eventually.ts';
import { tempDir } from '../helpers/tmp.ts';

const silent = createLog('error', () => {});
const MIB = 1024 * 1024;

/** A settable clock, ms since the epoch. */
function testClock(startMs = 1_800_000_000_000) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

/** The SDK context plugin `name` gets from the host, with the gateway's `engine` behind `ctx.kv`. */
async function sdkContext(name: string, engine: PluginKvEngine, clock = () => 0): Promise<SdkContext> {
  let captured: SdkContext | null = null;
  const factory = hostPlugin(definePlugin({
    name, description: 'captures its context', configSchema: { type: 'object' },
    create(_config, ctx) {
      captured = ctx;
      return {};
    },
  }), { kind: 'module', specifier: './test.mjs', path: '/tmp/test.mjs' });
  const internal = { log: silent, clock, metrics: createMetricsRegistry(), dataDir: '/tmp', pluginKv: engine } as unknown as PluginContext;
  await factory.create({}, internal);
  return captured!;
}

async function kvOf(name: string, engine: PluginKvEngine, options?: KvOptions, clock?: () => number): Promise<PluginKv> {
  return (await sdkContext(name, engine, clock)).kv(options);
}

/** An SDK plugin that answers every request locally with how many it answered, counted in its kv store. */
const counterPlugin = hostPlugin(definePlugin({
  name: 'kv-counter', description: 'counts requests in ctx.kv', configSchema: { type: 'object' },
  create(_config, ctx) {
    const kv = ctx.kv({ maxBytes: 1_000 });
    return {
      async onRequest() {
        const count = Number((await kv.get('count')) ?? 0) + 1;
        await kv.set('count', String(count));
        return reply(200, { count });
      },
    };
  },
}), { kind: 'module', specifier: './kv-counter.mjs', path: '/tmp/kv-counter.mjs' });

/** Starts a gateway on `dataDir` whose first plugin is `kv-counter`; `coordination` as the manifest's. */
async function startCounterGateway(dataDir: string, coordination?: Record<string, unknown>) {
  const registry = new Map(pluginRegistry).set('kv-counter', counterPlugin);
  const manifest = validateManifest({
    ...(coordination ? { coordination } : {}),
    plugins: [{ name: 'kv-counter' }, { name: 'provider-router', config: { providers: { openai: { type: 'openai', baseUrl: 'http://127.0.0.1:9', apiKey: 'sk-unused' } } } }],
  }, registry, { env: {} });
  return startGateway({ manifest, registry, dataDir, port: 0, host: '127.0.0.1', env: { TOLLGATE_ADMIN_PASSWORD: 'test admin password', ...await testStoreEnv(dataDir) }, log: silent });
}

async function countOf(origin: string): Promise<number> {
  const res = await fetch(`${origin}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { count: number }).count;
}

/** A value of `bytes` ASCII bytes. */
const ascii = (bytes: number, fill = 'x') => fill.repeat(bytes);

/**
 * The cases every engine passes. `tick` moves the database's clock on (a no-op for Redis, whose
 * order is its own write sequence), so entries written one after the other have distinct write times.
 */
function commonCases(engineOf: () => PluginKvEngine, tick: () => void) {
  let n = 0;
  const fresh = () => `p${++n}-${process.pid % 1000}`;

  test('get, set, replace and delete an entry', async () => {
    const kv = await kvOf(fresh(), engineOf());
    assert.equal(await kv.get('a'), null);
    await kv.set('a', '{"x":1}');
    assert.equal(await kv.get('a'), '{"x":1}');
    await kv.set('a', 'second');
    assert.equal(await kv.get('a'), 'second');
    await kv.delete('a');
    assert.equal(await kv.get('a'), null);
    await kv.delete('never-set');
    assert.equal(await kv.get('never-set'), null);
  });

  test('one plugin never sees, replaces or deletes another plugin\'s keys', async () => {
    const alpha = await kvOf(fresh(), engineOf());
    const beta = await kvOf(fresh(), engineOf());
    await alpha.set('shared-name', 'alpha');
    assert.equal(await beta.get('shared-name'), null);
    await beta.set('shared-name', 'beta');
    assert.equal(await alpha.get('shared-name'), 'alpha');
    await beta.delete('shared-name');
    assert.equal(await alpha.get('shared-name'), 'alpha');
    assert.equal(await beta.get('shared-name'), null);
  });

  test('evicts the oldest-written entries first once the plugin is past maxBytes', async () => {
    const kv = await kvOf(fresh(), engineOf(), { maxBytes: 30 });
    for (const key of ['k1', 'k2', 'k3']) {
      await kv.set(key, ascii(8)); // 2 + 8 = 10 bytes each: exactly 30
      tick();
    }
    assert.deepEqual(await Promise.all(['k1', 'k2', 'k3'].map((k) => kv.get(k))), [ascii(8), ascii(8), ascii(8)]);
    await kv.set('k4', ascii(8));
    tick();
    assert.equal(await kv.get('k1'), null, 'the oldest went first');
    // Rewriting k2 makes it the newest: the next eviction takes k3.
    await kv.set('k2', ascii(8, 'y'));
    tick();
    await kv.set('k5', ascii(8));
    tick();
    assert.equal(await kv.get('k3'), null);
    assert.deepEqual(await Promise.all(['k2', 'k4', 'k5'].map((k) => kv.get(k))), [ascii(8, 'y'), ascii(8), ascii(8)]);
    // One larger entry evicts as many as it needs, oldest first.
    await kv.set('big', ascii(17)); // 20 bytes: only one 10-byte entry may stay
    assert.deepEqual(await Promise.all(['k4', 'k2', 'k5', 'big'].map((k) => kv.get(k))), [null, null, ascii(8), ascii(17)]);
  });

  test('counts keys and values in UTF-8 bytes, not characters', async () => {
    const kv = await kvOf(fresh(), engineOf(), { maxBytes: 10 });
    await kv.set('a', 'ééé'); // 1 + 6 bytes (4 UTF-16 units)
    tick();
    await kv.set('b', 'x'); // 2 bytes: 9 in all
    tick();
    assert.equal(await kv.get('a'), 'ééé');
    await kv.set('c', '€'); // 1 + 3 bytes: 13 > 10, so 'a' goes (by UTF-16 units it would be 8 and stay)
    assert.equal(await kv.get('a'), null);
    assert.equal(await kv.get('b'), 'x');
    assert.equal(await kv.get('c'), '€');
    await assert.rejects(kv.set('k', '😀😀😀'), (err: Error) => err instanceof RangeError && /13 bytes .*over the store's maxBytes 10/.test(err.message));
    assert.equal(await kv.get('k'), null);
  });

  test('refuses an oversized value, a long key and a bad ttl with errors naming the plugin and the limit, writing nothing', async () => {
    const name = fresh();
    const kv = await kvOf(name, engineOf(), { maxBytes: 64 * MIB });
    await assert.rejects(kv.set('huge', ascii(8 * MIB + 1)), (err: Error) =>
      err instanceof RangeError && err.message === `plugin "${name}": kv set of "huge": the value is ${8 * MIB + 1} bytes (UTF-8), over the 8 MiB limit`);
    // 3-byte characters: 2.9 M of them are under 8 MiB as UTF-16, over it as UTF-8.
    await assert.rejects(kv.set('huge', '€'.repeat(2_900_000)), /the value is 8700000 bytes \(UTF-8\), over the 8 MiB limit/);
    assert.equal(await kv.get('huge'), null);
    await assert.rejects(kv.set('x'.repeat(513), 'v'), /is 513 characters, over the 512-character limit/);
    await kv.set('😀'.repeat(512), 'v'); // 512 characters (1,024 UTF-16 units): allowed
    assert.equal(await kv.get('😀'.repeat(512)), 'v');
    await assert.rejects(kv.set('', 'v'), /must not be empty/);
    await assert.rejects(kv.set('a', 42 as unknown as string), (err: Error) => err instanceof TypeError && /must be a string \(serialize JSON yourself\)/.test(err.message));
    await assert.rejects(kv.set('a', 'v', { ttlMs: 0 }), /ttlMs must be a positive number of ms, got 0/);
    await assert.rejects(kv.set('a', 'v', { ttlMs: Number.NaN }), /got NaN/);
    assert.equal(await kv.get('a'), null);
  });

  test('kv() called twice returns the same store, the first options applying; a bad maxBytes throws', async () => {
    const ctx = await sdkContext(fresh(), engineOf());
    const first = ctx.kv({ maxBytes: 10 });
    assert.equal(ctx.kv({ maxBytes: 1_000 }), first);
    await assert.rejects(first.set('key', ascii(10)), /over the store's maxBytes 10/);
    const other = await sdkContext(fresh(), engineOf());
    assert.throws(() => other.kv({ maxBytes: 0 }), (err: Error) => err instanceof RangeError && /kv\(\{ maxBytes \}\) must be a positive whole number of bytes, got 0/.test(err.message));
    assert.throws(() => other.kv({ maxBytes: 1.5 }), RangeError);
  });
}

describe(`plugin kv on the database (${TEST_STORE_ENGINE})`, () => {
  const clock = testClock();
  let dataDir: string;
  let store: Store;
  let engine: DatabaseKvEngine;
  before(async () => {
    dataDir = tempDir();
    store = await openTestStore(dataDir);
    engine = createDatabaseKv(store, { clock: clock.now, leases: localLeases, log: silent, sweepBatch: 2 });
  });
  after(async () => {
    await engine?.close();
    await store?.close();
  });

  commonCases(() => engine, () => clock.advance(1));

  /** The plugin's rows as the database has them, and its running total. */
  async function rowsOf(plugin: string) {
    const rows = await store.db.selectFrom('plugin_kv').select(['key', 'size_bytes']).where('plugin', '=', plugin).orderBy('key').execute();
    const total = await store.db.selectFrom('plugin_kv_totals').select('bytes').where('plugin', '=', plugin).executeTakeFirst();
    return { keys: rows.map((r) => r.key), sum: rows.reduce((s, r) => s + Number(r.size_bytes), 0), total: Number(total?.bytes ?? 0) };
  }

  test('an entry expires ttlMs after it was set by the gateway clock, and the sweep deletes expired rows in bounded batches', async () => {
    const kv = await kvOf('ttl-db', engine, undefined, clock.now);
    await kv.set('t', 'v', { ttlMs: 1_000 });
    clock.advance(999);
    assert.equal(await kv.get('t'), 'v');
    clock.advance(1);
    assert.equal(await kv.get('t'), null, 'expired at exactly ttlMs');
    // Setting again without a TTL keeps it for good.
    await kv.set('t', 'forever');
    clock.advance(10_000_000);
    assert.equal(await kv.get('t'), 'forever');
    for (const key of ['e1', 'e2', 'e3']) await kv.set(key, 'v', { ttlMs: 5 });
    assert.equal((await rowsOf('ttl-db')).keys.length, 4);
    clock.advance(5);
    assert.equal(await engine.sweep(), 2, 'one sweep deletes sweepBatch rows at most');
    assert.equal(await engine.sweep(), 1);
    assert.equal(await engine.sweep(), 0);
    const after = await rowsOf('ttl-db');
    assert.deepEqual(after.keys, ['t']);
    assert.equal(after.total, after.sum, 'the running total follows the sweep');
  });

  test('expired entries are dropped before live ones when a set is over the bound', async () => {
    const kv = await kvOf('expired-first', engine, { maxBytes: 20 }, clock.now);
    await kv.set('live', ascii(6)); // 10 bytes, oldest
    clock.advance(1);
    await kv.set('gone', ascii(6), { ttlMs: 1 });
    clock.advance(1);
    await kv.set('next', ascii(6)); // 30 > 20: the expired one goes, the oldest live one stays
    assert.equal(await kv.get('live'), ascii(6));
    assert.deepEqual((await rowsOf('expired-first')).keys, ['live', 'next']);
  });

  test('a gateway hands its SDK plugins a store in its database that outlives a restart', async () => {
    const dir = tempDir();
    const first = await startCounterGateway(dir);
    try {
      assert.equal(await countOf(first.origin), 1);
      assert.equal(await countOf(first.origin), 2);
    } finally {
      await first.close();
    }
    const second = await startCounterGateway(dir);
    try {
      assert.equal(await countOf(second.origin), 3);
      const row = await second.store.db.selectFrom('plugin_kv').select(['plugin', 'key', 'size_bytes']).executeTakeFirstOrThrow();
      assert.deepEqual({ ...row, size_bytes: Number(row.size_bytes) }, { plugin: 'kv-counter', key: 'count', size_bytes: 6 });
    } finally {
      await second.close();
    }
  });

  test('two engines on one database (two replicas) see each other\'s entries and keep the bound exact when both write at once', async () => {
    // The second replica's own connection to the same database: the same file, or the same PostgreSQL database.
    const other = await openTestStore(dataDir);
    const otherEngine = createDatabaseKv(other, { clock: clock.now, leases: localLeases, log: silent });
    try {
      const one = await kvOf('replicas-db', engine, { maxBytes: 1_000 }, clock.now);
      const two = await kvOf('replicas-db', otherEngine, { maxBytes: 1_000 }, clock.now);
      await one.set('hello', 'from one');
      assert.equal(await two.get('hello'), 'from one');
      await two.delete('hello');
      assert.equal(await one.get('hello'), null);
      // 2 × 100 entries of 20 bytes at once: 50 fit.
      await Promise.all([
        ...Array.from({ length: 100 }, (_, i) => one.set(`a${String(i).padStart(3, '0')}`, ascii(16))),
        ...Array.from({ length: 100 }, (_, i) => two.set(`b${String(i).padStart(3, '0')}`, ascii(16))),
      ]);
      const { keys, sum, total } = await rowsOf('replicas-db');
      assert.equal(total, sum);
      assert.equal(sum, 1_000);
      assert.equal(keys.length, 50);
    } finally {
      await otherEngine.close();
      await other.close();
    }
  });
});

describe('plugin kv in Redis', { skip: skipWithoutRedis() }, () => {
  let redis: RedisServer;
  let one: RedisConnection;
  let two: RedisConnection;
  before(async () => {
    redis = await startRedisServer();
    // A loaded machine can take longer than the default 500 ms to answer a script.
    [one, two] = await Promise.all([connectRedis(redis.url, silent, 10_000, undefined, 5_000), connectRedis(redis.url, silent, 10_000, undefined, 5_000)]);
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await redis?.stop();
  });

  commonCases(() => createRedisKv(one), () => {});

  /** What Redis keeps of `plugin`: its live entries' sizes, and the bookkeeping's total and members. */
  async function stateOf(plugin: string) {
    const entries = await one.client.keys(`${kvEntryPrefix(plugin)}*`);
    let sum = 0;
    for (const entry of entries) sum += Buffer.byteLength(entry.slice(kvEntryPrefix(plugin).length)) + Buffer.byteLength((await one.client.get(entry)) ?? '');
    const total = Number((await one.client.get(`tollgate:kv-meta:${plugin}:bytes`)) ?? 0);
    const ordered = await one.client.zcard(`tollgate:kv-meta:${plugin}:order`);
    return { entries: entries.length, sum, total, ordered };
  }

  test('keys live at tollgate:kv:<plugin>:<key>, with a PX ttl when ttlMs is given', async () => {
    const kv = await kvOf('ttl-redis', createRedisKv(one));
    await kv.set('t', 'v', { ttlMs: 60_000 });
    await kv.set('forever', 'v');
    const ttl = await one.client.pttl('tollgate:kv:ttl-redis:t');
    assert.ok(ttl > 0 && ttl <= 60_000, `pttl ${ttl}`);
    assert.equal(await one.client.pttl('tollgate:kv:ttl-redis:forever'), -1);
    // Replacing without a TTL keeps it for good.
    await kv.set('t', 'v2');
    assert.equal(await one.client.pttl('tollgate:kv:ttl-redis:t'), -1);
  });

  test('an expired entry is gone, and the next set forgets its bytes', async () => {
    const kv = await kvOf('expiry-redis', createRedisKv(one));
    await kv.set('short', 'v', { ttlMs: 20 });
    await kv.set('kept', 'v');
    await eventually(async () => assert.equal(await kv.get('short'), null));
    await kv.set('later', 'v');
    const state = await stateOf('expiry-redis');
    assert.equal(state.total, state.sum);
    assert.equal(state.ordered, 2);
  });

  test('two replicas see each other\'s entries and keep the bound exact when both write at once', async () => {
    const first = await kvOf('replicas-redis', createRedisKv(one), { maxBytes: 1_000 });
    const second = await kvOf('replicas-redis', createRedisKv(two), { maxBytes: 1_000 });
    await first.set('hello', 'from one');
    assert.equal(await second.get('hello'), 'from one');
    await second.delete('hello');
    assert.equal(await first.get('hello'), null);
    await Promise.all([
      ...Array.from({ length: 200 }, (_, i) => first.set(`a${String(i).padStart(3, '0')}`, ascii(16))),
      ...Array.from({ length: 200 }, (_, i) => second.set(`b${String(i).padStart(3, '0')}`, ascii(16))),
    ]);
    const state = await stateOf('replicas-redis');
    assert.deepEqual(state, { entries: 50, sum: 1_000, total: 1_000, ordered: 50 });
  });

  test('a gateway whose coordination names Redis keeps its SDK plugins\' entries there, shared by its replicas', async () => {
    const [a, b] = await Promise.all([startCounterGateway(tempDir(), { redis: redis.url, commandTimeoutMs: 5_000 }), startCounterGateway(tempDir(), { redis: redis.url, commandTimeoutMs: 5_000 })]);
    try {
      assert.equal(await countOf(a.origin), 1);
      assert.equal(await countOf(b.origin), 2, 'the second replica (another database) reads what the first wrote');
      assert.equal(await one.client.get('tollgate:kv:kv-counter:count'), '2');
      assert.equal(Number(await a.store.db.selectFrom('plugin_kv').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow().then((r) => r.n)), 0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('every call rejects while Redis is unreachable', async () => {
    const down = await connectRedis(`redis://127.0.0.1:${await freePort()}`, silent, 50, undefined, 200);
    try {
      const kv = await kvOf('unreachable', createRedisKv(down));
      await assert.rejects(kv.get('a'));
      await assert.rejects(kv.set('a', 'v'));
      await assert.rejects(kv.delete('a'));
    } finally {
      await down.close();
    }
  });
});
