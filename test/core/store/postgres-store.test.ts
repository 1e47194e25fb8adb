/**
 * The PostgreSQL store on a real PostgreSQL 15: `schema.sql`'s PostgreSQL migrations give the same
 * tables and columns as SQLite's, migrate once when several replicas start together, read bigint
 * sums back as numbers, keep the usage of a deleted user (the detach trigger), and carry change
 * notifications from one process's store to another's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore, readMigrations } from '../../../core/store/store.ts';
import { openPostgresStore, redactDatabaseUrl } from '../../../core/store/store-postgres.ts';
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { cliJson } from '../../helpers/cli.ts';
import { createMetricsRegistry } from '../../../core/runtime/metrics.ts';
import { startGateway } from '../../../core/gateway.ts';
import { validateManifest } from '../../../core/manifest.ts';
import { defaultManifest } from '../../../core/default-manifest.ts';
import { pluginRegistry } from '../../../plugins/index.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { eventually } from '../../helpers/eventually.ts';

const skip = skipWithoutPostgres();
let server: PostgresServer;

before(async () => {
  if (!skip) server = await startPostgresServer();
});
after(async () => {
  await server?.stop();
});

describe('PostgreSQL store', { skip }, () => {
  test('has the tables and columns of the SQLite schema, at the same version', async () => {
    const sqlite = openStore(join(tempDir(), 'tollgate.db'));
    const pgStore = await openPostgresStore(await server.createDatabase());
    try {
      assert.equal(pgStore.schemaVersion, sqlite.schemaVersion);
      assert.equal(pgStore.engine, 'postgres');
      const sqliteTables = sqlite.sqlite.prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((r) => r.name);
      const pgTables = (await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name <> 'tollgate_schema' ORDER BY table_name`.execute(pgStore.db)).rows.map((r) => r.table_name);
      assert.deepEqual(pgTables, sqliteTables);
      for (const table of sqliteTables) {
        const sqliteColumns = sqlite.sqlite.prepare<[], { name: string; notnull: number }>(`PRAGMA table_info(${table})`).all()
          .map((c) => `${c.name}${c.notnull ? ' not null' : ''}`).sort();
        const pgColumns = (await sql<{ column_name: string; is_nullable: string }>`SELECT column_name, is_nullable FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = ${table}`.execute(pgStore.db)).rows
          .map((c) => `${c.column_name}${c.is_nullable === 'NO' ? ' not null' : ''}`).sort();
        // SQLite's INTEGER PRIMARY KEY may be declared without NOT NULL; PostgreSQL's always is.
        assert.deepEqual(pgColumns.map((c) => c.replace(/^id not null$/, 'id')), sqliteColumns.map((c) => c.replace(/^id not null$/, 'id')), table);
      }
    } finally {
      await sqlite.close();
      await pgStore.close();
    }
  });

  test('replicas starting together migrate once', async () => {
    const url = await server.createDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url)));
    try {
      const latest = readMigrations('postgres').at(-1)!.version;
      for (const store of stores) assert.equal(store.schemaVersion, latest);
      const rows = (await sql<{ version: number }>`SELECT version FROM tollgate_schema`.execute(stores[0]!.db)).rows;
      assert.deepEqual(rows, [{ version: latest }]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test('reads bigint columns and sums as numbers; a deleted user’s usage moves to user 0', async () => {
    const store = await openPostgresStore(await server.createDatabase());
    try {
      const now = new Date().toISOString();
      const { id } = await store.db.insertInto('gateway_users').values({ name: 'alice', created_at: now, updated_at: now, budget_spent_nanos: 2 ** 40 })
        .returning('id').executeTakeFirstOrThrow();
      assert.equal(typeof id, 'number');
      const row = { bucket_start: '2026-11-25T10:00:00.000Z', provider: 'openai', model_requested: 'm', model_served: 'm', requests: 2, errors: 0,
        prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, cost_nanos: 3_000_000_000_000, ttft_count: 2, unpriced_requests: 0, last_unpriced_at: null };
      await store.db.insertInto('usage_rollups').values([{ ...row, gateway_user_id: id }, { ...row, gateway_user_id: 0 }]).execute();
      const user = await store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(user.budget_spent_nanos, 2 ** 40);
      await store.db.deleteFrom('gateway_users').where('id', '=', id).execute();
      const sums = await store.db.selectFrom('usage_rollups').select([
        sql<number>`sum(cost_nanos)`.as('cost'), sql<number>`count(*)`.as('rows'), sql<number>`min(gateway_user_id)`.as('user'),
      ]).executeTakeFirstOrThrow();
      assert.deepEqual(sums, { cost: 6_000_000_000_000, rows: 1, user: 0 });
    } finally {
      await store.close();
    }
  });

  test('a change notified by one process reaches the other’s listeners', async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
    try {
      let heardByA = 0;
      let sentByA = 0;
      a.onExternalChange(() => heardByA++);
      const heard = new Promise<void>((resolve) => b.onExternalChange(resolve));
      // B's feed connects in the background: notify until it hears one.
      const timer = setInterval(() => {
        sentByA++;
        a.notifyChange();
      }, 50);
      await heard;
      clearInterval(timer);
      // A's own listeners were told once per change, at once, and not a second time through the server.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(heardByA, sentByA);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('a CLI command that only reads tells the running gateways nothing; one that writes tells them', async () => {
    const url = await server.createDatabase();
    const [gateway, other] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
    try {
      const cli = (args: string[]) => cliJson(args, { dataDir: tempDir(), env: { TOLLGATE_DATABASE_URL: url } });
      // Written before the gateway listens: its notification reaches no one, so none can arrive late
      // and be counted below (as one did after a fixed 200 ms wait on a busy machine).
      await cli(['users', 'create', '--name', 'ada']);
      let heard = 0;
      let waiter: (() => void) | null = null;
      gateway.onExternalChange(() => {
        heard++;
        waiter?.();
      });
      const nextChange = () => new Promise<void>((resolve) => (waiter = resolve));
      // The feed connects in the background: wait until its connection has run its LISTEN (PostgreSQL
      // shows each session's last statement), with nothing notified meanwhile.
      await eventually(async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and query = 'LISTEN tollgate_changes'`.execute(other.db);
        assert.equal(rows[0]?.n, 1, 'the feed listens');
      });
      for (const args of [['users', 'list'], ['users', 'show', 'ada'], ['keys', 'list'], ['pricing', 'list'], ['models', 'list'], ['admins', 'list']]) await cli(args);
      // Notifications arrive in the order they were sent: once this one is heard, any a read had sent was too.
      const marker = nextChange();
      other.notifyChange();
      await marker;
      assert.equal(heard, 1, 'only the marker was heard: the read-only commands notified nothing');
      const updated = nextChange();
      await cli(['users', 'update', 'ada', '--rpm', '5']);
      await updated;
      assert.equal(heard, 2);
    } finally {
      await Promise.all([gateway.close(), other.close()]);
    }
  });

  test('a NUL in a string parameter is stored as U+FFFD and finds nothing, never an error', async () => {
    const store = await openPostgresStore(await server.createDatabase());
    try {
      const now = new Date().toISOString();
      await store.db.insertInto('gateway_users').values({ name: 'nul\u0000name', created_at: now, updated_at: now }).execute();
      const row = await store.db.selectFrom('gateway_users').select('name').executeTakeFirstOrThrow();
      assert.equal(row.name, 'nul\uFFFDname');
      assert.equal(await store.db.selectFrom('api_keys').select('id').where('key_hash', '=', '\u0000').executeTakeFirst(), undefined);
    } finally {
      await store.close();
    }
  });

  test('/readyz and /metrics: queries are timed and counted; the server stopped reads as down, back as ready', async () => {
    const own = await startPostgresServer();
    const metrics = createMetricsRegistry();
    const store = await openPostgresStore(await own.createDatabase(), { metrics, healthProbeMs: 50 });
    const until = async (status: string) => {
      // A liveness bound (30 s), generous for a busy machine.
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && store.readiness().status !== status;) await new Promise((r) => setTimeout(r, 25));
      return store.readiness();
    };
    try {
      await store.db.selectFrom('gateway_users').select('id').execute();
      const text = await metrics.metrics();
      assert.match(text, /tollgate_store_query_seconds_count [1-9]/);
      assert.deepEqual(store.readiness(), { engine: 'postgres', status: 'ready' });
      await own.stop();
      assert.deepEqual(await until('down'), { engine: 'postgres', status: 'down' });
      await assert.rejects(store.db.selectFrom('gateway_users').select('id').execute());
      assert.match(await metrics.metrics(), /tollgate_store_query_errors_total [1-9]/);
      await own.start();
      assert.deepEqual(await until('ready'), { engine: 'postgres', status: 'ready' });
    } finally {
      await store.close();
      await own.stop();
    }
  });

  test('three gateways started together on a new database all come up: one admin, one price seed', async () => {
    const url = await server.createDatabase();
    const manifest = validateManifest(defaultManifest, pluginRegistry, { env: {} });
    const gateways = await Promise.all([1, 2, 3].map(() => startGateway({
      manifest, registry: pluginRegistry, dataDir: tempDir(), port: 0, host: '127.0.0.1',
      env: { TOLLGATE_DATABASE_URL: url, TOLLGATE_ADMIN_PASSWORD: 'a long admin password' }, log: createLog('error', () => {}),
    })));
    try {
      assert.equal(gateways.filter((g) => g.bootstrapAdmin !== null).length, 1, 'exactly one created the admin');
      const admins = await gateways[0]!.store.db.selectFrom('admin_users').select('username').execute();
      assert.deepEqual(admins, [{ username: 'admin' }]);
      for (const g of gateways) assert.equal((await fetch(`${g.origin}/readyz`)).status, 200);
    } finally {
      await Promise.all(gateways.map((g) => g.close()));
    }
  });

  test('logs show the URL without its password', () => {
    assert.equal(redactDatabaseUrl('postgres://u:secret@db:5432/x'), 'postgres://u:***@db:5432/x');
  });
});
