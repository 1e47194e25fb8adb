/**
 * The write-behind queue over the SQLite target, against a real SQLite file: batching, dangling
 * references, the queue bound, refused writes, a locked database, spends with their log rows.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore } from '../../../core/store/store.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createGatewayUser, deleteGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import type { SqliteStore } from '../../../core/store/store.ts';
import type { Log } from '../../../core/runtime/log.ts';
import { REQUEST_LOG_COLUMNS, requestLogValues, type RequestLogRow } from '../../../core/request-log/request-log-row.ts';
import { createWriteBehind, type PendingWrite, type WriteBehindSettings } from '../../../core/request-log/write-behind.ts';
import { createSqliteWriteTarget } from '../../../core/request-log/write-target-sqlite.ts';
import { createBudgetLedger, isReservation, type Reservation } from '../../../plugins/budget/ledger.ts';
import { tempDir } from '../../helpers/tmp.ts';

/** The queue as the logger makes it; `enqueue` takes log rows (`PendingWrite`s through `write`). */
function createRequestLogWriter(store: SqliteStore, settings: WriteBehindSettings, log: Log) {
  const queue = createWriteBehind(createSqliteWriteTarget(store), settings, log);
  return { ...queue, enqueue: (r: RequestLogRow) => queue.enqueue({ kind: 'request', group: r.request_id, row: r }), write: (w: PendingWrite) => queue.enqueue(w) };
}

function row(requestId: string, userId: number | null, keyId: number | null): RequestLogRow {
  return {
    request_id: requestId, gateway_user_id: userId, api_key_id: keyId, provider: 'openai', model_requested: 'openai/m',
    model_served: 'm', status: 200, error_code: null, prompt_tokens: 1, completion_tokens: 2, cached_tokens: 0,
    latency_ms: 3, ttft_ms: 1, stream: 0, created_at: new Date().toISOString(),
    cache_write_tokens: 0, cost_nanos: 150, usage_estimated: 0, unpriced: 0, endpoint: 'chat.completions', attempts: null,
    usage_reported: null, billed_price: null, error_plugin: null, plugin_fields: null, tags: null, upstream_key: null,
  };
}

describe('write-behind queue', () => {
  test('writes queued rows in batches and keeps a row whose user was deleted while it waited', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 2, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'leaver' });
    const key = await createApiKey(store.db, { gatewayUserId: user.id });
    writer.enqueue(row('req_a', user.id, key.id));
    await deleteGatewayUser(store.db, user.id);
    writer.enqueue(row('req_b', user.id, key.id));
    writer.enqueue(row('req_c', null, null));
    assert.equal(writer.depth(), 3);
    assert.equal(writer.flush(), 3);
    assert.equal(writer.depth(), 0);
    const rows = store.sqlite.prepare('SELECT request_id, gateway_user_id, api_key_id FROM llm_requests ORDER BY request_id').all();
    assert.deepEqual(rows, [
      { request_id: 'req_a', gateway_user_id: null, api_key_id: null },
      { request_id: 'req_b', gateway_user_id: null, api_key_id: null },
      { request_id: 'req_c', gateway_user_id: null, api_key_id: null },
    ]);
    await writer.close();
    await store.close();
  });

  test('a full queue drops its oldest rows and says so in the server log', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 1_000, flushIntervalMs: 60_000, maxQueueSize: 3 }, createLog('debug', (l) => lines.push(l)));
    for (const id of ['r1', 'r2', 'r3', 'r4', 'r5']) writer.enqueue(row(id, null, null));
    assert.equal(writer.depth(), 3);
    assert.equal(writer.status().dropped, 2);
    await writer.close();
    const ids = store.sqlite.prepare('SELECT request_id FROM llm_requests ORDER BY request_id').pluck().all();
    assert.deepEqual(ids, ['r3', 'r4', 'r5']);
    assert.ok(lines.some((l) => l.includes('write-behind queue full')));
    await store.close();
  });

  test('a row the database refuses for good is dropped and logged without blocking the rows behind it', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 10, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    writer.enqueue(row('before', null, null));
    await writer.flush();
    writer.enqueue({ ...row('bad', null, null), prompt_tokens: 1.5 }); // the STRICT INTEGER column refuses it: can never be written
    writer.enqueue(row('after', null, null));
    await writer.flush();
    assert.equal(writer.depth(), 0);
    const ids = store.sqlite.prepare('SELECT request_id FROM llm_requests ORDER BY id').pluck().all();
    assert.deepEqual(ids, ['before', 'after']);
    assert.ok(lines.some((l) => l.includes('write dropped') && l.includes('"group":"bad"')));
    await writer.close();
    await store.close();
  });

  test('a request queued again after it was stored (a retried batch) is skipped with its spend: nothing counts twice', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const writer = createRequestLogWriter(store, { batchSize: 10, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('error', () => {}));
    const user = await createGatewayUser(store.db, { name: 'twice' });
    const period = '2026-11-01T00:00:00.000Z';
    const unit = (id: string) => {
      writer.write({ kind: 'request', group: id, row: row(id, user.id, null) });
      writer.write({ kind: 'spend', group: id, userId: user.id, deltaNanos: 150, spentNanos: 150, periodStartIso: period });
    };
    unit('once');
    await writer.flush();
    unit('once');
    unit('new');
    assert.equal(writer.flush(), 4);
    assert.equal(store.sqlite.prepare('SELECT sum(cost_nanos) FROM llm_requests').pluck().get(), 300);
    assert.equal(store.sqlite.prepare('SELECT budget_spent_nanos FROM gateway_users WHERE id = ?').pluck().get(user.id), 300);
    assert.equal(store.sqlite.prepare('SELECT sum(requests) FROM usage_rollups').pluck().get(), 2);
    await writer.close();
    await store.close();
  });

  test('a spend waits for its request\'s log row: a flush between them writes neither, so a crash then loses both', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const queue = createWriteBehind(createSqliteWriteTarget(store), { batchSize: 10, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('error', () => {}), { joinRequests: true });
    const user = await createGatewayUser(store.db, { name: 'joined' });
    const period = '2026-11-01T00:00:00.000Z';
    const spent = () => store.sqlite.prepare('SELECT budget_spent_nanos FROM gateway_users WHERE id = ?').pluck().get(user.id);
    const logged = () => store.sqlite.prepare('SELECT coalesce(sum(cost_nanos), 0) FROM llm_requests').pluck().get();
    // The budget settles (its spend queued), a flush runs before the logger queues the row.
    queue.enqueue({ kind: 'spend', group: 'r1', userId: user.id, deltaNanos: 150, spentNanos: 150, periodStartIso: period });
    await queue.flush();
    assert.equal(spent(), logged(), 'after a crash here, stored spend = logged costs');
    assert.equal(queue.depth(), 1);
    queue.enqueue({ kind: 'request', group: 'r1', row: row('r1', user.id, null) });
    assert.equal(queue.flush(), 2);
    assert.deepEqual([spent(), logged()], [150, 150]);
    // A request that gets no row (the logger logs none): its spend is queued alone when released.
    queue.enqueue({ kind: 'spend', group: 'r2', userId: user.id, deltaNanos: 50, spentNanos: 200, periodStartIso: period });
    queue.release('r2');
    assert.equal(queue.flush(), 1);
    assert.equal(spent(), 200);
    await queue.close();
    await store.close();
  });

  test('rows wait in the queue while the database is locked by another connection; the outage is logged once, and its end', async () => {
    const file = join(tempDir(), 'log.db');
    const store = openStore(file);
    store.sqlite.pragma('busy_timeout = 0');
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 10, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    const other = openStore(file);
    other.sqlite.exec('BEGIN IMMEDIATE');
    writer.enqueue(row('waits', null, null));
    assert.equal(writer.flush(), 0);
    assert.equal(writer.depth(), 1);
    assert.ok(lines.some((l) => l.includes('writes kept for retry')));
    assert.deepEqual(writer.status(), { queued: 1, dropped: 0, failing: true });
    // Retried on every flush (each 50 ms) while locked: logged once per outage, not once per flush.
    assert.equal(writer.flush(), 0);
    assert.equal(lines.filter((l) => l.includes('writes kept for retry')).length, 1);
    other.sqlite.exec('COMMIT');
    assert.equal(writer.flush(), 1);
    assert.deepEqual(writer.status(), { queued: 0, dropped: 0, failing: false });
    assert.ok(lines.some((l) => l.includes('background writes resumed')));
    await writer.close();
    await other.close();
    await store.close();
  });

  test('a spend the database refuses is dropped and logged; its log row and the rest of the batch are written', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 10, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    const bad = await createGatewayUser(store.db, { name: 'bad-spend' });
    const good = await createGatewayUser(store.db, { name: 'good-spend' });
    const period = '2026-11-01T00:00:00.000Z';
    // A non-integer spend: the STRICT INTEGER column refuses it (SQLITE_CONSTRAINT_DATATYPE).
    writer.write({ kind: 'spend', group: 'req_bad', userId: bad.id, deltaNanos: 1.5, spentNanos: 1.5, periodStartIso: period });
    writer.write({ kind: 'request', group: 'req_bad', row: row('req_bad', bad.id, null) });
    writer.write({ kind: 'spend', group: 'req_good', userId: good.id, deltaNanos: 150, spentNanos: 150, periodStartIso: period });
    writer.write({ kind: 'request', group: 'req_good', row: row('req_good', good.id, null) });
    assert.equal(writer.flush(), 4);
    assert.equal(writer.depth(), 0);
    assert.deepEqual(store.sqlite.prepare('SELECT request_id FROM llm_requests ORDER BY id').pluck().all(), ['req_bad', 'req_good']);
    const spends = store.sqlite.prepare('SELECT name, budget_spent_nanos FROM gateway_users ORDER BY id').all();
    assert.deepEqual(spends, [{ name: 'bad-spend', budget_spent_nanos: 0 }, { name: 'good-spend', budget_spent_nanos: 150 }]);
    assert.ok(lines.some((l) => l.includes('write dropped') && l.includes('"kind":"spend"') && l.includes('"group":"req_bad"')));
    await writer.close();
    await store.close();
  });

  test('a flush on the interval that meets a row a trigger refuses logs it, and the process goes on', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    store.sqlite.exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON llm_requests WHEN NEW.model_requested = 'poison'
      BEGIN SELECT RAISE(ABORT, 'poison row'); END`);
    const lines: string[] = [];
    const writer = createRequestLogWriter(store, { batchSize: 100, flushIntervalMs: 10, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    writer.enqueue(row('before', null, null));
    writer.enqueue({ ...row('poisoned', null, null), model_requested: 'poison' });
    writer.enqueue(row('after', null, null));
    while (writer.depth() > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(store.sqlite.prepare('SELECT request_id FROM llm_requests ORDER BY id').pluck().all(), ['before', 'after']);
    assert.ok(lines.some((l) => l.includes('write dropped') && l.includes('"group":"poisoned"') && l.includes('poison row')));
    await writer.close();
    await store.close();
  });

  test('a non-integer spend settled by the budget ledger is logged on the interval flush, not thrown out of the timer', async () => {
    const store = openStore(join(tempDir(), 'log.db'));
    const lines: string[] = [];
    const queue = createWriteBehind(createSqliteWriteTarget(store), { batchSize: 100, flushIntervalMs: 10, maxQueueSize: 100 }, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'fractional' });
    const ledger = createBudgetLedger(store, 'UTC', queue);
    const nowMs = Date.parse('2026-11-20T10:00:00.000Z');
    const reservation = await ledger.reserve(user.id, 0, nowMs);
    assert.ok(isReservation(reservation));
    ledger.settle(reservation, 2.5, nowMs, 'req_fraction');
    // An uncaught throw in the flush timer would end this test process here.
    while (queue.depth() > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(lines.some((l) => l.includes('write dropped') && l.includes('"kind":"spend"')));
    ledger.settle((await ledger.reserve(user.id, 0, nowMs)) as Reservation, 0, nowMs, 'req_release');
    await ledger.close();
    await queue.close();
    await store.close();
  });
});

describe('the log row\'s insert values', () => {
  test('list every column\'s value in REQUEST_LOG_COLUMNS order', () => {
    // Each column holds its own name: a value out of place shows which.
    const row = Object.fromEntries(REQUEST_LOG_COLUMNS.map((column) => [column, column])) as unknown as RequestLogRow;
    assert.deepEqual(requestLogValues(row), [...REQUEST_LOG_COLUMNS]);
  });
});
