/**
 * The budget ledger's first read of a user is shared by concurrent requests. On PostgreSQL the read
 * is asynchronous: when each request made its own, a read that came back late replaced the record
 * and wiped spend an earlier request had settled meanwhile (20 concurrent first requests then missed
 * the 100 % budget alert). Runs on the engine of the run (TOLLGATE_TEST_STORE).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../core/runtime/log.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createWriteBehind } from '../../core/request-log/write-behind.ts';
import { createWriteTarget } from '../../core/request-log/write-target.ts';
import { createBudgetLedger, isReservation } from '../../plugins/budget/ledger.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { tempDir } from '../helpers/tmp.ts';

test('spend settled while other first reads of the user are under way is kept', async () => {
  const store = await openTestStore(tempDir());
  const queue = createWriteBehind(createWriteTarget(store), { batchSize: 100, flushIntervalMs: 10, maxQueueSize: 1_000 }, createLog('error'));
  const user = await createGatewayUser(store.db, { name: 'first-load', budgetUsd: 1, budgetPeriod: 'monthly' });
  const ledger = createBudgetLedger(store, 'UTC', queue);
  const nowMs = Date.now();
  try {
    // Each request settles as soon as its own reservation is granted, as a fast upstream lets it.
    const settledNanos = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const reservation = await ledger.reserve(user.id, 1_000, nowMs);
      assert.ok(isReservation(reservation));
      ledger.settle(reservation, 1_000 + i, nowMs, `req_${i}`);
      return 1_000 + i;
    }));
    const status = await ledger.status(user.id, nowMs);
    assert.equal(status?.spentNanos, settledNanos.reduce((a, b) => a + b, 0));
    assert.equal(status?.reservedNanos, 0);
  } finally {
    await ledger.close();
    await queue.close();
    await store.close();
  }
});
