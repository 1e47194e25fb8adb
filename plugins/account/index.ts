/**
 * account: answers `GET /api/account` for the calling API key: who the caller is, their budget
 * (limit, spent, reserved, remaining, period, when it resets), their rate limits with what remains,
 * and their usage in the current budget period. Listed after budget and rate-limit, whose state it
 * shows through their services; without them the matching fields are null.
 *
 * Amounts are USD (nano-USD / 1e9, for display); times ISO-8601 UTC. The budget and usage views are
 * `core/accounts/account-view.ts`'s, shared with the portal's `GET /portal/api/me`; the request log is
 * flushed first so the caller's last request is counted.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import { jsonOk } from '../../core/openapi/openapi-errors.ts';
import { accountSchema } from './openapi.ts';
import type { Exchange } from '../../core/exchange.ts';
import { reply } from '../../core/plugin.ts';
import type { LimitState } from '../../core/services.ts';
import { budgetWindow } from '../../core/money/calendar-period.ts';
import { budgetView, usageSince as loggedUsageSince } from '../../core/accounts/account-view.ts';

function limitView(state: LimitState | null) {
  return state && { limit: state.limit, remaining: state.remaining, reset_ms: Math.ceil(state.resetMs) };
}

function createAccount(_config: Record<string, never>, ctx: PluginContext): Plugin {
  const { db } = ctx.store;

  async function usageSince(userId: number, sinceMs: number) {
    await ctx.services.get('requestLog')?.flush();
    return loggedUsageSince(db, userId, sinceMs);
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
