/**
 * Gateway users: the people or services that hold API keys, with budget and rate-limit settings.
 * Money crosses this module's boundary in USD (what operators type) and is stored as integer
 * micro-USD. Deleting a user deletes its keys; its request history stays (user id set to NULL).
 */
import type { Kysely } from 'kysely';
import type { BudgetPeriod, Database, GatewayUser } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import { microsToUsd, usdToMicros } from '../money/money.ts';

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['daily', 'weekly', 'monthly', 'never'];

/** A user as shown by the CLI and APIs. */
export interface GatewayUserView {
  id: number;
  name: string;
  email: string | null;
  disabled: boolean;
  budget_limit_usd: number | null;
  budget_period: BudgetPeriod;
  rpm: number | null;
  tpm: number | null;
  /** Requests in flight at once; null = the manifest default (rate-limit `defaultMaxConcurrent`). */
  max_concurrent: number | null;
  /** Budget alert thresholds, percents of the limit, ascending; null = the budget plugin's `alerts.thresholds`; [] = none. */
  budget_alert_thresholds: number[] | null;
  created_at: string;
  updated_at: string;
}

export function toUserView(row: GatewayUser): GatewayUserView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    disabled: row.disabled === 1,
    budget_limit_usd: row.budget_limit_micros === null ? null : microsToUsd(row.budget_limit_micros),
    budget_period: row.budget_period,
    rpm: row.rpm,
    tpm: row.tpm,
    max_concurrent: row.max_concurrent ?? null,
    budget_alert_thresholds: readAlertThresholds(row.budget_alert_thresholds),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface UserFields {
  name?: string;
  email?: string | null;
  /** USD; null = unlimited. */
  budgetUsd?: number | null;
  budgetPeriod?: BudgetPeriod;
  rpm?: number | null;
  tpm?: number | null;
  maxConcurrent?: number | null;
  /** Percents of the limit (checked with `checkAlertThresholds`); null = the manifest default. */
  alertThresholds?: number[] | null;
  disabled?: boolean;
}

/** Most thresholds one user may have: alerts are for people, not a progress bar. */
export const MAX_ALERT_THRESHOLDS = 10;
/** Highest threshold, percent: 1000 % alerts on spend far past the limit (answers longer than their reservation). */
export const MAX_ALERT_PERCENT = 1000;

/**
 * `values` as alert thresholds: integer percents 1–1000, at most 10, returned ascending without
 * duplicates. Returns a message saying what is wrong instead when they are not.
 */
export function checkAlertThresholds(values: unknown): number[] | string {
  if (!Array.isArray(values)) return 'must be a list of percents such as [80, 100]';
  if (values.length > MAX_ALERT_THRESHOLDS) return `must have at most ${MAX_ALERT_THRESHOLDS} thresholds`;
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_ALERT_PERCENT) return `must hold whole percents from 1 to ${MAX_ALERT_PERCENT} (got ${JSON.stringify(v)})`;
  }
  return [...new Set(values as number[])].sort((a, b) => a - b);
}

/** The stored column (JSON or NULL) as thresholds; a value that is not a valid list reads as NULL (the default). */
export function readAlertThresholds(column: string | null | undefined): number[] | null {
  if (column == null) return null;
  try {
    const checked = checkAlertThresholds(JSON.parse(column));
    return typeof checked === 'string' ? null : checked;
  } catch {
    return null;
  }
}

const alertColumn = (values: number[] | null): string | null => (values === null ? null : JSON.stringify(values));

export async function createGatewayUser(db: Kysely<Database>, fields: UserFields & { name: string }): Promise<GatewayUserView> {
  const now = nowIso();
  const row = await db
    .insertInto('gateway_users')
    .values({
      name: fields.name,
      email: fields.email ?? null,
      disabled: fields.disabled ? 1 : 0,
      budget_limit_micros: fields.budgetUsd == null ? null : usdToMicros(fields.budgetUsd),
      budget_period: fields.budgetPeriod ?? 'monthly',
      rpm: fields.rpm ?? null,
      tpm: fields.tpm ?? null,
      max_concurrent: fields.maxConcurrent ?? null,
      budget_alert_thresholds: alertColumn(fields.alertThresholds ?? null),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toUserView(row);
}

/** Finds a user by numeric id or by exact name. */
export async function findGatewayUser(db: Kysely<Database>, idOrName: string | number): Promise<GatewayUserView | undefined> {
  const asId = typeof idOrName === 'number' ? idOrName : /^\d+$/.test(idOrName) ? Number(idOrName) : null;
  let query = db.selectFrom('gateway_users').selectAll();
  query = asId !== null ? query.where((eb) => eb.or([eb('id', '=', asId), eb('name', '=', String(idOrName))])) : query.where('name', '=', String(idOrName));
  const row = await query.orderBy('id').executeTakeFirst();
  return row ? toUserView(row) : undefined;
}

export async function listGatewayUsers(db: Kysely<Database>): Promise<GatewayUserView[]> {
  const rows = await db.selectFrom('gateway_users').selectAll().orderBy('id').execute();
  return rows.map(toUserView);
}

/** Applies the given fields; returns the updated user, or undefined when it does not exist. */
export async function updateGatewayUser(db: Kysely<Database>, id: number, fields: UserFields): Promise<GatewayUserView | undefined> {
  const set: Record<string, unknown> = { updated_at: nowIso() };
  if (fields.name !== undefined) set.name = fields.name;
  if (fields.email !== undefined) set.email = fields.email;
  if (fields.disabled !== undefined) set.disabled = fields.disabled ? 1 : 0;
  if (fields.budgetUsd !== undefined) set.budget_limit_micros = fields.budgetUsd === null ? null : usdToMicros(fields.budgetUsd);
  if (fields.budgetPeriod !== undefined) set.budget_period = fields.budgetPeriod;
  if (fields.rpm !== undefined) set.rpm = fields.rpm;
  if (fields.tpm !== undefined) set.tpm = fields.tpm;
  if (fields.maxConcurrent !== undefined) set.max_concurrent = fields.maxConcurrent;
  if (fields.alertThresholds !== undefined) set.budget_alert_thresholds = alertColumn(fields.alertThresholds);
  const row = await db.updateTable('gateway_users').set(set).where('id', '=', id).returningAll().executeTakeFirst();
  return row ? toUserView(row) : undefined;
}

/** Deletes a user and its keys; request history is kept. Returns false when it did not exist. */
export async function deleteGatewayUser(db: Kysely<Database>, id: number): Promise<boolean> {
  const result = await db.deleteFrom('gateway_users').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The user with exactly this name (no id fallback), or undefined. */
export async function findGatewayUserByName(db: Kysely<Database>, name: string): Promise<GatewayUserView | undefined> {
  const row = await db.selectFrom('gateway_users').selectAll().where('name', '=', name).executeTakeFirst();
  return row ? toUserView(row) : undefined;
}

/** The user with this id, or undefined (a numeric name does not match, unlike `findGatewayUser`). */
export async function getGatewayUser(db: Kysely<Database>, id: number): Promise<GatewayUserView | undefined> {
  const row = await db.selectFrom('gateway_users').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toUserView(row) : undefined;
}
