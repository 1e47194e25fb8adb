/**
 * The PostgreSQL `WriteTarget` of the write-behind queue (`write-behind.ts`): the same writes as
 * `write-target-sqlite.ts`, one transaction per batch, but one round trip per statement kind instead
 * of one per row: every log row of the batch in one multi-row INSERT, their rollup sums in one
 * multi-row upsert (`usage-rollup-writer.ts`), every user's spend in one `UPDATE … FROM (VALUES …)`,
 * and the alerts in one INSERT … ON CONFLICT DO NOTHING on their unique key (a threshold fires once
 * per user and period, whatever the replicas, concurrency or restarts).
 *
 * Spends: within a batch a user's consecutive spends of one period are summed, as on SQLite; a user
 * with spends of two periods in one batch (a rollover) gets one UPDATE statement per period, in order,
 * since one `UPDATE … FROM` updates a row at most once.
 */
import { sql, type Kysely } from 'kysely';
import type { Store } from '../store/store.ts';
import type { Database } from '../store/db-types.ts';
import type { RequestLogRow } from './request-log-row.ts';
import type { PendingWrite, WriteTarget } from './write-behind.ts';
import { addToRollupsPostgres } from './usage-rollup-writer.ts';
import { isStoreUnavailableError } from '../store/store-errors.ts';

type SpendWrite = PendingWrite & { kind: 'spend' };
type AlertWrite = PendingWrite & { kind: 'alert' };

/** Rows per INSERT: 23 columns each stays far below PostgreSQL's 65,535 parameters per statement. */
const ROWS_PER_INSERT = 1_000;

/**
 * True when `err` says the PostgreSQL server is unavailable now (retry later), not that a write is
 * bad: the catalog's `isStoreUnavailableError` (socket errors, SQLSTATE 08, 57P01..57P03, 53300,
 * 40001/40P01), shared with the request path's `store_unavailable`.
 */
export const isTransientPostgresError: (err: unknown) => boolean = isStoreUnavailableError;

/** `items` in chunks of at most `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The batch's spends as UPDATE statements' worth: a user's consecutive spends of one period summed
 * (as on SQLite), then the user's k-th spend in the k-th round, so no round names a user twice.
 */
export function spendRounds(spends: readonly SpendWrite[]): SpendWrite[][] {
  const perUser = new Map<string, SpendWrite[]>();
  for (const spend of spends) {
    const owner = `${spend.scope ?? 'user'}:${spend.userId}`;
    const list = perUser.get(owner);
    const last = list?.[list.length - 1];
    if (last && last.periodStartIso === spend.periodStartIso) {
      list[list.length - 1] = Object.assign({}, spend, { deltaNanos: last.deltaNanos + spend.deltaNanos });
    } else if (list) {
      list.push(spend);
    } else {
      perUser.set(owner, [spend]);
    }
  }
  const rounds: SpendWrite[][] = [];
  for (const list of perUser.values()) {
    list.forEach((spend, i) => (rounds[i] ??= []).push(spend));
  }
  return rounds;
}

/**
 * Inserts the rows; returns the request ids already stored (skipped): a batch whose COMMIT reached the
 * server but whose acknowledgement was lost with the connection is retried, and must not count twice.
 */
async function insertRows(trx: Kysely<Database>, rows: readonly RequestLogRow[]): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const part of chunks(rows, ROWS_PER_INSERT)) {
    const inserted = await trx.insertInto('llm_requests').values(part).onConflict((oc) => oc.column('request_id').doNothing())
      .returning('request_id').execute();
    if (inserted.length === part.length) continue;
    const fresh = new Set(inserted.map((r) => r.request_id));
    for (const row of part) if (!fresh.has(row.request_id)) stored.add(row.request_id);
  }
  return stored;
}

/** One UPDATE for spends of distinct users: the delta when the stored period matches, else the period's spend. */
async function writeSpends(trx: Kysely<Database>, spends: readonly SpendWrite[]): Promise<void> {
  const users = spends.filter((s) => s.scope !== 'team');
  const teams = spends.filter((s) => s.scope === 'team');
  if (users.length > 0) await writeSpendsOf(trx, sql.table('gateway_users'), users);
  if (teams.length > 0) await writeSpendsOf(trx, sql.table('teams'), teams);
}

/** `writeSpends` for one table: `gateway_users`, or `teams` (a team's spends). */
async function writeSpendsOf(trx: Kysely<Database>, table: ReturnType<typeof sql.table>, spends: readonly SpendWrite[]): Promise<void> {
  const values = sql.join(spends.map((s) =>
    sql`(${s.userId}::bigint, ${s.deltaNanos}::bigint, ${s.spentNanos}::bigint, ${s.periodStartIso}::text)`));
  await sql`UPDATE ${table} AS u
    SET budget_spent_nanos = CASE WHEN u.budget_period_start IS NOT DISTINCT FROM (v.period_start COLLATE "C")
        THEN u.budget_spent_nanos + v.delta ELSE v.spent END,
      budget_period_start = v.period_start
    FROM (VALUES ${values}) AS v (id, delta, spent, period_start)
    WHERE u.id = v.id`.execute(trx);
}

/** One INSERT of the alerts; a duplicate (same user, period and threshold) is ignored. */
async function writeAlerts(trx: Kysely<Database>, alerts: readonly AlertWrite[]): Promise<void> {
  for (const part of chunks(alerts, ROWS_PER_INSERT)) {
    await trx.insertInto('budget_alerts').values(part.map((a) => ({
      gateway_user_id: a.userId, period_start: a.periodStartIso, threshold_percent: a.thresholdPercent, fired_at: a.firedAtIso,
      payload: a.payload, state: a.deliver ? 'pending' as const : 'unsent' as const, next_attempt_at: a.deliver ? a.firedAtIso : null,
    })))
      .onConflict((oc) => oc.columns(['gateway_user_id', 'period_start', 'threshold_percent']).doNothing())
      .execute();
  }
}

/** The target over a PostgreSQL `store`. Every method returns a promise; the queue awaits each. */
export function createPostgresWriteTarget(store: Store): WriteTarget {
  const { db } = store;
  let open = true;

  /** Runs `work`, noting a store closed under it (its pool ended) so the queue stops trying. */
  async function guarded(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      const message = (err as { message?: unknown } | null)?.message;
      if (typeof message === 'string' && /driver has already been destroyed|after calling end on the pool/.test(message)) open = false;
      throw err;
    }
  }

  async function writeBatch(trx: Kysely<Database>, writes: readonly PendingWrite[]): Promise<void> {
    const rows: RequestLogRow[] = [];
    const spends: SpendWrite[] = [];
    const alerts: AlertWrite[] = [];
    for (const write of writes) {
      if (write.kind === 'request') rows.push(write.row);
      else if (write.kind === 'spend') spends.push(write);
      else alerts.push(write);
    }
    // The order of the SQLite target: rows, their rollups, spends, then the alerts the spends crossed.
    // A request already stored is skipped whole: its row, rollups, spend and alerts were committed with it.
    let stored = new Set<string>();
    if (rows.length > 0) {
      stored = await insertRows(trx, rows);
      const fresh = stored.size === 0 ? rows : rows.filter((r) => !stored.has(r.request_id));
      if (fresh.length > 0) await addToRollupsPostgres(trx, fresh);
    }
    const freshSpends = stored.size === 0 ? spends : spends.filter((w) => !stored.has(w.group));
    const freshAlerts = stored.size === 0 ? alerts : alerts.filter((w) => !stored.has(w.group));
    for (const round of spendRounds(freshSpends)) await writeSpends(trx, round);
    if (freshAlerts.length > 0) await writeAlerts(trx, freshAlerts);
  }

  // A user or key deleted while its request sat in the queue: keep the row, drop the dangling reference.
  async function detach(trx: Kysely<Database>, row: RequestLogRow): Promise<RequestLogRow> {
    const user = row.gateway_user_id == null ? undefined
      : await trx.selectFrom('gateway_users').select('id').where('id', '=', row.gateway_user_id).executeTakeFirst();
    const key = row.api_key_id == null ? undefined
      : await trx.selectFrom('api_keys').select('id').where('id', '=', row.api_key_id).executeTakeFirst();
    return Object.assign({}, row, { gateway_user_id: user ? row.gateway_user_id : null, api_key_id: key ? row.api_key_id : null });
  }

  return {
    writeBatch: (writes) => guarded(() => db.transaction().execute((trx) => writeBatch(trx, writes))),
    writeOne: (write) => guarded(() => db.transaction().execute(async (trx) => {
      if (write.kind === 'request') await writeBatch(trx, [Object.assign({}, write, { row: await detach(trx, write.row) })]);
      else await writeBatch(trx, [write]);
    })),
    isTransient: isTransientPostgresError,
    isOpen: () => open,
  };
}
