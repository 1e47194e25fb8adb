/**
 * `tollgate ledger verify` (issue 39 item 10), the real CLI on a real store (SQLite, or PostgreSQL with
 * `TOLLGATE_TEST_STORE=postgres`): stored spend against the costs logged in each user's period, exit
 * 1 when they differ, `--repair` setting the spend from the log.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliJson, runCli } from '../helpers/cli.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { writeLogRows } from '../helpers/log-rows.ts';
import { tempDir } from '../helpers/tmp.ts';

const PERIOD = '2026-11-01T00:00:00.000Z';

interface Report {
  consistent: boolean;
  users: Array<{ userId: number; name: string; storedNanos: number; loggedNanos: number; differenceNanos: number; repaired?: boolean }>;
}

/** Two users: `even` whose spend matches its log, `off` whose stored spend is one request too high. */
async function ledgerDataDir(): Promise<string> {
  const dataDir = tempDir();
  const even = await cliJson<{ id: number }>(['users', 'create', '--name', 'even'], { dataDir });
  const off = await cliJson<{ id: number }>(['users', 'create', '--name', 'off'], { dataDir });
  const store = await openTestStore(dataDir);
  try {
    await writeLogRows(store, [
      // Before the period: not part of it.
      { gateway_user_id: even.id, cost_nanos: 9_999, created_at: '2026-10-31T23:59:59.000Z' },
      { gateway_user_id: even.id, cost_nanos: 1_000, created_at: '2026-11-02T10:00:00.000Z' },
      { gateway_user_id: even.id, cost_nanos: 2_000, created_at: '2026-11-03T10:00:00.000Z' },
      { gateway_user_id: off.id, cost_nanos: 500, created_at: '2026-11-02T10:00:00.000Z' },
      { gateway_user_id: off.id, cost_nanos: null, created_at: '2026-11-02T11:00:00.000Z' },
    ]);
    await store.db.updateTable('gateway_users').set({ budget_spent_nanos: 3_000, budget_period_start: PERIOD }).where('id', '=', even.id).execute();
    await store.db.updateTable('gateway_users').set({ budget_spent_nanos: 1_250, budget_period_start: PERIOD }).where('id', '=', off.id).execute();
  } finally {
    await store.close();
  }
  return dataDir;
}

describe('tollgate ledger verify', () => {
  test('reports each user\'s stored spend beside the logged costs of its period and exits 1 when they differ', async () => {
    const dataDir = await ledgerDataDir();
    const result = await runCli(['ledger', 'verify', '--json'], { dataDir });
    assert.equal(result.code, 1, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.equal(report.consistent, false);
    assert.deepEqual(report.users.map((u) => [u.name, u.storedNanos, u.loggedNanos, u.differenceNanos]), [['even', 3_000, 3_000, 0], ['off', 1_250, 500, 750]]);
    const text = await runCli(['ledger', 'verify'], { dataDir });
    assert.equal(text.code, 1);
    assert.match(text.stdout, /off .*1250 .*500 .*750/);
    assert.match(text.stderr, /1 user\(s\) differ/);
  });

  test('--repair sets a differing spend from the log; verify then passes with exit 0', async () => {
    const dataDir = await ledgerDataDir();
    const repaired = await runCli(['ledger', 'verify', '--repair', '--json'], { dataDir });
    assert.equal(repaired.code, 0, repaired.stderr);
    const report = JSON.parse(repaired.stdout) as Report;
    assert.deepEqual(report.users.filter((u) => u.differenceNanos !== 0).map((u) => [u.name, u.repaired]), [['off', true]]);
    const again = await cliJson<Report>(['ledger', 'verify'], { dataDir });
    assert.equal(again.consistent, true);
    assert.deepEqual(again.users.map((u) => u.storedNanos), [3_000, 500]);
    const text = await runCli(['ledger', 'verify'], { dataDir });
    assert.equal(text.code, 0);
    assert.match(text.stdout, /All 2 users: stored spend equals/);
  });
});
