/**
 * A gateway on a real PostgreSQL 15 keeps serving while the database goes away (issue 39 item 9):
 * its connections terminated by an administrator (`pg_terminate_backend`, what a restart does to
 * checked-out clients) and a real fast restart, under a steady stream of requests. The process stays
 * up (an unhandled `'error'` event of a pooled client would end this test process), requests are
 * served again once the database is back, every request answered 200 has exactly one log row, and the
 * stored spend equals the sum of the logged costs (item 10).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { eventually } from '../../helpers/eventually.ts';

const skip = skipWithoutPostgres();
let server: PostgresServer;
let openai: OpenAISimulator;

before(async () => {
  if (skip) return;
  server = await startPostgresServer();
  openai = await startOpenAISimulator();
});
after(async () => {
  await openai?.close();
  await server?.stop();
});

/** Requests sent by `workers` loops until `stop()`: the ids answered 200 and the other statuses seen. */
function steadyLoad(tg: TestGateway, workers: number) {
  const served: string[] = [];
  const refused: number[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const res = await tg.post('/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      if (res.status === 200) served.push(res.requestId);
      else refused.push(res.status);
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return {
    served,
    refused,
    /** Resolves once `count` more requests were answered 200. */
    async more(count: number) {
      const target = served.length + count;
      await eventually(async () => assert.ok(served.length >= target, `${served.length} of ${target} served`), { timeoutMs: 20_000 });
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('a gateway on PostgreSQL while the database restarts', { skip }, () => {
  test('a key lookup whose connection is terminated while it runs is retried on a new connection and served 200', async () => {
    const url = await server.createDatabase();
    const database = new URL(url).pathname.slice(1);
    const tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' } }, databaseUrl: url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // The lookup of the (not yet cached) key waits on this lock, so it is under way, on a pooled
      // connection, when that connection is terminated: no race with the pool noticing idle ones.
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
      const answer = tg.post('/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      const others = 'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()';
      await eventually(async () => {
        const waiting = await admin.query(`${others} AND wait_event_type = 'Lock'`, [database]);
        assert.ok(waiting.rowCount! > 0, 'the key lookup waits on the lock');
      });
      await admin.query(`SELECT pg_terminate_backend(pid) FROM (${others}) AS gateway`, [database]);
      await admin.query('COMMIT');
      const res = await answer;
      assert.equal(res.status, 200, res.text);
      assert.equal((await tg.logRow(res.requestId)).status, 200);
    } finally {
      await admin.end();
      await tg.close();
    }
  });

  test('survives terminated connections and a restart; every 200 has one log row; spend equals the logged costs', async () => {
    const url = await server.createDatabase();
    const tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' } }, databaseUrl: url });
    const load = steadyLoad(tg, 4);
    try {
      await load.more(10);
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      try {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [new URL(url).pathname.slice(1)]);
      } finally {
        await admin.end();
      }
      await load.more(10);
      await server.stop();
      // A key not cached yet must be looked up: the database cannot answer, so 503, not 500.
      const unknown = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
        method: 'POST', headers: { authorization: 'Bearer tg-not-a-cached-key-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(unknown.status, 503);
      assert.equal(unknown.headers.get('retry-after'), '1');
      assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, 'store_unavailable');
      await eventually(async () => {
        const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { store: { status: string; queuedWrites: number } };
        assert.equal(ready.store.status, 'down');
      });
      // Requests served from the caches meanwhile: their rows wait in memory, and /metrics says the writes fail.
      await eventually(async () => {
        const text = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
        assert.match(text, /tollgate_log_writes_failing 1/);
      }, { timeoutMs: 10_000 });
      await server.start();
      await load.more(10);
      await eventually(async () => {
        const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { store: { status: string; queuedWrites: number } };
        assert.equal(ready.store.status, 'ready', JSON.stringify(ready.store) + tg.serverLog.filter((l) => /write/.test(l)).slice(-4).join('\n'));
      }, { timeoutMs: 15_000 });
      await load.stop();
      assert.ok(load.refused.every((status) => status === 503), `only 503 while the database was away: ${load.refused.join(',')}`);

      const { db } = tg.gateway.store;
      const served = new Set(load.served);
      await eventually(async () => {
        const rows = await db.selectFrom('llm_requests').select('request_id').where('status', '=', 200).execute();
        const ids = rows.map((r) => r.request_id);
        assert.equal(ids.length, new Set(ids).size, 'no request logged twice');
        for (const id of served) assert.ok(ids.includes(id), `the log row of ${id}`);
      }, { timeoutMs: 10_000 });
      const logged = await db.selectFrom('llm_requests').select(sql<number>`coalesce(sum(cost_nanos), 0)`.as('nanos'))
        .where('gateway_user_id', '=', tg.userId).executeTakeFirstOrThrow();
      const user = await db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', tg.userId).executeTakeFirstOrThrow();
      assert.ok(logged.nanos > 0);
      assert.equal(user.budget_spent_nanos, logged.nanos, 'stored spend = sum of logged costs');
    } finally {
      await load.stop();
      await tg.close();
    }
  });
});
