/**
 * The SQLite `WriteTarget` of the write-behind queue (`write-behind.ts`): log rows go to
 * `llm_requests` and their sums to `usage_rollups` (`usage-rollup-writer.ts`) in the same
 * transaction, spends to `gateway_users` (a team's to `teams`), crossed budget alert thresholds to `budget_alerts` (INSERT OR
 * IGNORE on its unique key: a threshold fires once per user and period, whatever the
 * concurrency or restarts). Prepared statements, one transaction per batch; within a batch a
 * user's consecutive spends of one period are summed into one UPDATE.
 */
import type { SqliteStore } from '../store/store.ts';
import { prepareQuery } from '../store/store.ts';
import type { NewLlmRequest } from '../store/db-types.ts';
import { REQUEST_LOG_COLUMNS, requestLogValues, type RequestLogRow } from './request-log-row.ts';
import type { PendingWrite, WriteTarget } from './write-behind.ts';
import { createRollupWriter } from './usage-rollup-writer.ts';
import { isStoreUnavailableError } from '../store/store-errors.ts';

/**
 * SQLite result codes that say the database is unavailable right now (locked, full, I/O, read-only),
 * not that a write is bad: the catalog's `isStoreUnavailableError`, shared with the request path.
 */
export const isTransientSqliteError: (err: unknown) => boolean = isStoreUnavailableError;

type SpendWrite = PendingWrite & { kind: 'spend' };

/** The SQLite target: it writes synchronously (`WriteTarget` says why), and its type says so. */
export interface SqliteWriteTarget extends WriteTarget {
  writeBatch(writes: readonly PendingWrite[]): void;
  writeOne(write: PendingWrite): void;
}

export function createSqliteWriteTarget(store: SqliteStore): SqliteWriteTarget {
  const { sqlite, db } = store;
  const sample = Object.fromEntries(REQUEST_LOG_COLUMNS.map((c) => [c, null])) as unknown as NewLlmRequest;
  // A request already stored (its batch committed, the acknowledgement lost, the batch retried) is
  // skipped with its spend and alerts: `changes` 0 says so.
  const insert = prepareQuery(sqlite, db.insertInto('llm_requests').values(sample).onConflict((oc) => oc.column('request_id').doNothing()));
  const spendStatement = sqlite.prepare<[string, number, number, string, number]>(`UPDATE gateway_users
    SET budget_spent_nanos = CASE WHEN budget_period_start IS ? THEN budget_spent_nanos + ? ELSE ? END, budget_period_start = ?
    WHERE id = ?`);
  const teamSpendStatement = sqlite.prepare<[string, number, number, string, number]>(`UPDATE teams
    SET budget_spent_nanos = CASE WHEN budget_period_start IS ? THEN budget_spent_nanos + ? ELSE ? END, budget_period_start = ?
    WHERE id = ?`);
  const writeSpend = (spend: SpendWrite) =>
    (spend.scope === 'team' ? teamSpendStatement : spendStatement).run(spend.periodStartIso, spend.deltaNanos, spend.spentNanos, spend.periodStartIso, spend.userId);
  const userExists = prepareQuery(sqlite, db.selectFrom('gateway_users').select('id').where('id', '=', 0)).pluck();
  const keyExists = prepareQuery(sqlite, db.selectFrom('api_keys').select('id').where('id', '=', 0)).pluck();
  const addToRollups = createRollupWriter(sqlite);
  const insertAlert = sqlite.prepare(`INSERT OR IGNORE INTO budget_alerts
    (gateway_user_id, period_start, threshold_percent, fired_at, payload, state, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const writeAlert = (a: PendingWrite & { kind: 'alert' }) => {
    insertAlert.run(a.userId, a.periodStartIso, a.thresholdPercent, a.firedAtIso, a.payload, a.deliver ? 'pending' : 'unsent', a.deliver ? a.firedAtIso : null);
  };

  // A user or key deleted while its request sat in the queue: keep the row, drop the dangling reference.
  const detach = (row: RequestLogRow): RequestLogRow => Object.assign({}, row, {
    gateway_user_id: row.gateway_user_id != null && userExists.get(row.gateway_user_id) !== undefined ? row.gateway_user_id : null,
    api_key_id: row.api_key_id != null && keyExists.get(row.api_key_id) !== undefined ? row.api_key_id : null,
  });

  const writeBatch = sqlite.transaction((writes: readonly PendingWrite[]) => {
    // Per user, the spends not yet written: summed while they are of one period.
    const pendingSpend = new Map<string, SpendWrite>();
    const rows: RequestLogRow[] = [];
    const alerts: Array<PendingWrite & { kind: 'alert' }> = [];
    /** Groups whose request row was stored before: their spend and alerts were too. */
    const stored = new Set<string>();
    for (const write of writes) {
      if (write.kind === 'request') {
        if (insert.run(requestLogValues(write.row)).changes === 0) stored.add(write.group);
        else rows.push(write.row);
        continue;
      }
      if (stored.has(write.group)) continue;
      if (write.kind === 'alert') {
        alerts.push(write);
        continue;
      }
      const owner = `${write.scope ?? 'user'}:${write.userId}`;
      const pending = pendingSpend.get(owner);
      if (pending && pending.periodStartIso === write.periodStartIso) {
        pendingSpend.set(owner, Object.assign({}, write, { deltaNanos: pending.deltaNanos + write.deltaNanos }));
        continue;
      }
      if (pending) writeSpend(pending);
      pendingSpend.set(owner, write);
    }
    addToRollups(rows);
    for (const spend of pendingSpend.values()) writeSpend(spend);
    for (const alert of alerts) writeAlert(alert);
  });
  const writeRow = sqlite.transaction((row: RequestLogRow) => {
    insert.run(requestLogValues(row));
    addToRollups([row]);
  });

  return {
    writeBatch,
    writeOne(write) {
      if (write.kind === 'request') writeRow(detach(write.row));
      else if (write.kind === 'spend') writeSpend(write);
      else writeAlert(write);
    },
    isTransient: isTransientSqliteError,
    isOpen: () => sqlite.open,
  };
}
