/**
 * A whole gateway on its SQLite file while the file cannot be written (issue 39 item 9): another
 * connection holds `BEGIN EXCLUSIVE`, then the data directory and files are read-only. Requests
 * served from the cached key keep being answered 200, their log rows and spends wait in memory,
 * `GET /readyz` says the store is down with failing writes, `/metrics` has
 * `tollgate_log_writes_failing 1`; once the file is writable again every served request has
 * exactly one row and the stored spend equals the logged costs. SQLite only: skipped on a
 * PostgreSQL run.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, chmodSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSqlite } from '../../../core/store/driver-sqlite.ts';
import { sqliteStoreOf } from '../../../core/store/store.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { TEST_STORE_ENGINE } from '../../helpers/test-store.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/tmp.ts';

const skip = TEST_STORE_ENGINE === 'postgres' ? 'about the SQLite store; this run puts gateways on PostgreSQL' : false;
let openai: OpenAISimulator;

before(async () => {
  if (!skip) openai = await startOpenAISimulator();
});
after(async () => {
  await openai?.close();
});

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

async function startGateway(logger: Record<string, unknown> = {}): Promise<TestGateway> {
  const tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' } },
    user: { budgetUsd: 1000, budgetPeriod: 'monthly' },
    config: { logger },
  });
  // The key and the user's budget are read (and cached) by a first request, while the file is writable.
  const first = await tg.post('/chat/completions', CHAT);
  assert.equal(first.status, 200, first.text);
  await tg.logRow(first.requestId);
  return tg;
}

/** Sends `count` requests one after another; all must be served 200. Returns their ids. */
async function serve(tg: TestGateway, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await tg.post('/chat/completions', CHAT);
    assert.equal(res.status, 200, res.text);
    ids.push(res.requestId);
  }
  return ids;
}

/** The store's view in `/readyz` and the failing gauge in `/metrics` while the writes fail. */
async function assertWritesFailing(tg: TestGateway): Promise<void> {
  await eventually(async () => {
    const res = await fetch(`${tg.gateway.origin}/readyz`);
    assert.equal(res.status, 200, 'the replica stays in rotation: it serves what is cached');
    const ready = (await res.json()) as { store: { status: string; writesFailing: boolean; queuedWrites: number } };
    assert.equal(ready.store.status, 'down');
    assert.equal(ready.store.writesFailing, true);
    assert.ok(ready.store.queuedWrites > 0, JSON.stringify(ready.store));
    const metrics = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
    assert.match(metrics, /^tollgate_log_writes_failing 1$/m);
    assert.ok(Number(/^tollgate_log_queue_depth (\d+)$/m.exec(metrics)?.[1]) > 0, 'rows wait in memory');
  }, { timeoutMs: 10_000 });
}

/**
 * Once writable again: each served id has exactly one row (at least `minRows` of them when the
 * queue dropped some), the store is ready, spend = logged costs.
 */
async function assertRecovered(tg: TestGateway, served: readonly string[], minRows = served.length): Promise<void> {
  const { db } = tg.gateway.store;
  await eventually(async () => {
    const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { store: { queuedWrites: number } };
    assert.equal(ready.store.queuedWrites, 0);
    const rows = await db.selectFrom('llm_requests').select('request_id').where('request_id', 'in', [...served]).execute();
    assert.ok(rows.length >= minRows && rows.length <= served.length, `${rows.length} rows of ${served.length} served`);
    assert.equal(new Set(rows.map((r) => r.request_id)).size, rows.length, 'no request logged twice');
  }, { timeoutMs: 15_000 });
  await eventually(async () => {
    const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { store: { status: string; writesFailing: boolean; queuedWrites: number } };
    assert.deepEqual([ready.store.status, ready.store.writesFailing, ready.store.queuedWrites], ['ready', false, 0]);
  }, { timeoutMs: 10_000 });
  const logged = await db.selectFrom('llm_requests').select(sql<number>`coalesce(sum(cost_nanos), 0)`.as('nanos'))
    .where('gateway_user_id', '=', tg.userId).executeTakeFirstOrThrow();
  const user = await db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', tg.userId).executeTakeFirstOrThrow();
  assert.ok(logged.nanos > 0);
  assert.equal(user.budget_spent_nanos, logged.nanos, 'stored spend = sum of logged costs');
}

/** True when chmod keeps this process from writing (not root, or root without CAP_DAC_OVERRIDE). */
function readOnlyBites(): boolean {
  const dir = tempDir();
  chmodSync(dir, 0o500);
  try {
    accessSync(dir, constants.W_OK);
    return false;
  } catch {
    return true;
  } finally {
    chmodSync(dir, 0o700);
  }
}

/**
 * Serves requests from the cached key while `stop` keeps the file from being written, checks what
 * the gateway says meanwhile, then `resume`s and checks that nothing was lost or counted twice.
 */
async function throughOutage(tg: TestGateway, stop: () => void, resume: () => void): Promise<void> {
  stop();
  const served = await serve(tg, 5);
  await assertWritesFailing(tg);
  served.push(...await serve(tg, 5));
  resume();
  await assertRecovered(tg, served);
}

/**
 * Liveness bound of each test: its requests take milliseconds. Before the gateway's connection
 * stopped waiting 5 s for a lock (`SERVING_BUSY_TIMEOUT_MS`), every write that met the lock froze
 * the whole process that long: the locked case took over 250 s.
 */
const LIVENESS = { timeout: 120_000 };

describe('a gateway on SQLite while its file cannot be written', { skip }, () => {
  test('SQLite locked by another connection (BEGIN EXCLUSIVE): cached keys are served, rows wait, /readyz and /metrics say so; after it, one row per request and spend = logged costs', LIVENESS, async () => {
    const tg = await startGateway();
    const other = openSqlite(tg.gateway.store.location);
    try {
      await throughOutage(tg, () => other.exec('BEGIN EXCLUSIVE'), () => other.exec('COMMIT'));
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await tg.close();
    }
  });

  test('SQLite locked longer than the queue holds: the oldest rows are dropped whole with their spend, counted in /readyz and tollgate_log_writes_dropped_total; spend = logged costs after', LIVENESS, async () => {
    // Each request queues two writes (its row and its spend) as one item: 4 writes hold the last two requests.
    const tg = await startGateway({ maxQueueSize: 4 });
    const other = openSqlite(tg.gateway.store.location);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const served = await serve(tg, 8);
      await eventually(async () => {
        const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { store: { droppedWrites: number; queuedWrites: number } };
        assert.ok(ready.store.droppedWrites >= 12 && ready.store.queuedWrites <= 4, JSON.stringify(ready.store));
        const dropped = /^tollgate_log_writes_dropped_total (\d+)$/m.exec(await (await fetch(`${tg.gateway.origin}/metrics`)).text());
        assert.equal(Number(dropped?.[1]), ready.store.droppedWrites);
      });
      other.exec('COMMIT');
      await assertRecovered(tg, served, 2);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await tg.close();
    }
  });

  test('SQLite full (the page limit reached, as on a full disk): cached keys are served, rows wait, /readyz and /metrics say so; after it, one row per request and spend = logged costs', LIVENESS, async () => {
    const tg = await startGateway();
    // A full disk needs a small filesystem (a mount, which a test may not make): SQLite's own page
    // limit fails the writes with the same SQLITE_FULL.
    const { sqlite } = sqliteStoreOf(tg.gateway.store, 'this test');
    const limit = sqlite.pragma('max_page_count', { simple: true }) as number;
    try {
      await throughOutage(tg, () => sqlite.pragma(`max_page_count = ${sqlite.pragma('page_count', { simple: true }) as number}`), () => sqlite.pragma(`max_page_count = ${limit}`));
    } finally {
      await tg.close();
    }
  });

  test('SQLite read-only (the connection set query_only): cached keys are served, rows wait, /readyz and /metrics say so; after it, one row per request and spend = logged costs', LIVENESS, async () => {
    const tg = await startGateway();
    // What a read-only file gives a process that cannot write it: SQLITE_READONLY on every write.
    const { sqlite } = sqliteStoreOf(tg.gateway.store, 'this test');
    try {
      await throughOutage(tg, () => sqlite.pragma('query_only = ON'), () => sqlite.pragma('query_only = OFF'));
    } finally {
      await tg.close();
    }
  });

  test('SQLite on a read-only data directory: cached keys are served, rows wait, /readyz and /metrics say so; after it, one row per request and spend = logged costs', { ...LIVENESS, skip: readOnlyBites() ? false : 'this process is root (CAP_DAC_OVERRIDE): chmod does not make a file read-only for it, and mounting read-only needs privileges a test must not use' }, async () => {
    const tg = await startGateway();
    const files = readdirSync(tg.dataDir).map((name) => join(tg.dataDir, name));
    try {
      await throughOutage(tg, () => {
        for (const file of files) chmodSync(file, 0o400);
        chmodSync(tg.dataDir, 0o500);
      }, () => {
        chmodSync(tg.dataDir, 0o700);
        for (const file of files) chmodSync(file, 0o600);
      });
    } finally {
      chmodSync(tg.dataDir, 0o700);
      for (const file of files) chmodSync(file, 0o600);
      await tg.close();
    }
  });
});
