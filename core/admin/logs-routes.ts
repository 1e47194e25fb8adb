/**
 * Usage-log routes (`docs/admin-api.md`, "Usage logs"): `GET /admin/api/logs` (keyset pages of
 * `LogRow`s, newest first), `GET /admin/api/logs/:id` (one row), `GET /admin/api/logs.csv` (the
 * same filters, streamed as CSV). Each read first flushes the logger's queue, so a request that
 * just finished is listed.
 */
import { nowIso } from '../store/store.ts';
import { resourceNotFound } from '../errors.ts';
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { idParam, queryInt, queryString } from './fields.ts';
import { getLogRow, decodeCursor, parseLogFilters, queryLogPage } from './logs-query.ts';
import { sendLogsCsv } from './logs-csv.ts';

/** `limit` of a page: 1..500, default 50. */
const PAGE_LIMIT = { default: 50, min: 1, max: 500 } as const;

export function createLogsRoutes(ctx: AdminContext): AdminRoute[] {
  const flushRequestLog = () => ctx.services.get('requestLog')?.flush();

  return [
    {
      method: 'GET',
      pattern: '/admin/api/logs',
      handler: async function listLogs({ query }) {
        const filters = parseLogFilters(query, ctx.clock());
        const limit = queryInt(query, 'limit', PAGE_LIMIT);
        const cursorParam = queryString(query, 'cursor');
        const cursor = cursorParam === undefined ? undefined : decodeCursor(cursorParam);
        await flushRequestLog();
        const page = await queryLogPage(ctx.store, filters, { limit, ...(cursor ? { cursor } : {}) });
        return json(200, { data: page.rows, next_cursor: page.nextCursor });
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/logs.csv',
      handler: async function exportLogsCsv({ query, res, requestId }) {
        // Validated before any byte is written, so a bad filter is still a JSON 400.
        const filters = parseLogFilters(query, ctx.clock());
        await flushRequestLog();
        await sendLogsCsv(res, { store: ctx.store, log: ctx.log, filters, requestId, date: nowIso(ctx.clock()).slice(0, 10) });
        return 'sent' as const;
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/logs/:id',
      handler: async function getLog({ params }) {
        const notFound = () => resourceNotFound('log_not_found', `No request log row with id ${JSON.stringify(params.id)}.`, 'id');
        const id = idParam(params.id, notFound);
        await flushRequestLog();
        const row = await getLogRow(ctx.store, id);
        if (!row) throw notFound();
        return json(200, row);
      },
    },
  ];
}
