/**
 * The budget ledger: each gateway user's spend in the current budget period, plus what in-flight
 * requests have reserved. All amounts are integer nano-USD (1 USD = 1e9).
 *
 * Why it is exact under concurrency: a reservation is a synchronous check-and-add on one in-memory
 * record, and Node runs one at a time, so parallel requests can never all pass the same check.
 * Why it survives restarts: each settlement queues the user's new spend on the write-behind queue
 * (`core/request-log/write-behind.ts`), in the same group as the request's log row, so the two commit in the same
 * transaction (within the queue's flush interval, 50 ms by default) and the persisted spend always
 * equals the logged costs of the period, crash or not. The queue is flushed before the table is
 * re-read. (One UPDATE per request in its own transaction cost a tenth of the gateway's CPU.)
 * Reservations are not persisted: after a crash the requests they covered are gone too.
 *
 * Rollover is lazy: spend recorded for a window that has ended counts as 0 from the boundary on
 * (`budgetWindow`, core `calendar-period.ts`), with no timer. Spend recorded for a window that
 * started at or after the current window's start still counts (the period or timezone was changed
 * to a longer one).
 */
import type { Store } from '../../core/store/store.ts';
import { nowIso, prepareQuery } from '../../core/store/store.ts';
import type { BudgetPeriod, GatewayUser } from '../../core/store/db-types.ts';
import { budgetWindow, type BudgetWindow } from '../../core/money/calendar-period.ts';
import { microsToNanos } from '../../core/money/money.ts';
import { readAlertThresholds } from '../../core/accounts/gateway-users.ts';
import type { BudgetStatus } from '../../core/services.ts';
import type { WriteBehind } from '../../core/request-log/write-behind.ts';
import type { HeldReservation } from '../../core/coordination/budget-counters.ts';
import { then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';

/**
 * What a settlement did to a user's spend, for the budget alerts (`alerts.ts`): the spend of the
 * current period before and after it (nano-USD), the limit then, and the user's own thresholds.
 */
export interface SpendChange {
  readonly userId: number;
  readonly userName: string;
  readonly beforeNanos: number;
  readonly afterNanos: number;
  /** Null = unlimited. */
  readonly limitNanos: number | null;
  readonly window: BudgetWindow;
  /** The user's `budget_alert_thresholds`; null = the manifest's. */
  readonly alertThresholds: readonly number[] | null;
}

/** A reservation to settle or release when the request ends. */
export interface Reservation {
  /** The user's id; in a team ledger (`scope` 'team'), the team's. */
  readonly userId: number;
  readonly amountNanos: number;
  /** Where it is held when budgets are shared by replicas (`shared-ledger.ts`); absent in one process. */
  readonly held?: HeldReservation;
}


/**
 * What the budget plugin asks of a ledger: the in-process one (`createBudgetLedger`) answers at once;
 * the one shared by replicas (`shared-ledger.ts`) may answer with promises (a Redis round trip).
 */
export interface LedgerSeam {
  status(userId: number, nowMs: number): MaybePromise<BudgetStatus | undefined>;
  reserve(userId: number, amountNanos: number, nowMs: number): MaybePromise<Reservation | BudgetStatus>;
  settle(reservation: Reservation, actualNanos: number, nowMs: number, requestId: string): MaybePromise<SpendChange | null>;
  invalidate(userId?: number): MaybePromise<void>;
  flush(): MaybePromise<void>;
  close(): MaybePromise<void>;
}


interface UserBudget {
  name: string;
  alertThresholds: number[] | null;
  limitNanos: number | null;
  period: BudgetPeriod;
  spentNanos: number;
  /** Start (ms) of the window `spentNanos` belongs to; null = nothing spent yet. */
  spentWindowStartMs: number | null;
  reservedNanos: number;
  /** PostgreSQL: spend settled while a reload of this user was under way (its read may predate it). */
  settledDuringLoadNanos: number;
  /** Reloads of this user under way. */
  loading: number;
}

export interface BudgetLedger extends LedgerSeam {
  /**
   * The user's budget now; undefined when the user does not exist. Synchronous on SQLite; on
   * PostgreSQL synchronous for a user already loaded, a promise on a cache miss (one read).
   */
  status(userId: number, nowMs: number): MaybePromise<BudgetStatus | undefined>;
  /**
   * Reserves `amountNanos` if it fits (always, for an unlimited user). Returns the reservation, or
   * the status that refused it. Synchronous when the user is loaded (after `status`).
   */
  reserve(userId: number, amountNanos: number, nowMs: number): MaybePromise<Reservation | BudgetStatus>;
  /**
   * Ends a reservation: `actualNanos` (≥ 0) becomes spend of the current period; 0 releases it.
   * `requestId` groups the spend's write with the request's log row (one transaction): a write the
   * caller queues with the same group right after (an alert) commits with them. Returns what changed,
   * or null when nothing was spent.
   */
  settle(reservation: Reservation, actualNanos: number, nowMs: number, requestId: string): SpendChange | null;
  /** Re-reads a user's limit, period and spend from the database (all users when omitted), after writing the queue. */
  invalidate(userId?: number): MaybePromise<void>;
  /** Writes settled spend now (the whole write-behind queue). */
  flush(): MaybePromise<void>;
  /** Flushes and stops watching the database. */
  close(): MaybePromise<void>;
}

type BudgetRow = Pick<GatewayUser, 'name' | 'budget_alert_thresholds' | 'budget_limit_micros' | 'budget_period' | 'budget_spent_nanos' | 'budget_period_start'>;
const BUDGET_COLUMNS = ['name', 'budget_alert_thresholds', 'budget_limit_micros', 'budget_period', 'budget_spent_nanos', 'budget_period_start'] as const;

/** Whose budgets a ledger keeps: gateway users', or teams' (`teams`, schema v23: the same budget columns). */
export type LedgerScope = 'user' | 'team';

/**
 * Reads one user's (or team's) budget row, chosen once by engine: a prepared statement on SQLite
 * (synchronous, on the request path), a Kysely query on PostgreSQL.
 */
function budgetReader(store: Store, scope: LedgerScope): (id: number) => MaybePromise<BudgetRow | undefined> {
  const query = scope === 'team'
    ? (id: number) => store.db.selectFrom('teams').select(BUDGET_COLUMNS).where('id', '=', id)
    : (id: number) => store.db.selectFrom('gateway_users').select(BUDGET_COLUMNS).where('id', '=', id);
  if (store.engine === 'postgres') return (id) => query(id).executeTakeFirst();
  const read = prepareQuery(store.sqlite, query(0));
  return (id) => read.get(id);
}

/**
 * The ledger over `store`; spends are persisted through `writes`. `scope` 'team': the same ledger
 * over the teams' budgets (ids are team ids; spends are written to `teams`).
 */
export function createBudgetLedger(store: Store, timeZone: string, writes: WriteBehind, scope: LedgerScope = 'user'): BudgetLedger {
  const read = budgetReader(store, scope);
  // SQLite: writes after the file is closed would throw; PostgreSQL: the write target stops by itself.
  const storeOpen = store.engine === 'sqlite' ? () => store.sqlite.open : () => true;
  const users = new Map<number, UserBudget>();
  // The CLI changes limits and periods from another process; spend is only ever written here.
  const unsubscribe = store.onExternalChange(() => {
    const reloaded = reloadAll();
    if (reloaded instanceof Promise) reloaded.catch(() => {});
  });

  function flush(): MaybePromise<void> {
    if (!storeOpen()) return;
    return then(writes.flush(), () => undefined);
  }

  function apply(userId: number, row: BudgetRow | undefined, settledDuringLoadNanos: number): UserBudget | undefined {
    if (!row) {
      users.delete(userId);
      return undefined;
    }
    const previous = users.get(userId);
    const user: UserBudget = {
      name: row.name,
      alertThresholds: readAlertThresholds(row.budget_alert_thresholds),
      limitNanos: row.budget_limit_micros === null ? null : microsToNanos(row.budget_limit_micros),
      period: row.budget_period,
      spentNanos: row.budget_spent_nanos + settledDuringLoadNanos,
      spentWindowStartMs: row.budget_period_start === null ? null : Date.parse(row.budget_period_start),
      reservedNanos: previous?.reservedNanos ?? 0,
      settledDuringLoadNanos: previous?.settledDuringLoadNanos ?? 0,
      loading: previous?.loading ?? 0,
    };
    if (settledDuringLoadNanos > 0 && previous && (user.spentWindowStartMs ?? -Infinity) < (previous.spentWindowStartMs ?? -Infinity)) {
      // The read predates a settlement that started a new period here: this process's figures are newer.
      user.spentNanos = previous.spentNanos;
      user.spentWindowStartMs = previous.spentWindowStartMs;
    }
    users.set(userId, user);
    return user;
  }

  /**
   * Reads the user from the database. On PostgreSQL the read is asynchronous: spend this process
   * settles meanwhile may or may not be in it (the queue is written concurrently), so what is
   * settled during the load is counted on top (an overcount of at most one flush interval's spend,
   * corrected by the next reload, rather than an undercount that would let a budget overflow).
   */
  function load(userId: number): MaybePromise<UserBudget | undefined> {
    const row = read(userId);
    if (!(row instanceof Promise)) return apply(userId, row, 0);
    const loading = users.get(userId);
    if (loading) loading.loading++;
    const startNanos = loading?.settledDuringLoadNanos ?? 0;
    return row.then(
      (value) => {
        const current = users.get(userId);
        if (current) current.loading--;
        const settled = current && current === loading ? current.settledDuringLoadNanos - startNanos : 0;
        return apply(userId, value, settled);
      },
      (err: unknown) => {
        const current = users.get(userId);
        if (current) current.loading--;
        throw err;
      },
    );
  }

  function reloadAll(): MaybePromise<void> {
    return then(flush(), () => {
      const loads = [...users.keys()].map(load).filter((l) => l instanceof Promise);
      if (loads.length > 0) return Promise.all(loads).then(() => undefined);
    });
  }

  // First reads of a user still under way. Concurrent first requests share one: each read replaced the
  // record when it came back, so a late one wiped the spend an early request had settled meanwhile
  // (seen as a missed 100 % alert with 20 concurrent first requests on PostgreSQL).
  const firstLoads = new Map<number, Promise<UserBudget | undefined>>();

  function get(userId: number): MaybePromise<UserBudget | undefined> {
    const user = users.get(userId);
    if (user) return user;
    const pending = firstLoads.get(userId);
    if (pending) return pending;
    const loaded = load(userId);
    if (loaded instanceof Promise) {
      firstLoads.set(userId, loaded);
      const done = () => firstLoads.delete(userId);
      loaded.then(done, done);
    }
    return loaded;
  }

  // Each request reads its user's window up to three times (pre-check, reservation, settlement):
  // the window of each period is kept while now is inside it, and its start's ISO form with it.
  const windows = new Map<BudgetPeriod, { window: BudgetWindow; startIso: string }>();
  function windowOf(period: BudgetPeriod, nowMs: number): { window: BudgetWindow; startIso: string } {
    const kept = windows.get(period);
    if (kept && kept.window.startMs <= nowMs && (kept.window.resetsAtMs === null || nowMs < kept.window.resetsAtMs)) return kept;
    const window = budgetWindow(period, nowMs, timeZone);
    const fresh = { window, startIso: nowIso(window.startMs) };
    windows.set(period, fresh);
    return fresh;
  }

  function spentIn(user: UserBudget, window: BudgetWindow): number {
    return user.spentWindowStartMs !== null && user.spentWindowStartMs >= window.startMs ? user.spentNanos : 0;
  }

  function statusOf(user: UserBudget, nowMs: number): BudgetStatus {
    const { window } = windowOf(user.period, nowMs);
    const spentNanos = spentIn(user, window);
    const remainingNanos = user.limitNanos === null ? null : Math.max(0, user.limitNanos - spentNanos - user.reservedNanos);
    return { limitNanos: user.limitNanos, period: user.period, spentNanos, reservedNanos: user.reservedNanos, remainingNanos, window };
  }

  return {
    status(userId, nowMs) {
      return then(get(userId), (user) => user && statusOf(user, nowMs));
    },
    reserve(userId, amountNanos, nowMs) {
      return then(get(userId), (user): Reservation | BudgetStatus => {
        if (!user) return { userId, amountNanos: 0 };
        // The status (an object) is built only to refuse.
        if (user.limitNanos !== null && spentIn(user, windowOf(user.period, nowMs).window) + user.reservedNanos + amountNanos > user.limitNanos) {
          return statusOf(user, nowMs);
        }
        user.reservedNanos += amountNanos;
        return { userId, amountNanos };
      });
    },
    settle(reservation, actualNanos, nowMs, requestId) {
      const user = users.get(reservation.userId);
      if (!user) return null;
      user.reservedNanos = Math.max(0, user.reservedNanos - reservation.amountNanos);
      if (actualNanos <= 0) return null;
      const current = windowOf(user.period, nowMs);
      const window = current.window;
      const beforeNanos = spentIn(user, window);
      user.spentNanos = beforeNanos + actualNanos;
      if (user.loading > 0) user.settledDuringLoadNanos += actualNanos;
      if (user.spentWindowStartMs === null || user.spentWindowStartMs < window.startMs) user.spentWindowStartMs = window.startMs;
      writes.enqueue({
        kind: 'spend', group: requestId, userId: reservation.userId, deltaNanos: actualNanos, spentNanos: user.spentNanos,
        periodStartIso: user.spentWindowStartMs === window.startMs ? current.startIso : nowIso(user.spentWindowStartMs),
        ...(scope === 'team' ? { scope } : {}),
      });
      return {
        userId: reservation.userId, userName: user.name, beforeNanos, afterNanos: user.spentNanos, limitNanos: user.limitNanos,
        window, alertThresholds: user.alertThresholds,
      };
    },
    invalidate(userId) {
      if (userId === undefined) return reloadAll();
      return then(flush(), () => {
        if (users.has(userId)) return then(load(userId), () => undefined);
      });
    },
    flush,
    close() {
      unsubscribe();
      return flush();
    },
  };
}

/** A `Reservation` or the refusing `BudgetStatus`? */
export function isReservation(value: Reservation | BudgetStatus): value is Reservation {
  return (value as Reservation).amountNanos !== undefined;
}
