/**
 * The quarter-hour usage rollups against a real SQLite file, after a mixed load written through the
 * write-behind queue (several users, models, providers, errors, unpriced rows, hours, a user deleted
 * midway): the table equals a GROUP BY over `llm_requests`, and every range read from it (partial
 * quarters included) gives what the old queries over `llm_requests` gave.
 */
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore, type SqliteStore } from '../../../core/store/store.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createGatewayUser, deleteGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createWriteBehind } from '../../../core/request-log/write-behind.ts';
import { createSqliteWriteTarget } from '../../../core/request-log/write-target-sqlite.ts';
import type { RequestLogRow } from '../../../core/request-log/request-log-row.ts';
import { usageSource, type UsageRange } from '../../../core/request-log/usage-rollups.ts';
import { queryPercentiles, queryUsage, type StatsRange } from '../../../core/admin/stats-query.ts';
import { writeLogRows } from '../../helpers/log-rows.ts';
import { COUNTS_AS_ERROR_SQL } from '../../../core/request-log/usage-rollup-writer.ts';
import { migrate, readMigrations } from '../../../core/store/store.ts';
import { openSqlite } from '../../../core/store/driver-sqlite.ts';
import { tempDir } from '../../helpers/tmp.ts';

const START_MS = Date.parse('2026-11-20T09:52:00.000Z');
const UPSTREAM_429 = JSON.stringify([{ provider: 'openai', model: 'gpt-4o', status: 429, error_code: 'rate_limit_exceeded', latency_ms: 3 }]);
const QUARTER_SUM = `substr(created_at, 1, 14) || printf('%02d', (CAST(substr(created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z'`;

/** A deterministic pseudo-random sequence, so a failure replays. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

function statsRange(fromIso: string, toIso: string): StatsRange {
  return { fromIso, toIso, fromMs: Date.parse(fromIso), toMs: Date.parse(toIso) };
}

describe('usage rollups', () => {
  let store: SqliteStore;
  const userIds: number[] = [];

  before(async () => {
    store = openStore(join(tempDir(), 'rollups.db'));
    for (const name of ['ann', 'bob', 'cid']) userIds.push((await createGatewayUser(store.db, { name })).id);
    const queue = createWriteBehind(createSqliteWriteTarget(store), { batchSize: 50, flushIntervalMs: 60_000, maxQueueSize: 10_000 }, createLog('error', () => {}));
    const random = sequence(7);
    const models: Array<[string | null, string | null, string | null]> = [
      ['openai', 'openai/gpt-4o', 'gpt-4o-2024-08-06'], ['openai', 'fast', 'gpt-4o-mini'], ['anthropic', 'anthropic/claude', 'claude-x'],
      [null, 'nowhere/model', null], [null, null, null],
    ];
    for (let i = 0; i < 3000; i++) {
      if (i === 2000) await deleteGatewayUser(store.db, userIds[1]!);
      const [provider, requested, served] = models[Math.floor(random() * models.length)]!;
      const status = random() < 0.1 ? 500 : random() < 0.05 ? 429 : random() < 0.05 ? 402 : 200;
      const row: RequestLogRow = {
        request_id: `req_${i}`, gateway_user_id: userIds[i % 3]!, api_key_id: null, provider, model_requested: requested,
        model_served: status === 200 ? served : null, status, error_code: status === 200 ? null : 'x',
        prompt_tokens: status === 200 ? Math.floor(random() * 500) : null, completion_tokens: status === 200 ? Math.floor(random() * 300) : null,
        cached_tokens: random() < 0.5 ? null : 3, latency_ms: Math.floor(random() * 4000), ttft_ms: random() < 0.3 ? null : Math.floor(random() * 900),
        stream: i % 2, created_at: new Date(START_MS + i * 61_700 + Math.floor(random() * 999)).toISOString(),
        cache_write_tokens: null, cost_nanos: status === 200 ? Math.floor(random() * 100_000) : null, usage_estimated: 0,
        unpriced: random() < 0.1 ? 1 : 0, endpoint: 'chat.completions', usage_reported: null, billed_price: null, error_plugin: null, plugin_fields: null, tags: null, upstream_key: null,
        // Half the 429s are an upstream's (an error), half the gateway's own rate limit (a refusal).
        attempts: status === 429 && i % 2 === 0 ? UPSTREAM_429 : null,
      };
      queue.enqueue({ kind: 'request', group: row.request_id, row });
    }
    await queue.close();
  });

  after(() => store.close());

  test('equal a GROUP BY over llm_requests, a deleted user\'s usage under user 0', () => {
    const rollups = store.sqlite.prepare('SELECT * FROM usage_rollups ORDER BY 1, 2, 3, 4, 5').all();
    const grouped = store.sqlite.prepare(`SELECT ${QUARTER_SUM} AS bucket_start, coalesce(gateway_user_id, 0) AS gateway_user_id,
        coalesce(provider, '') AS provider, coalesce(model_requested, '') AS model_requested, coalesce(model_served, '') AS model_served,
        count(*) AS requests, sum(${COUNTS_AS_ERROR_SQL}) AS errors, coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
        coalesce(sum(completion_tokens), 0) AS completion_tokens, coalesce(sum(cached_tokens), 0) AS cached_tokens,
        coalesce(sum(cost_nanos), 0) AS cost_nanos, count(ttft_ms) AS ttft_count, sum(unpriced) AS unpriced_requests,
        max(CASE WHEN unpriced = 1 THEN created_at END) AS last_unpriced_at
      FROM llm_requests GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`).all();
    assert.ok(rollups.length > 100);
    assert.deepEqual(rollups, grouped);
    assert.equal(store.sqlite.prepare('SELECT count(*) FROM usage_rollups WHERE gateway_user_id = ?').pluck().get(userIds[1]), 0);
  });

  const ranges: Array<[string, UsageRange]> = [
    ['whole quarters', { fromIso: '2026-11-20T11:00:00.000Z', toIso: '2026-11-21T06:45:00.000Z' }],
    ['partial quarters at both ends', { fromIso: '2026-11-20T10:07:31.250Z', toIso: '2026-11-21T13:59:59.999Z' }],
    ['inside one quarter', { fromIso: '2026-11-20T12:01:00.000Z', toIso: '2026-11-20T12:14:00.000Z' }],
    ['adjacent partial quarters', { fromIso: '2026-11-20T12:10:00.000Z', toIso: '2026-11-20T12:20:00.000Z' }],
    ['open end, one user (the account query)', { fromIso: '2026-11-21T00:05:00.000Z', userId: 1 }],
    ['open start', { toIso: '2026-11-20T20:33:00.000Z' }],
    ['everything', {}],
  ];
  for (const [name, range] of ranges) {
    test(`sum over a range (${name}) as the log does`, async () => {
      const fromRollups = (await sql`SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(errors), 0) AS errors,
          coalesce(sum(prompt_tokens), 0) AS prompt, coalesce(sum(completion_tokens), 0) AS completion,
          coalesce(sum(cost_nanos), 0) AS cost, coalesce(sum(ttft_count), 0) AS ttft FROM (${usageSource(range)}) AS u`.execute(store.db)).rows[0];
      const fromLog = store.sqlite.prepare(`SELECT count(*) AS requests, coalesce(sum(${COUNTS_AS_ERROR_SQL}), 0) AS errors,
          coalesce(sum(prompt_tokens), 0) AS prompt, coalesce(sum(completion_tokens), 0) AS completion,
          coalesce(sum(cost_nanos), 0) AS cost, count(ttft_ms) AS ttft FROM llm_requests
          WHERE created_at >= ? AND created_at < ? AND (? IS NULL OR gateway_user_id = ?)`)
        .get(range.fromIso ?? '', range.toIso ?? '9999', range.userId ?? null, range.userId ?? null);
      assert.deepEqual(fromRollups, fromLog);
      assert.ok((fromLog as { requests: number }).requests > 0);
    });
  }

  test('top users and top models over a range with partial quarters are what the old queries gave', async () => {
    const range = statsRange('2026-11-20T10:07:31.250Z', '2026-11-22T01:03:00.000Z');
    const oldUsers = store.sqlite.prepare(`SELECT r.gateway_user_id AS user_id, u.name AS user_name, count(*) AS requests,
        coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0) AS total_tokens, coalesce(sum(r.cost_nanos), 0) AS cost_nanos
      FROM llm_requests r LEFT JOIN gateway_users u ON u.id = r.gateway_user_id WHERE r.created_at >= ? AND r.created_at < ?
      GROUP BY r.gateway_user_id ORDER BY cost_nanos DESC, requests DESC, r.gateway_user_id LIMIT 5`).all(range.fromIso, range.toIso);
    assert.deepEqual((await queryUsage(store.db, range, 'UTC', 5)).topUsers.map(({ cost_usd: _, ...row }) => row), oldUsers);
    const oldModels = store.sqlite.prepare(`SELECT provider, coalesce(model_served, model_requested) AS model, count(*) AS requests,
        coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0) AS total_tokens, coalesce(sum(cost_nanos), 0) AS cost_nanos
      FROM llm_requests WHERE created_at >= ? AND created_at < ? AND coalesce(model_served, model_requested) IS NOT NULL
      GROUP BY provider, model ORDER BY cost_nanos DESC, requests DESC, model LIMIT 5`).all(range.fromIso, range.toIso);
    assert.deepEqual((await queryUsage(store.db, range, 'UTC', 5)).topModels.map(({ cost_usd: _, ...row }) => row), oldModels);
  });

  test('percentiles over more than 20,000 rows come from a sample within 5 % of the exact ones', async () => {
    const random = sequence(11);
    const baseMs = Date.parse('2026-12-01T00:00:00.000Z');
    await writeLogRows(store, Array.from({ length: 30_000 }, (_, i) => {
      const latency = 50 + Math.floor(random() * random() * 6000);
      return { request_id: `big_${i}`, provider: null, model_requested: null, model_served: null, prompt_tokens: null,
        completion_tokens: null, cost_nanos: null, latency_ms: latency, ttft_ms: Math.floor(latency / 3), created_at: new Date(baseMs + i * 1000).toISOString() };
    }));
    const range = statsRange('2026-12-01T00:00:00.000Z', '2026-12-02T00:00:00.000Z');
    const exact = (column: string, p: number) => store.sqlite.prepare(`SELECT ${column} FROM llm_requests
      WHERE created_at >= ? AND created_at < ? ORDER BY ${column} LIMIT 1 OFFSET ?`).pluck().get(range.fromIso, range.toIso, Math.ceil(p * 30_000) - 1) as number;
    const { requests, ttftCount } = (await queryUsage(store.db, range, 'UTC', 5)).totals;
    assert.equal(requests, 30_000);
    const latency = await queryPercentiles(store.db, range, 'latency_ms', requests);
    const ttft = await queryPercentiles(store.db, range, 'ttft_ms', ttftCount);
    for (const [estimate, truth] of [[latency.p50, exact('latency_ms', 0.5)], [latency.p95, exact('latency_ms', 0.95)],
      [ttft.p50, exact('ttft_ms', 0.5)], [ttft.p95, exact('ttft_ms', 0.95)]] as const) {
      assert.ok(estimate !== null && Math.abs(estimate - truth) <= truth * 0.05, `${estimate} vs exact ${truth}`);
    }
  });
});

describe('the usage rollups of a database from before version 16', () => {
  test('have their errors recounted: refusals of the client\'s request are no longer errors', () => {
    const sqlite = openSqlite(join(tempDir(), 'v15.db'));
    try {
      for (const migration of readMigrations().filter((m) => m.version <= 15)) sqlite.exec(migration.sql);
      sqlite.pragma('user_version = 15');
      const insert = sqlite.prepare(`INSERT INTO llm_requests (request_id, gateway_user_id, provider, model_requested, model_served, status,
        error_code, latency_ms, stream, created_at, attempts, unpriced, usage_estimated) VALUES (?, NULL, 'openai', 'm', 'm', ?, NULL, 5, 0, ?, ?, 0, 0)`);
      const rows: Array<[number, string | null, string]> = [
        [200, null, '2026-11-20T10:01:00.000Z'], [402, null, '2026-11-20T10:02:00.000Z'], [404, null, '2026-11-20T10:03:00.000Z'],
        [429, null, '2026-11-20T10:04:00.000Z'], [429, UPSTREAM_429, '2026-11-20T10:05:00.000Z'], [502, UPSTREAM_429, '2026-11-20T10:16:00.000Z'],
        [499, null, '2026-11-20T10:17:00.000Z'], [402, null, '2026-11-20T10:31:00.000Z'],
      ];
      rows.forEach(([status, attempts, at], i) => insert.run(`old_${i}`, status, at, attempts));
      // What the writer summed before version 16: every status >= 400.
      sqlite.exec(`INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
          prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
        SELECT ${QUARTER_SUM}, 0, provider, model_requested, model_served, count(*), sum(status >= 400), 0, 0, 0, 0, 0, 0, NULL
        FROM llm_requests GROUP BY 1, 2, 3, 4, 5`);
      assert.equal(migrate(sqlite), readMigrations().at(-1)!.version);
      const errors = sqlite.prepare('SELECT bucket_start, requests, errors FROM usage_rollups ORDER BY bucket_start').all();
      assert.deepEqual(errors, [
        { bucket_start: '2026-11-20T10:00:00.000Z', requests: 5, errors: 1 },
        { bucket_start: '2026-11-20T10:15:00.000Z', requests: 2, errors: 1 },
        { bucket_start: '2026-11-20T10:30:00.000Z', requests: 1, errors: 0 },
      ]);
    } finally {
      sqlite.close();
    }
  });
});
