/**
 * Budget alerts as the admin API shows them (`GET /admin/api/alerts`): the rows of `budget_alerts`
 * (schema.sql v13), which the budget plugin fires and delivers, newest first, with their delivery
 * state. Read-only; money crosses this boundary in USD and, exactly, in nano-USD.
 */
import type { Kysely } from 'kysely';
import type { BudgetAlertState, Database } from '../store/db-types.ts';
import { usd } from './money.ts';

export const BUDGET_ALERT_STATES: readonly BudgetAlertState[] = ['pending', 'delivered', 'failed', 'unsent'];

/** One alert of the admin API. Timestamps ISO-8601 UTC. */
export interface BudgetAlertView {
  id: number;
  user_id: number;
  user_name: string;
  threshold_percent: number;
  period_start: string;
  /** Null for the period "never". */
  period_end: string | null;
  spent_usd: number;
  spent_nanos: number;
  limit_usd: number;
  limit_nanos: number;
  fired_at: string;
  /** `pending` (to be sent, again, at `next_attempt_at`), `delivered`, `failed` (every attempt failed), `unsent` (no webhook configured). */
  state: BudgetAlertState;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  last_error: string | null;
}

export interface BudgetAlertQuery {
  /** Most rows, newest first. */
  limit: number;
  userId?: number;
  state?: BudgetAlertState;
}

interface AlertRow {
  id: number;
  gateway_user_id: number;
  user_name: string;
  threshold_percent: number;
  period_start: string;
  fired_at: string;
  payload: string;
  state: BudgetAlertState;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  last_error: string | null;
}

/** The alerts matching `query`, newest first (ties: the later id first). Either engine. */
export async function listBudgetAlerts(db: Kysely<Database>, query: BudgetAlertQuery): Promise<BudgetAlertView[]> {
  let select = db.selectFrom('budget_alerts as a').innerJoin('gateway_users as u', 'u.id', 'a.gateway_user_id')
    .select(['a.id', 'a.gateway_user_id', 'u.name as user_name', 'a.threshold_percent', 'a.period_start', 'a.fired_at', 'a.payload',
      'a.state', 'a.attempts', 'a.next_attempt_at', 'a.delivered_at', 'a.last_error']);
  if (query.userId !== undefined) select = select.where('a.gateway_user_id', '=', query.userId);
  if (query.state !== undefined) select = select.where('a.state', '=', query.state);
  const rows: AlertRow[] = await select.orderBy('a.fired_at', 'desc').orderBy('a.id', 'desc').limit(query.limit).execute();
  return rows.map(toView);
}

function toView(row: AlertRow): BudgetAlertView {
  // The payload is the gateway's own JSON (alerts.ts): the figures at the moment it fired.
  const payload = JSON.parse(row.payload) as { period?: { end?: string | null }; spent_nanos?: number; limit_nanos?: number };
  const spentNanos = payload.spent_nanos ?? 0;
  const limitNanos = payload.limit_nanos ?? 0;
  return {
    id: row.id,
    user_id: row.gateway_user_id,
    user_name: row.user_name,
    threshold_percent: row.threshold_percent,
    period_start: row.period_start,
    period_end: payload.period?.end ?? null,
    spent_usd: usd(spentNanos),
    spent_nanos: spentNanos,
    limit_usd: usd(limitNanos),
    limit_nanos: limitNanos,
    fired_at: row.fired_at,
    state: row.state,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    delivered_at: row.delivered_at,
    last_error: row.last_error,
  };
}
