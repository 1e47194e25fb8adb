/**
 * account: answers `GET /api/account` for the calling API key: who the caller is, their budget
 * (limit, spent, reserved, remaining, period, when it resets), their rate limits with what remains,
 * and their usage in the current budget period. Listed after budget and rate-limit, whose state it
 * shows through their services; without them the matching fields are null.
 *
 * Amounts are USD (nano-USD / 1e9, for display); times ISO-8601 UTC. Usage comes from the quarter-hour
 * usage rollups (`core/request-log/usage-rollups.ts`: a budget period starts at a local midnight, a quarter-hour
 * boundary in every zone, so it is a few indexed rollup rows whatever the size of the log), flushed
 * first so the caller's last request is counted.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import { jsonOk } from '../../core/openapi/openapi-errors.ts';
import { accountSchema } from './openapi.ts';
import type { Exchange } from '../../core/exchange.ts';
import { reply } from '../../core/plugin.ts';
import { nowIso } from '../../core/store/store.ts';
import type { BudgetStatus, LimitState } from '../../core/services.ts';
import { budgetWindow } from '../../core/money/calendar-period.ts';
import { usd } from '../../core/money/money.ts';
import { usageSource } from '../../core/request-log/usage-rollups.ts';
import { sql } from 'kysely';
/** The columns the account sums: all in the rollups' covering index by user. */
const ACCOUNT_COLUMNS = ['requests', 'prompt_tokens', 'completion_tokens', 'cost_nanos'] as const;
const isoOrNull = (ms: number | null) => (ms === null ? null : nowIso(ms));

function budgetView(status: BudgetStatus | undefined, timeZone: string) {
  if (!status) return null;
  return {
    limit_usd: status.limitNanos === null ? null : usd(status.limitNanos),
    spent_usd: usd(status.spentNanos),
    reserved_usd: usd(status.reservedNanos),
    remaining_usd: status.remainingNanos === null ? null : usd(status.remainingNanos),
    period: status.period,
    period_start: status.period === 'never' ? null : nowIso(status.window.startMs),
    resets_at: isoOrNull(status.window.resetsAtMs),
    time_zone: timeZone,
  };
}

function limitView(state: LimitState | null) {
  return state && { limit: state.limit, remaining: state.remaining, reset_ms: Math.ceil(state.resetMs) };
}

function createAccount(_config: Record<string, never>, ctx: PluginContext): Plugin {
  const { db } = ctx.store;

  async function usageSince(userId: number, sinceMs: number) {
    await ctx.services.get('requestLog')?.flush();
    const usage = usageSource({ fromIso: nowIso(sinceMs), userId }, ACCOUNT_COLUMNS);
    const { rows } = await sql<{ requests: number; prompt_tokens: number; completion_tokens: number; cost_nanos: number }>`
      SELECT coalesce(sum(u.requests), 0) AS requests, coalesce(sum(u.prompt_tokens), 0) AS prompt_tokens,
        coalesce(sum(u.completion_tokens), 0) AS completion_tokens, coalesce(sum(u.cost_nanos), 0) AS cost_nanos
      FROM (${usage}) AS u`.execute(db);
    const row = rows[0]!;
    return {
      since: nowIso(sinceMs),
      requests: row.requests,
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      cost_usd: usd(row.cost_nanos),
    };
  }

  async function account(ex: Exchange) {
    const principal = ex.principal!;
    const [user, key] = await Promise.all([
      db.selectFrom('gateway_users').select(['id', 'name', 'email', 'budget_period']).where('id', '=', principal.gatewayUserId).executeTakeFirst(),
      db.selectFrom('api_keys').select(['id', 'name', 'key_prefix']).where('id', '=', principal.apiKeyId).executeTakeFirst(),
    ]);
    const budgets = ctx.services.get('budget');
    const status = await budgets?.status(principal.gatewayUserId);
    const timeZone = budgets?.timeZone ?? 'UTC';
    const window = status?.window ?? budgetWindow(user?.budget_period ?? 'monthly', ctx.clock(), timeZone);
    const limits = await ctx.services.get('rateLimit')?.statusOf(principal);
    return {
      object: 'account',
      user: { id: principal.gatewayUserId, name: user?.name ?? principal.gatewayUserName, email: user?.email ?? null },
      key: { id: principal.apiKeyId, name: key?.name ?? null, prefix: key?.key_prefix ?? null },
      budget: budgetView(status, timeZone),
      team: principal.team ? { id: principal.team.id, name: principal.team.name, budget: budgetView(await budgets?.teamStatus(principal.team.id), timeZone) } : null,
      rate_limits: { requests: limitView(limits?.requests ?? null), tokens: limitView(limits?.tokens ?? null) },
      usage: await usageSince(principal.gatewayUserId, window.startMs),
    };
  }

  return {
    name: 'account',
    // Not async: every request passes here, and only `GET /api/account` needs a promise.
    onRequest(ex) {
      if (ex.operation !== 'account.get' || !ex.principal) return;
      return account(ex).then((body) => reply(200, body));
    },
  };
}

export const account = definePlugin<Record<string, never>>({
  name: 'account',
  description: 'Answers GET /api/account: the caller\'s identity, budget, rate limits and usage this period.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  routes: [{
    method: 'GET', path: '/api/account', operation: 'account.get',
    doc: {
      operationId: 'getAccount',
      tag: { name: 'Account', description: 'The caller\'s own budget, limits and usage.' },
      summary: 'The caller\'s account',
      description: 'The gateway user behind the key: identity, budget (limit, spent, reserved, remaining, period, when it resets), rate limits with what remains, and usage this budget period.',
      success: jsonOk('The caller\'s identity, budget, rate limits and usage this budget period.', 'Account'),
      errors: {},
      schemas: { Account: accountSchema },
    },
  }],
  order: [
    { relation: 'after', plugin: 'budget', why: 'its budget figures come from the budget plugin, which must see the request first' },
    { relation: 'after', plugin: 'rate-limit', why: 'account calls count against the caller\'s request limit like any other' },
  ],
  create: createAccount,
});
