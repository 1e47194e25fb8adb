/**
 * Reconciliation in the admin API (`docs/admin-api.md`, "Reconciliation"): the runs of `tollgate
 * reconcile` and the daily job, newest first; one run with its day × provider × model rows (both
 * sides' tokens, requests and cost, the flag and its causes); and the stored admin credentials,
 * masked. Read-only: runs are started by the CLI and the daily job.
 */
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { idParam, queryInt } from './fields.ts';
import { resourceNotFound } from '../errors.ts';
import { getRun, listRuns } from '../reconcile/reconciliation-runs.ts';
import { listUsageReportCredentials } from '../accounts/usage-report-credentials.ts';

export function createReconciliationRoutes(ctx: AdminContext): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: '/admin/api/reconciliation/runs',
      handler: async function listReconciliationRuns({ query }) {
        const limit = queryInt(query, 'limit', { default: 30, min: 1, max: 200 });
        return json(200, { data: await listRuns(ctx.store.db, limit) });
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/reconciliation/runs/:id',
      handler: async function getReconciliationRun({ params }) {
        const notFound = () => resourceNotFound('reconciliation_run_not_found', `No reconciliation run with id ${JSON.stringify(params.id)}.`, 'id');
        const run = await getRun(ctx.store.db, idParam(params.id, notFound));
        if (!run) throw notFound();
        return json(200, run);
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/reconciliation/credentials',
      handler: async function listAdminCredentials() {
        return json(200, { data: await listUsageReportCredentials(ctx.store.db) });
      },
    },
  ];
}
