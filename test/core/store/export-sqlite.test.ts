/**
 * `tollgate export-sqlite --to postgres://…` on a real PostgreSQL 15: every row of a single-node
 * install (users, keys, admins, credentials as bytes, log rows with their rollups, responses, alerts)
 * arrives with its id, new rows get ids past the copied ones, `tollgate migrate` reports both
 * stores, and a second export into the now non-empty database is refused without touching it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openStore, nowIso } from '../../../core/store/store.ts';
import { openPostgresStore } from '../../../core/store/store-postgres.ts';
import { createGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import { createAdmin } from '../../../core/accounts/admin-users.ts';
import { setProviderCredential } from '../../../core/accounts/provider-credentials.ts';
import { createKeyring } from '../../../core/accounts/secret-box.ts';
import { EXPORT_TABLES } from '../../../core/store/export-sqlite.ts';
import { createPortalSessionStore } from '../../../core/portal/portal-sessions.ts';
import { writeLogRows } from '../../helpers/log-rows.ts';
import { runCli } from '../../helpers/cli.ts';
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';
import { tempDir } from '../../helpers/tmp.ts';

const skip = skipWithoutPostgres();
let server: PostgresServer;

before(async () => {
  if (!skip) server = await startPostgresServer();
});
after(async () => {
  await server?.stop();
});

/** Every row of every exported table, as plain objects ordered by their columns. */
async function snapshot(store: { db: import('kysely').Kysely<import('../../../core/store/db-types.ts').Database> }) {
  const out: Record<string, unknown[]> = {};
  for (const table of EXPORT_TABLES) {
    const rows = await store.db.selectFrom(table).selectAll().execute();
    out[table] = rows
      // plugin_kv.value is text in SQLite, its UTF-8 bytes in PostgreSQL (schema.sql v18).
      .map((row) => JSON.stringify(Object.entries(row).sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString(table === 'plugin_kv' ? 'utf8' : 'hex') : v])))
      .sort();
  }
  return out;
}

describe('tollgate export-sqlite', { skip }, () => {
  test('copies every row with its id; new ids follow; a second export is refused', async () => {
    const dataDir = tempDir();
    const sqlite = openStore(join(dataDir, 'tollgate.db'));
    const alice = await createGatewayUser(sqlite.db, { name: 'alice', budgetUsd: 5 });
    const bob = await createGatewayUser(sqlite.db, { name: 'bob' });
    const key = await createApiKey(sqlite.db, { gatewayUserId: alice.id, name: 'laptop' });
    await createAdmin(sqlite.db, 'root', 'a long admin password');
    await createPortalSessionStore(sqlite, Date.now, { idleMs: 60_000, maxMs: 60_000 }).create(alice.id, { ip: null, userAgent: null });
    await setProviderCredential(sqlite.db, createKeyring(randomBytes(32)), { gatewayUserId: bob.id, provider: 'openai', apiKey: 'sk-bob-secret' });
    await writeLogRows(sqlite, Array.from({ length: 2_500 }, (_, i) => ({
      gateway_user_id: i % 2 ? alice.id : bob.id, api_key_id: i % 2 ? key.id : null, cost_nanos: i, status: i % 10 ? 200 : 500,
      created_at: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
    })));
    const now = nowIso();
    await sqlite.db.insertInto('responses').values({ gateway_user_id: alice.id, id: 'resp_1', created_at: now, expires_at: now, model: 'm', provider: 'openai',
      served_natively: 0, previous_response_id: null, input_items: '[]', response: '{}' }).execute();
    await sqlite.db.insertInto('response_items').values({ gateway_user_id: alice.id, item_id: 'msg_1', response_id: 'resp_1' }).execute();
    await sqlite.db.insertInto('budget_alerts').values({ gateway_user_id: alice.id, period_start: now, threshold_percent: 80, fired_at: now,
      payload: '{}', state: 'unsent', attempts: 0, next_attempt_at: null, delivered_at: null, last_error: null }).execute();
    // A value bytea's escape format would misread (a backslash), a NUL text cannot hold, and UTF-8.
    await sqlite.db.insertInto('plugin_kv').values([
      { plugin: 'cache', key: 'k1', value: '{"a":"\\x41"}\u0000é😀', size_bytes: 20, expires_at: null, written_at: 1 },
      { plugin: 'cache', key: 'k2', value: 'v', size_bytes: 3, expires_at: 5, written_at: 2 },
    ]).execute();
    const expected = await snapshot(sqlite);
    await sqlite.close();
    assert.equal(expected.llm_requests!.length, 2_500);
    assert.ok(expected.usage_rollups!.length > 2, 'the log rows have rollups to copy');

    const url = await server.createDatabase();
    const run = await runCli(['export-sqlite', '--to', url, '--json'], { dataDir, env: { TOLLGATE_DATABASE_URL: '' } });
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as { tables: Record<string, number>; to: string };
    assert.equal(report.tables.llm_requests, 2_500);
    assert.equal(report.to, url);

    const pg = await openPostgresStore(url);
    try {
      assert.deepEqual(await snapshot(pg), expected);
      const totals = await pg.db.selectFrom('plugin_kv_totals').selectAll().execute();
      assert.deepEqual(totals, [{ plugin: 'cache', bytes: 23 }], 'the triggers counted the copied entries');
      const carol = await createGatewayUser(pg.db, { name: 'carol' });
      assert.ok(carol.id > bob.id, `a new user gets an id past the copied ones (${carol.id})`);
    } finally {
      await pg.close();
    }

    const migrate = await runCli(['migrate', '--json'], { dataDir, env: { TOLLGATE_DATABASE_URL: url } });
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.equal((JSON.parse(migrate.stdout) as { engine: string }).engine, 'postgres');

    const again = await runCli(['export-sqlite', '--to', url], { dataDir, env: { TOLLGATE_DATABASE_URL: '' } });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not empty \(table gateway_users has rows\)/);
  });
});
