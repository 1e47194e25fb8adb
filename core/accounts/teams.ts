/**
 * Teams (schema v23): groups of gateway users with their own calendar budget, rpm / tpm /
 * concurrency limits and model allow-list, applied on top of each member's own (docs/admin-api.md
 * "Teams", docs/budgets-and-pricing.md "Team budgets"). A user belongs to at most one team
 * (`gateway_users.team_id`); deleting a team leaves its members without one (ON DELETE SET NULL)
 * and keeps the request history's `team_id`.
 *
 * Money crosses this module's boundary in USD (what operators type) and is stored as integer
 * micro-USD (limit) and nano-USD (spend), as for users. Every query is Kysely, for both engines.
 */
import type { Kysely } from 'kysely';
import type { BudgetPeriod, Database, Team } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import { microsToUsd, usdToMicros } from '../money/money.ts';
import { readAlertThresholds } from './gateway-users.ts';
import { modelsColumn, parseModelsColumn } from './api-keys.ts';

/** A team as shown by the CLI and APIs. */
export interface TeamView {
  id: number;
  name: string;
  /** USD; null = no team budget. */
  budget_limit_usd: number | null;
  budget_period: BudgetPeriod;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  /** Glob patterns of the models members may call (on top of their keys'); null = every model. */
  models: string[] | null;
  /** Percents of the limit; null = the budget plugin's `alerts.thresholds`. */
  budget_alert_thresholds: number[] | null;
  /** Members, by id, ascending (filled by `findTeam` / `listTeams`). */
  member_ids: number[];
  created_at: string;
  updated_at: string;
}

export interface TeamFields {
  name?: string;
  /** USD; null = no team budget. */
  budgetUsd?: number | null;
  budgetPeriod?: BudgetPeriod;
  rpm?: number | null;
  tpm?: number | null;
  maxConcurrent?: number | null;
  models?: readonly string[] | null;
  /** Already checked (`checkAlertThresholds`); null = the manifest default. */
  alertThresholds?: number[] | null;
}

export function toTeamView(row: Team, memberIds: number[] = []): TeamView {
  return {
    id: row.id,
    name: row.name,
    budget_limit_usd: row.budget_limit_micros === null ? null : microsToUsd(row.budget_limit_micros),
    budget_period: row.budget_period,
    rpm: row.rpm,
    tpm: row.tpm,
    max_concurrent: row.max_concurrent,
    models: parseModelsColumn(row.models),
    budget_alert_thresholds: readAlertThresholds(row.budget_alert_thresholds),
    member_ids: memberIds,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const alertColumn = (values: number[] | null): string | null => (values === null ? null : JSON.stringify(values));

async function membersOf(db: Kysely<Database>, teamIds: readonly number[]): Promise<Map<number, number[]>> {
  const byTeam = new Map<number, number[]>();
  if (teamIds.length === 0) return byTeam;
  const rows = await db.selectFrom('gateway_users').select(['id', 'team_id']).where('team_id', 'in', teamIds).orderBy('id').execute();
  for (const row of rows) {
    const list = byTeam.get(row.team_id!) ?? [];
    list.push(row.id);
    byTeam.set(row.team_id!, list);
  }
  return byTeam;
}

/** Creates a team; throws the store's unique-constraint error when the name is taken. */
export async function createTeam(db: Kysely<Database>, fields: TeamFields & { name: string }): Promise<TeamView> {
  const now = nowIso();
  const row = await db
    .insertInto('teams')
    .values({
      name: fields.name,
      budget_limit_micros: fields.budgetUsd == null ? null : usdToMicros(fields.budgetUsd),
      budget_period: fields.budgetPeriod ?? 'monthly',
      rpm: fields.rpm ?? null,
      tpm: fields.tpm ?? null,
      max_concurrent: fields.maxConcurrent ?? null,
      models: modelsColumn(fields.models ?? null),
      budget_alert_thresholds: alertColumn(fields.alertThresholds ?? null),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toTeamView(row);
}

/** Finds a team by numeric id or by exact name, with its members. */
export async function findTeam(db: Kysely<Database>, idOrName: string | number): Promise<TeamView | undefined> {
  const asId = typeof idOrName === 'number' ? idOrName : /^\d+$/.test(idOrName) ? Number(idOrName) : null;
  let query = db.selectFrom('teams').selectAll();
  query = asId !== null ? query.where((eb) => eb.or([eb('id', '=', asId), eb('name', '=', String(idOrName))])) : query.where('name', '=', String(idOrName));
  const row = await query.orderBy('id').executeTakeFirst();
  if (!row) return undefined;
  return toTeamView(row, (await membersOf(db, [row.id])).get(row.id) ?? []);
}

/** The team with this id (a numeric name does not match), with its members; undefined when none. */
export async function getTeam(db: Kysely<Database>, id: number): Promise<TeamView | undefined> {
  const row = await db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return toTeamView(row, (await membersOf(db, [row.id])).get(row.id) ?? []);
}

/** Every team (or those named in `names`), by id, with their members. */
export async function listTeams(db: Kysely<Database>, names?: readonly string[]): Promise<TeamView[]> {
  let query = db.selectFrom('teams').selectAll().orderBy('id');
  if (names) {
    if (names.length === 0) return [];
    query = query.where('name', 'in', names);
  }
  const rows = await query.execute();
  const members = await membersOf(db, rows.map((r) => r.id));
  return rows.map((row) => toTeamView(row, members.get(row.id) ?? []));
}

/** Applies the given fields; returns the updated team, or undefined when it does not exist. */
export async function updateTeam(db: Kysely<Database>, id: number, fields: TeamFields): Promise<TeamView | undefined> {
  const set: Record<string, unknown> = { updated_at: nowIso() };
  if (fields.name !== undefined) set.name = fields.name;
  if (fields.budgetUsd !== undefined) set.budget_limit_micros = fields.budgetUsd === null ? null : usdToMicros(fields.budgetUsd);
  if (fields.budgetPeriod !== undefined) set.budget_period = fields.budgetPeriod;
  if (fields.rpm !== undefined) set.rpm = fields.rpm;
  if (fields.tpm !== undefined) set.tpm = fields.tpm;
  if (fields.maxConcurrent !== undefined) set.max_concurrent = fields.maxConcurrent;
  if (fields.models !== undefined) set.models = modelsColumn(fields.models);
  if (fields.alertThresholds !== undefined) set.budget_alert_thresholds = alertColumn(fields.alertThresholds);
  const row = await db.updateTable('teams').set(set).where('id', '=', id).returningAll().executeTakeFirst();
  return row ? getTeam(db, row.id) : undefined;
}

/** Deletes a team (its members stay, without a team); false when it did not exist. */
export async function deleteTeam(db: Kysely<Database>, id: number): Promise<boolean> {
  // Explicit as well as ON DELETE SET NULL: SQLite enforces foreign keys only with the pragma on.
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('gateway_users').set({ team_id: null }).where('team_id', '=', id).execute();
    const result = await trx.deleteFrom('teams').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/**
 * Makes user `userId` a member of team `teamId` (moving it out of any other team: a user belongs to
 * at most one). False when the user does not exist.
 */
export async function addTeamMember(db: Kysely<Database>, teamId: number, userId: number): Promise<boolean> {
  const result = await db.updateTable('gateway_users').set({ team_id: teamId, updated_at: nowIso() }).where('id', '=', userId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Removes user `userId` from team `teamId`; false when it was not a member. */
export async function removeTeamMember(db: Kysely<Database>, teamId: number, userId: number): Promise<boolean> {
  const result = await db.updateTable('gateway_users').set({ team_id: null, updated_at: nowIso() }).where('id', '=', userId).where('team_id', '=', teamId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The team of user `userId` (id, name and model allow-list: null = every model), or null. */
export async function teamOfUser(db: Kysely<Database>, userId: number): Promise<{ id: number; name: string; models: string[] | null } | null> {
  const row = await db.selectFrom('gateway_users as u').innerJoin('teams as t', 't.id', 'u.team_id').select(['t.id', 't.name', 't.models']).where('u.id', '=', userId).executeTakeFirst();
  return row ? { id: row.id, name: row.name, models: parseModelsColumn(row.models) } : null;
}
