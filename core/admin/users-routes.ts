/**
 * Gateway users in the admin API (`docs/admin-api.md` "Gateway users"): list with search, sort and
 * paging, create, read, edit, delete. Each user is shown with its live budget (from the budget
 * plugin's ledger, which holds spend not yet written and the reservations in flight), how many keys it
 * has and when one was last used.
 *
 * The user table is small (the people and services that hold keys), so the list is filtered, sorted
 * and paged in memory: that is also the only way to sort by live spend, which lives in the ledger.
 */
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import {
  booleanField, enumField, idParam, numberField, objectBody, onlyFields, queryInt, queryString, stringField, type Body,
} from './fields.ts';
import { conflict, invalidRequest, resourceNotFound } from '../errors.ts';
import { keyStatsByUser } from '../accounts/api-keys.ts';
import {
  BUDGET_PERIODS, checkAlertThresholds, createGatewayUser, deleteGatewayUser, findGatewayUserByName, getGatewayUser, listGatewayUsers,
  updateGatewayUser, type GatewayUserView, type UserFields,
} from '../accounts/gateway-users.ts';
import type { BudgetPeriod } from '../store/db-types.ts';
import { isUniqueViolation } from '../store/store.ts';
import type { BudgetStatus } from '../services.ts';
import { usd } from '../money/money.ts';
const iso = (ms: number): string => new Date(ms).toISOString();

/** A user's budget now. Figures are null when the budget plugin is not in the manifest (nothing tracks spend). */
export interface AdminUserBudget {
  /** Null = unlimited. */
  limit_usd: number | null;
  spent_usd: number | null;
  /** Exact spend of the current period, nano-USD. */
  spent_nanos: number | null;
  /** Held by requests in flight. */
  reserved_usd: number | null;
  /** Null when unlimited (or untracked). */
  remaining_usd: number | null;
  period: BudgetPeriod;
  /** ISO-8601; null for `never` (or untracked). */
  period_start: string | null;
  resets_at: string | null;
}

/** `AdminUser` of the admin API. */
export interface AdminUser extends GatewayUserView {
  budget: AdminUserBudget;
  /** All of the user's keys, revoked and expired included. */
  key_count: number;
  /** The latest use of any of its keys (ISO-8601), null when none was used. */
  last_used_at: string | null;
}

/** A user's or team's budget as the admin API shows it, from its settings and the budget plugin's live status (undefined without the plugin). */
export function budgetOf(user: Pick<GatewayUserView, 'budget_limit_usd' | 'budget_period'>, status: BudgetStatus | undefined): AdminUserBudget {
  if (!status) {
    return {
      limit_usd: user.budget_limit_usd, spent_usd: null, spent_nanos: null, reserved_usd: null, remaining_usd: null,
      period: user.budget_period, period_start: null, resets_at: null,
    };
  }
  return {
    limit_usd: status.limitNanos === null ? null : usd(status.limitNanos),
    spent_usd: usd(status.spentNanos),
    spent_nanos: status.spentNanos,
    reserved_usd: usd(status.reservedNanos),
    remaining_usd: status.remainingNanos === null ? null : usd(status.remainingNanos),
    period: status.period,
    period_start: status.period === 'never' ? null : iso(status.window.startMs),
    resets_at: status.window.resetsAtMs === null ? null : iso(status.window.resetsAtMs),
  };
}

/** Users as `AdminUser`s, in the given order (one query for all their key figures). */
export async function toAdminUsers(ctx: AdminContext, users: readonly GatewayUserView[]): Promise<AdminUser[]> {
  const stats = await keyStatsByUser(ctx.store.db, users.map((u) => u.id));
  const budgets = ctx.services.get('budget');
  const statuses = await Promise.all(users.map(async (user) => budgets?.status(user.id)));
  return users.map((user, i) => ({
    ...user,
    budget: budgetOf(user, statuses[i]),
    key_count: stats.get(user.id)?.keyCount ?? 0,
    last_used_at: stats.get(user.id)?.lastUsedAt ?? null,
  }));
}

const notFound = () => resourceNotFound('user_not_found', 'No gateway user has this id.', 'id');

/** The user named by the `:id` path parameter; 404 `user_not_found` otherwise. */
export async function requireUser(ctx: AdminContext, rawId: string | undefined): Promise<GatewayUserView> {
  const user = await getGatewayUser(ctx.store.db, idParam(rawId, notFound));
  if (!user) throw notFound();
  return user;
}

const USER_FIELDS = ['name', 'email', 'budget_limit_usd', 'budget_period', 'rpm', 'tpm', 'max_concurrent', 'budget_alert_thresholds', 'disabled'] as const;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** The user fields of a create (`name` required) or PATCH body (all optional). */
function readUserFields(raw: unknown, creating: boolean): UserFields {
  const body: Body = objectBody(raw);
  onlyFields(body, USER_FIELDS);
  const name = creating ? stringField(body, 'name', { required: true, maxLength: 100 }) : stringField(body, 'name', { nonEmpty: true, maxLength: 100 });
  // The CLI takes `--user ID|NAME`: a name of digits would read as an id.
  if (name !== undefined && name !== null && /^\d+$/.test(name)) throw invalidRequest('"name" must not be only digits (it would read as a user id).', 'name');
  const email = stringField(body, 'email', { nullable: true, maxLength: 254 });
  if (email && !EMAIL.test(email)) throw invalidRequest('"email" must be an email address such as alice@example.com.', 'email');
  const limit = { nullable: true, integer: true, min: 0, exclusiveMin: true, max: 1_000_000_000 } as const;
  // Absent fields stay undefined: the data functions leave them alone (PATCH) or default them.
  return {
    name: name ?? undefined,
    email,
    budgetUsd: numberField(body, 'budget_limit_usd', { nullable: true, min: 0, max: 1_000_000_000 }),
    budgetPeriod: enumField(body, 'budget_period', BUDGET_PERIODS),
    rpm: numberField(body, 'rpm', limit),
    tpm: numberField(body, 'tpm', limit),
    maxConcurrent: numberField(body, 'max_concurrent', limit),
    alertThresholds: alertThresholdsField(body),
    disabled: booleanField(body, 'disabled'),
  };
}

/** `budget_alert_thresholds`: absent (unchanged), null (the manifest default) or a list of percents. */
function alertThresholdsField(body: Body): number[] | null | undefined {
  const value = body.budget_alert_thresholds;
  if (value === undefined || value === null) return value;
  const checked = checkAlertThresholds(value);
  if (typeof checked === 'string') throw invalidRequest(`"budget_alert_thresholds" ${checked}, or null for the gateway's default.`, 'budget_alert_thresholds');
  return checked;
}

async function assertNameFree(ctx: AdminContext, name: string | undefined, selfId?: number): Promise<void> {
  if (name === undefined) return;
  const holder = await findGatewayUserByName(ctx.store.db, name);
  if (holder && holder.id !== selfId) throw conflict(`A gateway user named "${name}" exists already.`, 'name');
}

/** A concurrent write can still hit the UNIQUE index between the check and the write. */
function rethrowNameTaken(err: unknown, name: string | undefined): never {
  if (isUniqueViolation(err)) throw conflict(`A gateway user named "${name}" exists already.`, 'name');
  throw err;
}

const SORTS = ['name', 'created_at', 'spend', 'budget'] as const;
const ORDERS = ['asc', 'desc'] as const;

function queryEnum<T extends string>(query: URLSearchParams, name: string, values: readonly T[], fallback: T): T {
  const value = queryString(query, name);
  if (value === undefined) return fallback;
  if (!(values as readonly string[]).includes(value)) throw invalidRequest(`"${name}" must be one of: ${values.join(', ')}.`, name);
  return value as T;
}

// Built on first use: a Collator loads ICU collation data (~3 MB RSS) that a gateway whose admin
// never sorts users by name does not need.
let collator: Intl.Collator | undefined;
const nameCollator = (): Intl.Collator => (collator ??= new Intl.Collator('en', { sensitivity: 'base', numeric: true }));

/** Ascending comparison for `sort`; ties fall back to the id so pages are stable. */
/** Each user's spend of the current period, nano-USD (0 without the budget plugin). */
async function spendByUser(ctx: AdminContext, users: readonly GatewayUserView[]): Promise<Map<number, number>> {
  const budgets = ctx.services.get('budget');
  const statuses = await Promise.all(users.map(async (u) => budgets?.status(u.id)));
  return new Map(users.map((u, i) => [u.id, statuses[i]?.spentNanos ?? 0]));
}

function comparator(sort: (typeof SORTS)[number], spent: ReadonlyMap<number, number>): (a: GatewayUserView, b: GatewayUserView) => number {
  const spentOf = (u: GatewayUserView) => spent.get(u.id) ?? 0;
  const by: Record<(typeof SORTS)[number], (a: GatewayUserView, b: GatewayUserView) => number> = {
    name: (a, b) => nameCollator().compare(a.name, b.name),
    created_at: (a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0),
    spend: (a, b) => spentOf(a) - spentOf(b),
    // Unlimited is the largest budget.
    budget: (a, b) => (a.budget_limit_usd ?? Infinity) - (b.budget_limit_usd ?? Infinity) || 0,
  };
  return (a, b) => by[sort](a, b) || a.id - b.id;
}

export function createUsersRoutes(ctx: AdminContext): AdminRoute[] {
  const { db } = ctx.store;

  /** After a write: other caches are told, and this replica's budget ledger has re-read the user before the answer is built. */
  const written = async (userId: number) => {
    ctx.notifyChange();
    ctx.services.get('providers')?.invalidateCredentials(userId);
    await ctx.services.get('budget')?.invalidate(userId);
  };

  return [
    {
      method: 'GET',
      pattern: '/admin/api/users',
      async handler({ query }) {
        const search = queryString(query, 'search')?.toLowerCase();
        const sort = queryEnum(query, 'sort', SORTS, 'name');
        const order = queryEnum(query, 'order', ORDERS, 'asc');
        const limit = queryInt(query, 'limit', { default: 50, min: 1, max: 200 });
        const offset = queryInt(query, 'offset', { default: 0, min: 0, max: Number.MAX_SAFE_INTEGER });
        let users = await listGatewayUsers(db);
        if (search) users = users.filter((u) => u.name.toLowerCase().includes(search) || (u.email ?? '').toLowerCase().includes(search));
        const compare = comparator(sort, sort === 'spend' ? await spendByUser(ctx, users) : new Map());
        users.sort(order === 'asc' ? compare : (a, b) => compare(b, a));
        const data = await toAdminUsers(ctx, users.slice(offset, offset + limit));
        return json(200, { data, total: users.length, limit, offset });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/users',
      async handler({ body, audit }) {
        const fields = readUserFields(body, true) as UserFields & { name: string };
        await assertNameFree(ctx, fields.name);
        const user = await createGatewayUser(db, fields).catch((err: unknown) => rethrowNameTaken(err, fields.name));
        await written(user.id);
        audit({ action: 'users.create', objectType: 'user', objectId: user.id, before: null, after: user });
        return json(201, (await toAdminUsers(ctx, [user]))[0]);
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/users/:id',
      async handler({ params }) {
        const user = await requireUser(ctx, params.id);
        return json(200, (await toAdminUsers(ctx, [user]))[0]);
      },
    },
    {
      method: 'PATCH',
      pattern: '/admin/api/users/:id',
      async handler({ params, body, audit }) {
        const before = await requireUser(ctx, params.id);
        const { id } = before;
        const fields = readUserFields(body, false);
        await assertNameFree(ctx, fields.name, id);
        const user = await updateGatewayUser(db, id, fields).catch((err: unknown) => rethrowNameTaken(err, fields.name));
        if (!user) throw notFound();
        await written(id);
        audit({ action: 'users.update', objectType: 'user', objectId: id, before, after: user });
        return json(200, (await toAdminUsers(ctx, [user]))[0]);
      },
    },
    {
      method: 'DELETE',
      pattern: '/admin/api/users/:id',
      async handler({ params, audit }) {
        const before = await requireUser(ctx, params.id);
        const { id } = before;
        // Queued log rows of this user are written first, so they exist when the delete sets their
        // owner to NULL (history stays, attributed to "a deleted user").
        await ctx.services.get('requestLog')?.flush();
        if (!(await deleteGatewayUser(db, id))) throw notFound();
        await written(id);
        audit({ action: 'users.delete', objectType: 'user', objectId: id, before, after: null });
        return { status: 204 };
      },
    },
  ];
}
