/**
 * The write-behind queue over the PostgreSQL target (`core/request-log/write-target-postgres.ts`), against a real
 * PostgreSQL server: a batch of log rows, spends and alerts in one transaction; a refused row salvaged
 * and a dangling reference detached; the server stopped and restarted with writes kept and persisted
 * after. And the queue over an asynchronous target: one flush at a time, in order, `close()` awaited.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../../core/runtime/log.ts';
import type { Store } from '../../../core/store/store.ts';
import { openPostgresStore } from '../../../core/store/store-postgres.ts';
import { createGatewayUser, deleteGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import type { RequestLogRow } from '../../../core/request-log/request-log-row.ts';
import { createWriteBehind, type PendingWrite, type WriteTarget } from '../../../core/request-log/write-behind.ts';
import { createPostgresWriteTarget, isTransientPostgresError, spendRounds } from '../../../core/request-log/write-target-postgres.ts';
import { rebuildUsageRollups } from '../../../core/request-log/usage-rollup-writer.ts';
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';

const CREATED_AT = '2026-03-04T10:37:12.345Z';

function row(requestId: string, userId: number | null, keyId: number | null, extra: Partial<RequestLogRow> = {}): RequestLogRow {
  return {
    request_id: requestId, gateway_user_id: userId, api_key_id: keyId, provider: 'openai', model_requested: 'openai/m',
    model_served: 'm', status: 200, error_code: null, prompt_tokens: 1, completion_tokens: 2, cached_tokens: 0,
    latency_ms: 3, ttft_ms: 1, stream: 0, created_at: CREATED_AT,
    cache_write_tokens: 0, cost_nanos: 150, usage_estimated: 0, unpriced: 0, endpoint: 'chat.completions', attempts: null,
    usage_reported: null, billed_price: null, error_plugin: null, plugin_fields: null, tags: null, upstream_key: null, ...extra,
  };
}

const request = (r: RequestLogRow): PendingWrite => ({ kind: 'request', group: r.request_id, row: r });
const settings = { batchSize: 100, flushIntervalMs: 60_000, maxQueueSize: 1_000 };

describe('PostgreSQL write target', { skip: skipWithoutPostgres() }, () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgresServer();
  });
  after(async () => {
    await server?.stop();
  });

  async function freshStore(): Promise<Store> {
    return openPostgresStore(await server.createDatabase());
  }

  test('a batch persists its log rows, rollups, summed spends and alerts (a duplicate alert ignored) in one go', async () => {
    const store = await freshStore();
    const lines: string[] = [];
    const queue = createWriteBehind(createPostgresWriteTarget(store), settings, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'spender' });
    const other = await createGatewayUser(store.db, { name: 'rollover' });
    await store.db.updateTable('gateway_users').set({ budget_spent_nanos: 1_000, budget_period_start: '2026-03-01T00:00:00.000Z' }).where('id', 'in', [user.id, other.id]).execute();
    const alert = (group: string): PendingWrite => ({
      kind: 'alert', group, userId: user.id, periodStartIso: '2026-03-01T00:00:00.000Z', thresholdPercent: 50,
      firedAtIso: CREATED_AT, payload: '{"spent_nanos":1300}', deliver: true,
    });
    queue.enqueue(request(row('r1', user.id, null)));
    queue.enqueue({ kind: 'spend', group: 'r1', userId: user.id, deltaNanos: 150, spentNanos: 1_150, periodStartIso: '2026-03-01T00:00:00.000Z' });
    queue.enqueue(alert('r1'));
    queue.enqueue(request(row('r2', user.id, null, { status: 500, unpriced: 1 })));
    queue.enqueue({ kind: 'spend', group: 'r2', userId: user.id, deltaNanos: 150, spentNanos: 1_300, periodStartIso: '2026-03-01T00:00:00.000Z' });
    queue.enqueue(alert('r2'));
    // Another user's spend of a new period (a rollover), then of the same: the period's total, then a delta.
    queue.enqueue({ kind: 'spend', group: 'r3', userId: other.id, deltaNanos: 70, spentNanos: 70, periodStartIso: '2026-04-01T00:00:00.000Z' });
    queue.enqueue({ kind: 'spend', group: 'r4', userId: other.id, deltaNanos: 5, spentNanos: 75, periodStartIso: '2026-04-01T00:00:00.000Z' });
    queue.enqueue({ kind: 'spend', group: 'r5', userId: other.id, deltaNanos: 9, spentNanos: 9, periodStartIso: '2026-05-01T00:00:00.000Z' });

    assert.equal(await queue.flush(), 9);
    assert.equal(queue.depth(), 0);
    const rows = await store.db.selectFrom('llm_requests').select(['request_id', 'gateway_user_id']).orderBy('request_id').execute();
    assert.deepEqual(rows, [{ request_id: 'r1', gateway_user_id: user.id }, { request_id: 'r2', gateway_user_id: user.id }]);
    const rollups = await store.db.selectFrom('usage_rollups').selectAll().execute();
    assert.deepEqual(rollups.map((r) => [r.bucket_start, r.gateway_user_id, r.requests, r.errors, r.cost_nanos, r.unpriced_requests, r.last_unpriced_at]),
      [['2026-03-04T10:30:00.000Z', user.id, 2, 1, 300, 1, CREATED_AT]]);
    const spends = await store.db.selectFrom('gateway_users').select(['id', 'budget_spent_nanos', 'budget_period_start']).orderBy('id').execute();
    assert.deepEqual(spends, [
      { id: user.id, budget_spent_nanos: 1_300, budget_period_start: '2026-03-01T00:00:00.000Z' },
      { id: other.id, budget_spent_nanos: 9, budget_period_start: '2026-05-01T00:00:00.000Z' },
    ]);
    const alerts = await store.db.selectFrom('budget_alerts').select(['gateway_user_id', 'threshold_percent', 'state', 'next_attempt_at']).execute();
    assert.deepEqual(alerts, [{ gateway_user_id: user.id, threshold_percent: 50, state: 'pending', next_attempt_at: CREATED_AT }]);

    // The writer's rollups equal a rebuild from the log (the quarter hour computed from the ISO text).
    await rebuildUsageRollups(store);
    assert.deepEqual(await store.db.selectFrom('usage_rollups').selectAll().execute(), rollups);
    assert.deepEqual(lines.filter((l) => l.includes('"level":"error"')), []);
    await queue.close();
    await store.close();
  });

  test('a refused row is dropped and logged, the rest of its batch written; a deleted user and key are detached', async () => {
    const store = await freshStore();
    const lines: string[] = [];
    const queue = createWriteBehind(createPostgresWriteTarget(store), settings, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'leaver' });
    const key = await createApiKey(store.db, { gatewayUserId: user.id });
    queue.enqueue(request(row('dup', null, null)));
    await queue.flush();
    queue.enqueue(request(row('before', null, null)));
    queue.enqueue(request(row('bad', null, null, { prompt_tokens: 1.5 }))); // not a bigint: never writable
    queue.enqueue(request(row('orphan', user.id, key.id)));
    await deleteGatewayUser(store.db, user.id);
    queue.enqueue(request(row('after', null, null)));
    assert.equal(await queue.flush(), 4);
    const rows = await store.db.selectFrom('llm_requests').select(['request_id', 'gateway_user_id', 'api_key_id']).orderBy('request_id').execute();
    assert.deepEqual(rows, [
      { request_id: 'after', gateway_user_id: null, api_key_id: null },
      { request_id: 'before', gateway_user_id: null, api_key_id: null },
      { request_id: 'dup', gateway_user_id: null, api_key_id: null },
      { request_id: 'orphan', gateway_user_id: null, api_key_id: null },
    ]);
    assert.equal(lines.filter((l) => l.includes('write dropped')).length, 1);
    const rollup = await store.db.selectFrom('usage_rollups').select((eb) => eb.fn.sum<number>('requests').as('n')).executeTakeFirstOrThrow();
    assert.equal(rollup.n, 4, 'the dropped row is not in the rollups');
    await queue.close();
    await store.close();
  });

  test('a batch retried after its commit went through (the acknowledgement lost) counts nothing twice', async () => {
    const store = await freshStore();
    const lines: string[] = [];
    const queue = createWriteBehind(createPostgresWriteTarget(store), settings, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'twice' });
    const period = '2026-03-01T00:00:00.000Z';
    const unit = (id: string): PendingWrite[] => [
      request(row(id, user.id, null)),
      { kind: 'spend', group: id, userId: user.id, deltaNanos: 150, spentNanos: 150, periodStartIso: period },
    ];
    for (const w of unit('once')) queue.enqueue(w);
    await queue.flush();
    // The same request again, as a retry of a batch whose COMMIT the server had applied, beside a new one.
    for (const w of [...unit('once'), ...unit('new')]) queue.enqueue(w);
    assert.equal(await queue.flush(), 4);
    const spent = await store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', user.id).executeTakeFirstOrThrow();
    const logged = await store.db.selectFrom('llm_requests').select((eb) => eb.fn.sum<number>('cost_nanos').as('nanos')).executeTakeFirstOrThrow();
    assert.equal(logged.nanos, 300);
    assert.equal(spent.budget_spent_nanos, 300, 'stored spend = logged costs');
    const rollup = await store.db.selectFrom('usage_rollups').select((eb) => eb.fn.sum<number>('requests').as('n')).executeTakeFirstOrThrow();
    assert.equal(rollup.n, 2);
    assert.equal(lines.filter((l) => l.includes('write dropped')).length, 0);
    await queue.close();
    await store.close();
  });

  test('while the server is down writes stay queued; after it is back they are persisted', async () => {
    const store = await freshStore();
    const lines: string[] = [];
    const queue = createWriteBehind(createPostgresWriteTarget(store), settings, createLog('debug', (l) => lines.push(l)));
    const user = await createGatewayUser(store.db, { name: 'patient' });
    await server.stop();
    try {
      queue.enqueue(request(row('while-down', user.id, null)));
      queue.enqueue({ kind: 'spend', group: 'while-down', userId: user.id, deltaNanos: 150, spentNanos: 150, periodStartIso: '2026-03-01T00:00:00.000Z' });
      assert.equal(await queue.flush(), 0);
      assert.equal(queue.depth(), 2);
      assert.ok(lines.some((l) => l.includes('writes kept for retry')), lines.join('\n'));
      assert.deepEqual(queue.status(), { queued: 2, dropped: 0, failing: true });
    } finally {
      await server.start();
    }
    assert.equal(await queue.flush(), 2);
    assert.equal(queue.depth(), 0);
    assert.deepEqual(queue.status(), { queued: 0, dropped: 0, failing: false });
    const stored = await store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(stored.budget_spent_nanos, 150);
    assert.equal((await store.db.selectFrom('llm_requests').select('request_id').execute()).length, 1);
    await queue.close();
    await store.close();
  });
});

describe('PostgreSQL write target: a request\'s spend and row as one item', { skip: skipWithoutPostgres() }, () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgresServer();
  });
  after(async () => {
    await server?.stop();
  });

  test('a spend queued before a flush waits for its row: stored spend = logged costs at every moment', async () => {
    const store = await openPostgresStore(await server.createDatabase());
    const queue = createWriteBehind(createPostgresWriteTarget(store), settings, createLog('error', () => {}), { joinRequests: true });
    const user = await createGatewayUser(store.db, { name: 'joined' });
    const figures = async () => {
      const spent = await store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', user.id).executeTakeFirstOrThrow();
      const logged = await store.db.selectFrom('llm_requests').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('cost_nanos'), eb.lit(0)).as('nanos')).executeTakeFirstOrThrow();
      return [spent.budget_spent_nanos, Number(logged.nanos)];
    };
    // The budget settled (a Redis round trip later the logger queues the row); a flush runs between.
    queue.enqueue({ kind: 'spend', group: 'r1', userId: user.id, deltaNanos: 150, spentNanos: 150, periodStartIso: '2026-03-01T00:00:00.000Z' });
    await queue.flush();
    assert.deepEqual(await figures(), [0, 0]);
    queue.enqueue(request(row('r1', user.id, null)));
    assert.equal(await queue.flush(), 2);
    assert.deepEqual(await figures(), [150, 150]);
    await queue.close();
    await store.close();
  });
});

describe('write-behind queue over an asynchronous target', () => {
  /** A target whose writes resolve when the test says so, recording what it was given and how many ran at once. */
  function manualTarget() {
    const written: string[] = [];
    let active = 0;
    let maxActive = 0;
    const waiting: Array<() => void> = [];
    const target: WriteTarget = {
      async writeBatch(writes) {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((resolve) => waiting.push(resolve));
        active--;
        for (const w of writes) written.push(w.group);
      },
      async writeOne(write) {
        written.push(write.group);
      },
      isTransient: () => false,
      isOpen: () => true,
    };
    const release = async () => {
      while (waiting.length === 0) await new Promise((r) => setImmediate(r));
      waiting.shift()!();
    };
    return { target, written, release, maxActive: () => maxActive };
  }

  test('two flushes never run at once and batches keep queue order; close() resolves after the last write', async () => {
    const t = manualTarget();
    const queue = createWriteBehind(t.target, { batchSize: 2, flushIntervalMs: 60_000, maxQueueSize: 100 }, createLog('error', () => {}));
    for (const id of ['a', 'b', 'c']) queue.enqueue(request(row(id, null, null)));
    const first = queue.flush();
    assert.ok(first instanceof Promise);
    queue.enqueue(request(row('d', null, null)));
    const second = queue.flush();
    let closed = false;
    const closing = Promise.resolve(queue.close()).then(() => {
      closed = true;
    });
    await t.release(); // a, b
    await t.release(); // c, d (the first flush runs until the queue is empty)
    assert.equal(await first, 4);
    assert.equal(await second, 0);
    await closing;
    assert.ok(closed);
    assert.deepEqual(t.written, ['a', 'b', 'c', 'd']);
    assert.equal(t.maxActive(), 1);
    assert.equal(queue.depth(), 0);
  });

  test('a full queue drops the oldest write not being written, never one in flight', async () => {
    const t = manualTarget();
    const lines: string[] = [];
    const queue = createWriteBehind(t.target, { batchSize: 2, flushIntervalMs: 60_000, maxQueueSize: 3 }, createLog('debug', (l) => lines.push(l)));
    queue.enqueue(request(row('a', null, null)));
    queue.enqueue(request(row('b', null, null)));
    const flushing = queue.flush(); // a, b in flight
    for (const id of ['c', 'd', 'e']) queue.enqueue(request(row(id, null, null))); // the queue holds 3: c, then d are dropped
    await t.release();
    await t.release();
    await flushing;
    assert.deepEqual(t.written, ['a', 'b', 'e']);
    assert.ok(lines.some((l) => l.includes('write-behind queue full')));
    await queue.close();
  });

  test('connection failures and server shutdowns count as transient; a constraint violation does not', () => {
    assert.equal(isTransientPostgresError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), true);
    assert.equal(isTransientPostgresError(Object.assign(new Error('terminating connection'), { code: '57P01' })), true);
    assert.equal(isTransientPostgresError(Object.assign(new Error('connection failure'), { code: '08006' })), true);
    assert.equal(isTransientPostgresError(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isTransientPostgresError(Object.assign(new Error('duplicate key'), { code: '23505' })), false);
    assert.equal(isTransientPostgresError(Object.assign(new Error('fk'), { code: '23503' })), false);
  });

  test('a user\'s spends of one period are summed; spends of two periods go in successive statements', () => {
    const spend = (userId: number, deltaNanos: number, periodStartIso: string) =>
      ({ kind: 'spend' as const, group: 'g', userId, deltaNanos, spentNanos: deltaNanos, periodStartIso });
    const rounds = spendRounds([spend(1, 5, 'p1'), spend(2, 7, 'p1'), spend(1, 6, 'p1'), spend(1, 3, 'p2')]);
    assert.deepEqual(rounds.map((r) => r.map((s) => [s.userId, s.deltaNanos, s.periodStartIso])), [
      [[1, 11, 'p1'], [2, 7, 'p1']],
      [[1, 3, 'p2']],
    ]);
  });
});
