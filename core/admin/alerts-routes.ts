/**
 * `GET /admin/api/alerts?user_id&state&limit` (`docs/admin-api.md`, "Budget alerts"): the budget
 * alerts fired, newest first, with their webhook delivery state, for the dashboard.
 */
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { queryInt, queryString } from './fields.ts';
import { invalidRequest } from '../errors.ts';
import { BUDGET_ALERT_STATES, listBudgetAlerts } from '../money/budget-alerts.ts';
import type { BudgetAlertState } from '../store/db-types.ts';

function stateParam(query: URLSearchParams): BudgetAlertState | undefined {
  const value = queryString(query, 'state');
  if (value === undefined) return undefined;
  if (!(BUDGET_ALERT_STATES as readonly string[]).includes(value)) throw invalidRequest(`"state" must be one of: ${BUDGET_ALERT_STATES.join(', ')}.`, 'state');
  return value as BudgetAlertState;
}

export function createAlertsRoutes(ctx: AdminContext): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: '/admin/api/alerts',
      handler: async function listAlerts({ query }) {
        const limit = queryInt(query, 'limit', { default: 20, min: 1, max: 200 });
        const userId = queryInt(query, 'user_id', { min: 1, max: Number.MAX_SAFE_INTEGER });
        const state = stateParam(query);
        // Alerts are written with their spend by the write-behind queue: write what is queued first.
        await ctx.services.get('requestLog')?.flush();
        return json(200, { data: await listBudgetAlerts(ctx.store.db, { limit, ...(userId !== undefined ? { userId } : {}), ...(state ? { state } : {}) }) });
      },
    },
  ];
}
