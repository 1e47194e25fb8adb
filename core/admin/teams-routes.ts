/**
 * Teams in the admin API (`docs/admin-api.md` "Teams"): list, create, read, edit, delete, and the
 * members. A `team-admin` reaches the routes marked `access: 'team'` and, through `assertTeamScope`,
 * only the teams its session names (`AdminIdentity.teams`); renaming, creating and deleting a team stay
 * with full admins (a rename would move the team out of, or into, some team-admin's scope).
 * Each team is shown with its live budget from the budget plugin's ledger, as a user is.
 */
import type { AdminContext, AdminIdentity, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { enumField, idParam, numberField, objectBody, onlyFields, stringField, type Body } from './fields.ts';
import { conflict, invalidRequest, resourceNotFound } from '../errors.ts';
import { BUDGET_PERIODS, checkAlertThresholds, getGatewayUser } from '../accounts/gateway-users.ts';
import {
  addTeamMember, createTeam, deleteTeam, findTeam, getTeam, listTeams, removeTeamMember, teamOfUser, updateTeam, type TeamFields, type TeamView,
} from '../accounts/teams.ts';
import { isUniqueViolation } from '../store/store.ts';
import { assertTeamScope, managesTeam } from './roles.ts';
import { roleForbidden } from './session-errors.ts';
import { budgetOf, type AdminUserBudget } from './users-routes.ts';

/** `AdminTeam` of the admin API: the team, its members' ids and its budget now. */
export interface AdminTeam extends TeamView {
  budget: AdminUserBudget;
}

const notFound = () => resourceNotFound('team_not_found', 'No team has this id.', 'id');
const userNotFound = () => resourceNotFound('user_not_found', 'No gateway user has this id.', 'user_id');

const TEAM_FIELDS = ['name', 'budget_limit_usd', 'budget_period', 'rpm', 'tpm', 'max_concurrent', 'models', 'budget_alert_thresholds'] as const;

/** `models`: glob patterns (non-empty strings); null or empty = every model. */
function modelsField(body: Body): string[] | null | undefined {
  const value = body.models;
  if (value === undefined || value === null) return value;
  if (!Array.isArray(value) || value.length > 100 || !value.every((p) => typeof p === 'string' && p.trim() !== '' && p.length <= 200)) {
    throw invalidRequest('"models" must be an array of model patterns (non-empty strings, e.g. ["openai/*", "claude-*"]), or null for every model.', 'models');
  }
  const patterns = value.map((p: string) => p.trim());
  return patterns.length > 0 ? patterns : null;
}

/** The team fields of a create (`name` required) or PATCH body (all optional; absent = unchanged). */
function readTeamFields(raw: unknown, creating: boolean): TeamFields {
  const body = objectBody(raw);
  onlyFields(body, TEAM_FIELDS);
  const name = creating ? stringField(body, 'name', { required: true, maxLength: 100 }) : stringField(body, 'name', { nonEmpty: true, maxLength: 100 });
  // The CLI takes a team as ID|NAME: a name of digits would read as an id.
  if (name !== undefined && name !== null && /^\d+$/.test(name)) throw invalidRequest('"name" must not be only digits (it would read as a team id).', 'name');
  const limit = { nullable: true, integer: true, min: 0, exclusiveMin: true, max: 1_000_000_000 } as const;
  const thresholds = body.budget_alert_thresholds;
  let alertThresholds: number[] | null | undefined = thresholds as null | undefined;
  if (thresholds !== undefined && thresholds !== null) {
    const checked = checkAlertThresholds(thresholds);
    if (typeof checked === 'string') throw invalidRequest(`"budget_alert_thresholds" ${checked}, or null for the gateway's default.`, 'budget_alert_thresholds');
    alertThresholds = checked;
  }
  return {
    name: name ?? undefined,
    budgetUsd: numberField(body, 'budget_limit_usd', { nullable: true, min: 0, max: 1_000_000_000 }),
    budgetPeriod: enumField(body, 'budget_period', BUDGET_PERIODS),
    rpm: numberField(body, 'rpm', limit),
    tpm: numberField(body, 'tpm', limit),
    maxConcurrent: numberField(body, 'max_concurrent', limit),
    models: modelsField(body),
    alertThresholds,
  };
}

const nameTaken = (name: string | undefined) => conflict(`A team named "${name}" exists already.`, 'name');

export function createTeamsRoutes(ctx: AdminContext): AdminRoute[] {
  const { db } = ctx.store;

  async function toAdminTeams(teams: readonly TeamView[]): Promise<AdminTeam[]> {
    const budgets = ctx.services.get('budget');
    const statuses = await Promise.all(teams.map(async (team) => budgets?.teamStatus(team.id)));
    return teams.map((team, i) => ({ ...team, budget: budgetOf(team, statuses[i]) }));
  }

  /** The team of the `:id` path parameter, if `admin` may reach it: 404 `team_not_found`, 403 `team_forbidden`. */
  async function requireTeam(rawId: string | undefined, admin: AdminIdentity | null): Promise<TeamView> {
    const team = await getTeam(db, idParam(rawId, notFound));
    if (!team) throw notFound();
    if (admin) assertTeamScope(admin, team.name);
    return team;
  }

  async function assertNameFree(name: string | undefined, selfId?: number): Promise<void> {
    if (name === undefined) return;
    const holder = await findTeam(db, name);
    if (holder && holder.name === name && holder.id !== selfId) throw nameTaken(name);
  }

  /** After a write: caches of keys and limits are told, and this replica's ledger has re-read the team. */
  const written = async (teamId: number, userId?: number) => {
    ctx.notifyChange();
    const budgets = ctx.services.get('budget');
    await budgets?.invalidateTeam(teamId);
    if (userId !== undefined) await budgets?.invalidate(userId);
  };

  const one = async (team: TeamView) => (await toAdminTeams([team]))[0];

  return [
    {
      method: 'GET',
      pattern: '/admin/api/teams',
      access: 'team',
      async handler({ admin }) {
        const teams = (await listTeams(db)).filter((t) => !admin || managesTeam(admin, t.name));
        return json(200, { data: await toAdminTeams(teams), total: teams.length });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/teams',
      async handler({ body, audit }) {
        const fields = readTeamFields(body, true) as TeamFields & { name: string };
        await assertNameFree(fields.name);
        const team = await createTeam(db, fields).catch((err: unknown) => {
          throw isUniqueViolation(err) ? nameTaken(fields.name) : err;
        });
        await written(team.id);
        audit({ action: 'teams.create', objectType: 'team', objectId: team.id, before: null, after: team });
        return json(201, await one(team));
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/teams/:id',
      access: 'team',
      async handler({ params, admin }) {
        return json(200, await one(await requireTeam(params.id, admin)));
      },
    },
    {
      method: 'PATCH',
      pattern: '/admin/api/teams/:id',
      access: 'team',
      async handler({ params, body, admin, audit, req }) {
        const before = await requireTeam(params.id, admin);
        const fields = readTeamFields(body, false);
        if (fields.name !== undefined && fields.name !== before.name && admin && admin.role !== 'admin') {
          throw roleForbidden(admin.role, 'PATCH', `${req.url ?? '/admin/api/teams/:id'} (renaming a team)`);
        }
        await assertNameFree(fields.name, before.id);
        const team = await updateTeam(db, before.id, fields).catch((err: unknown) => {
          throw isUniqueViolation(err) ? nameTaken(fields.name) : err;
        });
        if (!team) throw notFound();
        await written(team.id);
        audit({ action: 'teams.update', objectType: 'team', objectId: team.id, before, after: team });
        return json(200, await one(team));
      },
    },
    {
      method: 'DELETE',
      pattern: '/admin/api/teams/:id',
      async handler({ params, admin, audit }) {
        const before = await requireTeam(params.id, admin);
        // Queued log rows are written first, so they exist with the team's id (history keeps it).
        await ctx.services.get('requestLog')?.flush();
        if (!(await deleteTeam(db, before.id))) throw notFound();
        await written(before.id);
        for (const userId of before.member_ids) await ctx.services.get('budget')?.invalidate(userId);
        audit({ action: 'teams.delete', objectType: 'team', objectId: before.id, before, after: null });
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/teams/:id/members',
      access: 'team',
      async handler({ params, body, admin, audit }) {
        const before = await requireTeam(params.id, admin);
        const fields = objectBody(body);
        onlyFields(fields, ['user_id']);
        const userId = numberField(fields, 'user_id', { required: true, integer: true, min: 1 });
        if (!(await getGatewayUser(db, userId))) throw userNotFound();
        // Adding moves the user out of its current team: a team-admin must manage that one too.
        const current = await teamOfUser(db, userId);
        if (current && admin) assertTeamScope(admin, current.name);
        if (!(await addTeamMember(db, before.id, userId))) throw userNotFound();
        const team = (await getTeam(db, before.id)) ?? before;
        await written(team.id, userId);
        if (current && current.id !== team.id) await ctx.services.get('budget')?.invalidateTeam(current.id);
        audit({ action: 'teams.add_member', objectType: 'team', objectId: team.id, before, after: team });
        return json(200, await one(team));
      },
    },
    {
      method: 'DELETE',
      pattern: '/admin/api/teams/:id/members/:userId',
      access: 'team',
      async handler({ params, admin, audit }) {
        const before = await requireTeam(params.id, admin);
        const userId = idParam(params.userId, userNotFound);
        if (!(await removeTeamMember(db, before.id, userId))) throw resourceNotFound('user_not_found', 'This gateway user is not a member of this team.', 'userId');
        const team = (await getTeam(db, before.id)) ?? before;
        await written(team.id, userId);
        audit({ action: 'teams.remove_member', objectType: 'team', objectId: team.id, before, after: team });
        return json(200, await one(team));
      },
    },
  ];
}
