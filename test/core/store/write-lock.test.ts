/**
 * Transactions that read before they write take SQLite's write lock first (`lockForWrite`, core/store/store.ts):
 * `resealAll` (`tollgate secret rotate`) and `importPrices` (`tollgate pricing import`). A running
 * gateway writing its log from another connection between their read and their write must not make
 * them fail with "database is locked" (SQLITE_BUSY_SNAPSHOT on a deferred transaction's upgrade, which
 * busy_timeout does not retry). The other connection writes at that exact moment: when the rotation
 * opens the first credential it read (the old keyring's key lookup), when the import reads its first
 * input row (a getter).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openSqlite, type SqliteDatabase } from '../../../core/store/driver-sqlite.ts';
import { databasePath, openDataDir } from '../../../core/store/data-dir.ts';
import { sqliteStoreOf } from '../../../core/store/store.ts';
import { createGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createKeyring, type Keyring } from '../../../core/accounts/secret-box.ts';
import { listProviderCredentials, resealAll, setProviderCredential } from '../../../core/accounts/provider-credentials.ts';
import { importPrices } from '../../../core/money/price-table.ts';
import { tempDir } from '../../helpers/tmp.ts';

test('a rotation is not failed by another connection writing while it runs', async () => {
  const dataDir = tempDir();
  const store = sqliteStoreOf(openDataDir(dataDir), 'this test');
  const gateway = openSqlite(databasePath(dataDir));
  try {
    const oldKeyring = createKeyring(randomBytes(32));
    const user = await createGatewayUser(store.db, { name: 'rotating' });
    await setProviderCredential(store.db, oldKeyring, { gatewayUserId: user.id, provider: 'openai', apiKey: 'sk-rotate-0123456789' });
    await setProviderCredential(store.db, oldKeyring, { gatewayUserId: user.id, provider: 'mistral', apiKey: 'mi-rotate-0123456789' });

    const gatewayWrite = otherWriter(gateway, user.id);
    const all = new Map(oldKeyring.all);
    const lookup = all.get.bind(all);
    all.get = (id: string) => {
      gatewayWrite.once();
      return lookup(id);
    };
    const from: Keyring = { current: oldKeyring.current, all };
    const to = createKeyring(randomBytes(32), [oldKeyring.current.key]);

    assert.equal(await resealAll(store.db, from, to), 2);
    assert.equal(gatewayWrite.outcome, 'refused', 'the other writer waits for the rotation (here: is refused at once)');
    const rows = await listProviderCredentials(store.db, user.id);
    assert.equal(rows.length, 2);
    const keyIds = store.sqlite.prepare('SELECT DISTINCT key_id FROM provider_credentials').pluck().all();
    assert.deepEqual(keyIds, [to.current.id], 'every credential is sealed under the new key');
  } finally {
    gateway.close();
    await store.close();
  }
});

test('a price import is not failed by another connection writing while it runs', async () => {
  const dataDir = tempDir();
  const store = sqliteStoreOf(openDataDir(dataDir), 'this test');
  const gateway = openSqlite(databasePath(dataDir));
  try {
    const user = await createGatewayUser(store.db, { name: 'importing' });
    const gatewayWrite = otherWriter(gateway, user.id);
    const first = {
      provider: 'openai', input_price_per_million: 1, output_price_per_million: 2,
      get model() {
        gatewayWrite.once();
        return 'lock-test-model';
      },
    };
    const result = await importPrices(store.db, [first, { model: 'lock-test-other', provider: 'openai', input_price_per_million: 3, output_price_per_million: 4 }]);
    assert.equal(result.inserted, 2);
    assert.equal(gatewayWrite.outcome, 'refused', 'the other writer waits for the import (here: is refused at once)');
    const models = store.sqlite.prepare("SELECT model FROM model_pricing WHERE model LIKE 'lock-test-%' ORDER BY model").pluck().all();
    assert.deepEqual(models, ['lock-test-model', 'lock-test-other']);
  } finally {
    gateway.close();
    await store.close();
  }
});

/**
 * The "gateway": another connection that writes without waiting (busy_timeout 0). `once()` makes its
 * one write (later calls do nothing); `outcome` says whether it committed or SQLite refused it.
 */
function otherWriter(connection: SqliteDatabase, userId: number): { once(): void; readonly outcome: 'committed' | 'refused' | null } {
  connection.pragma('busy_timeout = 0');
  const touch = connection.prepare('UPDATE gateway_users SET name = name WHERE id = ?');
  let outcome: 'committed' | 'refused' | null = null;
  return {
    once() {
      if (outcome !== null) return;
      try {
        touch.run(userId);
        outcome = 'committed';
      } catch (err) {
        assert.equal((err as { code?: string }).code, 'SQLITE_BUSY');
        outcome = 'refused';
      }
    },
    get outcome() {
      return outcome;
    },
  };
}
