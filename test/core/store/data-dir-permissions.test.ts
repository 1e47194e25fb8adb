/**
 * The data directory and the database files are owner-only (issue 14 item 13): a fresh install is
 * created 0700 / 0600 whatever the umask, and an existing world-readable install is tightened at
 * start with a log line per path.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openDataDir, databasePath } from '../../../core/store/data-dir.ts';
import { openStore, sqliteStoreOf } from '../../../core/store/store.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { TEST_STORE_ENGINE } from '../../helpers/test-store.ts';

/** POSIX modes of the SQLite files: nothing to check on Windows, nor on PostgreSQL runs (the database is the server's). */
const skip = process.platform === 'win32'
  ? 'no POSIX file modes on Windows'
  : TEST_STORE_ENGINE === 'postgres' ? 'SQLite-only: file modes of tollgate.db and its -wal/-shm; a PostgreSQL run keeps no database file in the data dir' : false;
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
let umaskBefore: number;

before(() => {
  // The usual default: files 0644, directories 0755 unless the gateway sets its own modes.
  umaskBefore = process.umask(0o022);
});
after(() => process.umask(umaskBefore));

test('a fresh data dir is 0700 and tollgate.db, its -wal and -shm are 0600', { skip }, async () => {
  const dataDir = join(tempDir(), 'data');
  const store = sqliteStoreOf(openDataDir(dataDir), 'this test');
  try {
    store.sqlite.exec("INSERT INTO gateway_users (name, created_at, updated_at) VALUES ('perm-test', '2026-01-01', '2026-01-01')");
    const file = databasePath(dataDir);
    assert.equal(modeOf(dataDir), '700');
    assert.equal(modeOf(file), '600');
    assert.equal(modeOf(`${file}-wal`), '600');
    assert.equal(modeOf(`${file}-shm`), '600');
  } finally {
    await store.close();
  }
  assert.equal(process.umask(0o022), 0o022, 'the umask is restored');
});

test('an existing world-readable install is tightened at start and each change is logged', { skip }, async () => {
  const dataDir = join(tempDir(), 'data');
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  const file = databasePath(dataDir);
  const old = openStore(file);
  old.sqlite.exec("INSERT INTO gateway_users (name, created_at, updated_at) VALUES ('perm-test', '2026-01-01', '2026-01-01')");
  chmodSync(file, 0o644);
  chmodSync(`${file}-wal`, 0o644);
  assert.equal(modeOf(file), '644');

  const warnings: Array<{ msg: string; fields: Record<string, unknown> | undefined }> = [];
  const store = openDataDir(dataDir, { warn: (msg, fields) => warnings.push({ msg, fields }) });
  try {
    assert.equal(modeOf(dataDir), '700');
    assert.equal(modeOf(file), '600');
    assert.equal(modeOf(`${file}-wal`), '600');
    assert.deepEqual(
      warnings.map((w) => w.fields).sort((a, b) => String(a?.path).localeCompare(String(b?.path))),
      [
        { path: dataDir, fromMode: '755', toMode: '700' },
        { path: file, fromMode: '644', toMode: '600' },
        { path: `${file}-shm`, fromMode: '644', toMode: '600' },
        { path: `${file}-wal`, fromMode: '644', toMode: '600' },
      ],
    );
    assert.match(warnings[0]!.msg, /permissions/);
  } finally {
    await store.close();
    await old.close();
  }
});
