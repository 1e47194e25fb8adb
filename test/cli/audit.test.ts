/**
 * `tollgate audit verify|list` and the CLI's own audit rows (issue 43, item 4), as child processes on a
 * real database: the CLI's writes are recorded as `cli:<os user>`; editing a row's `after` or deleting
 * a row in the database (the append-only trigger dropped or disabled first, as an intruder with the
 * file would) makes `verify` exit 1 and name that row.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openTestStore, TEST_STORE_ENGINE } from '../helpers/test-store.ts';
import { appendAudit } from '../../core/audit/append.ts';
import { verifyAuditChain } from '../../core/audit/verify.ts';

const PROVIDER_KEY = 'sk-ant-cli-audit-secret-0123456789';

/**
 * A data dir whose audit log holds five rows, appended in this process through `appendAudit` (what the
 * CLI and the admin router call): each CLI run costs seconds, and the CLI's own rows are tested below.
 */
async function auditedDataDir(): Promise<string> {
  const dataDir = tempDir();
  const store = await openTestStore(dataDir);
  try {
    for (let i = 1; i <= 5; i++) {
      await appendAudit(store, { actor: 'admin', actorKind: 'admin', role: 'admin', ip: '127.0.0.1', action: 'users.update', objectType: 'user', objectId: i, before: { budget_limit_usd: i }, after: { budget_limit_usd: i + 1 } });
    }
  } finally {
    await store.close();
  }
  return dataDir;
}

/** Runs `sqlText` on the data dir's database with the append-only guard off (SQLite: better-sqlite3 on the file itself). */
async function tamper(dataDir: string, sqlText: string): Promise<void> {
  if (TEST_STORE_ENGINE === 'sqlite') {
    const db = new Database(join(dataDir, 'tollgate.db'));
    try {
      db.exec('DROP TRIGGER IF EXISTS audit_log_no_update; DROP TRIGGER IF EXISTS audit_log_no_delete;');
      db.exec(sqlText);
    } finally {
      db.close();
    }
    return;
  }
  const store = await openTestStore(dataDir);
  try {
    await sql.raw('ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_change').execute(store.db);
    await sql.raw(sqlText).execute(store.db);
  } finally {
    await store.close();
  }
}

describe('the CLI writes audit rows', () => {
  test('each state-changing command records one row as cli:<os user>, with no secret in it; verify says the chain is intact', async () => {
    const dataDir = tempDir();
    await cliJson(['users', 'create', '--name', 'alice', '--budget', '5'], { dataDir });
    await cliJson(['users', 'update', 'alice', '--budget', '9'], { dataDir });
    const key = await cliJson<{ id: number; key: string }>(['keys', 'create', '--user', 'alice'], { dataDir });
    await cliJson(['keys', 'revoke', String(key.id)], { dataDir });
    await cliJson(['credentials', 'set', '--user', 'alice', '--provider', 'anthropic', '--api-key-stdin'], { dataDir, input: PROVIDER_KEY });
    await cliJson(['admins', 'create', '--username', 'ops', '--password-stdin'], { dataDir, input: 'a long enough admin password' });
    const rows = await cliJson<any[]>(['audit', 'list'], { dataDir });
    assert.deepEqual(rows.map((r) => r.action), ['admins.create', 'credentials.set', 'keys.revoke', 'keys.create', 'users.update', 'users.create']);
    for (const row of rows) {
      assert.equal(row.actor, `cli:${userInfo().username}`);
      assert.equal(row.actor_kind, 'cli');
      assert.equal(row.role, null);
      assert.equal(row.ip, null);
    }
    const update = rows.find((r) => r.action === 'users.update');
    assert.equal(update.before.budget_limit_usd, 5);
    assert.equal(update.after.budget_limit_usd, 9);
    assert.equal(rows.find((r) => r.action === 'keys.create').object_id, String(key.id));
    const text = JSON.stringify(rows);
    for (const secret of [PROVIDER_KEY, key.key, 'a long enough admin password']) assert.ok(!text.includes(secret), text);
    const verify = await runCli(['audit', 'verify'], { dataDir });
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(verify.stdout, '6 rows, chain intact.\n');
  });
});

/** `verifyAuditChain` on the data dir's store, in this process. */
async function verifyStore(dataDir: string) {
  const store = await openTestStore(dataDir);
  try {
    return await verifyAuditChain(store);
  } finally {
    await store.close();
  }
}

describe('tampering is found', () => {
  test('the append-only guard refuses an edit and a delete', async () => {
    const dataDir = await auditedDataDir();
    const store = await openTestStore(dataDir);
    try {
      await assert.rejects(store.db.updateTable('audit_log').set({ after: '{}' }).where('id', '=', 2).execute(), /append-only/);
      await assert.rejects(store.db.deleteFrom('audit_log').where('id', '=', 2).execute(), /append-only/);
    } finally {
      await store.close();
    }
    assert.deepEqual(await verifyStore(dataDir), { ok: true, rows: 5, firstBadId: null, reason: null });
  });

  test("editing a row's after makes verify exit 1 naming that row", async () => {
    const dataDir = await auditedDataDir();
    await tamper(dataDir, `UPDATE audit_log SET after = '{"budget_limit_usd":1000}' WHERE id = 3`);
    const json = await runCli(['audit', 'verify', '--json'], { dataDir });
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout), { ok: false, rows: 2, firstBadId: 3, reason: "row 3's hash does not match its content (edited)" });
  });

  test('a row whose hash was replaced is named', async () => {
    const dataDir = await auditedDataDir();
    await tamper(dataDir, `UPDATE audit_log SET hash = '${'a'.repeat(64)}' WHERE id = 2`);
    const result = await verifyStore(dataDir);
    assert.equal(result.firstBadId, 2);
    assert.match(result.reason!, /row 2's hash does not match/);
  });

  test('deleting a row makes verify exit 1 naming the missing row', async () => {
    const dataDir = await auditedDataDir();
    await tamper(dataDir, 'DELETE FROM audit_log WHERE id = 2');
    const verify = await runCli(['audit', 'verify'], { dataDir });
    assert.equal(verify.code, 1);
    assert.match(verify.stderr, /audit log broken at row 2: row 2 is missing \(deleted\)/);
  });

  test('deleting the newest row is found through the chain head', async () => {
    const dataDir = await auditedDataDir();
    await tamper(dataDir, 'DELETE FROM audit_log WHERE id = 5');
    assert.deepEqual(await verifyStore(dataDir), { ok: false, rows: 4, firstBadId: 5, reason: 'row 5 is missing (deleted): the chain head names it' });
  });
});
