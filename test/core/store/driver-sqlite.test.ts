/**
 * Every SQLite connection gets SQLite's own 2 MB page cache, not better-sqlite3's build default of
 * 16 MB (`core/store/driver-sqlite.ts` says why): the gateway's store, a read-only connection (the CSV
 * export's) and one opened by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadSqliteDriver, openSqlite, SQLITE_PACKAGE } from '../../../core/store/driver-sqlite.ts';
import { openStore } from '../../../core/store/store.ts';
import { tempDir } from '../../helpers/tmp.ts';

const cacheSizeOf = (sqlite: { pragma(source: string, options: { simple: true }): unknown }) => sqlite.pragma('cache_size', { simple: true });

test('the store, a read-only connection and a plain one have a 2 MB page cache', async () => {
  const file = join(tempDir(), 'tollgate.db');
  const store = openStore(file);
  const readOnly = openSqlite(file, { readonly: true, fileMustExist: true });
  const plain = openSqlite(':memory:');
  try {
    // Negative: KiB (SQLite's PRAGMA cache_size convention); better-sqlite3's build default is -16000.
    assert.equal(cacheSizeOf(store.sqlite), -2000);
    assert.equal(cacheSizeOf(readOnly), -2000);
    assert.equal(cacheSizeOf(plain), -2000);
  } finally {
    plain.close();
    readOnly.close();
    await store.close();
  }
});

test('a driver package that is not installed (node_modules from an older Node) says to run npm install again', () => {
  assert.throws(() => loadSqliteDriver('better-sqlite3-not-installed'), (err: Error) => {
    assert.equal(err.message, `the SQLite driver better-sqlite3-not-installed is not installed for Node ${process.versions.node}: node_modules was installed on another Node version; run \`npm install\` again with this one`);
    return true;
  });
  assert.equal(typeof loadSqliteDriver(SQLITE_PACKAGE), 'function');
});
