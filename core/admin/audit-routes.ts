/**
 * The audit log in the admin API (docs/admin-api.md "Audit log", docs/audit.md): `GET /admin/api/audit`
 * (filters, pages newest first, `next_cursor`), `GET /admin/api/audit.csv` (every matching row, CSV
 * through csv-stringify as the usage-log export) and `GET /admin/api/audit/verify` (the chain check).
 * Reads only: a viewer may call them.
 */
import type { ServerResponse } from 'node:http';
import { stringify } from 'csv-stringify/sync';
import { invalidRequest } from '../errors.ts';
import { nowIso, type Store } from '../store/store.ts';
import { listAudit, type AuditFilters } from '../audit/query.ts';
import { verifyAuditChain } from '../audit/verify.ts';
import type { AuditRow } from '../audit/audit.ts';
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { queryInt, queryString } from './fields.ts';

const PAGE_LIMIT = { default: 50, min: 1, max: 500 } as const;
/** Rows read per query of the CSV export. */
const CSV_PAGE_ROWS = 1000;
export const AUDIT_CSV_COLUMNS = ['id', 'at', 'actor', 'actor_kind', 'role', 'ip', 'action', 'object_type', 'object_id', 'before', 'after', 'request_id', 'prev_hash', 'hash'] as const;
/** A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection"), as in logs-csv-format.ts. */
const FORMULA_START = /^[=+\-@\t\r]/;

function isoParam(query: URLSearchParams, name: string): string | undefined {
  const raw = queryString(query, name);
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw invalidRequest(`"${name}" must be an ISO-8601 time such as 2026-01-31 or 2026-01-31T12:00:00Z.`, name);
  return nowIso(ms);
}

/** The filters of both listings (without paging). */
function parseAuditFilters(query: URLSearchParams): Omit<AuditFilters, 'limit'> {
  const filters: Omit<AuditFilters, 'limit'> = {};
  const actor = queryString(query, 'actor');
  const action = queryString(query, 'action');
  const objectType = queryString(query, 'object_type');
  const objectId = queryString(query, 'object_id');
  const from = isoParam(query, 'from');
  const to = isoParam(query, 'to');
  if (actor !== undefined) filters.actor = actor;
  if (action !== undefined) filters.action = action;
  if (objectType !== undefined) filters.objectType = objectType;
  if (objectId !== undefined) filters.objectId = objectId;
  if (from !== undefined) filters.from = from;
  if (to !== undefined) filters.to = to;
  return filters;
}

function csvRecords(rows: readonly AuditRow[], header: boolean): string {
  const records = rows.map((row) => ({ ...row, before: row.before === null ? '' : JSON.stringify(row.before), after: row.after === null ? '' : JSON.stringify(row.after) }));
  return stringify(records, {
    header, columns: [...AUDIT_CSV_COLUMNS], record_delimiter: 'windows', quoted_match: /[\r\n]/,
    cast: { string: (value) => (FORMULA_START.test(value) ? `'${value}` : value) },
  });
}

/** Writes every matching row, newest first, page by page, waiting for the socket between pages. */
async function sendAuditCsv(res: ServerResponse, store: Store, filters: Omit<AuditFilters, 'limit'>, requestId: string, date: string): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="tollgate-audit-${date}.csv"`,
    'cache-control': 'no-store',
    'x-request-id': requestId,
  });
  let cursor: number | undefined;
  let header = true;
  for (;;) {
    const page = await listAudit(store, { ...filters, limit: CSV_PAGE_ROWS, ...(cursor === undefined ? {} : { cursor }) });
    const text = csvRecords(page.data, header);
    header = false;
    if (text && !res.write(text)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
    if (page.next_cursor === null || res.destroyed) break;
    cursor = page.next_cursor;
  }
  res.end();
}

export function createAuditRoutes(ctx: AdminContext): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: '/admin/api/audit',
      handler: async function listAuditRows({ query }) {
        const filters = parseAuditFilters(query);
        const limit = queryInt(query, 'limit', PAGE_LIMIT);
        const cursor = queryInt(query, 'cursor', { min: 1, max: Number.MAX_SAFE_INTEGER });
        return json(200, await listAudit(ctx.store, { ...filters, limit, ...(cursor === undefined ? {} : { cursor }) }));
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/audit.csv',
      handler: async function exportAuditCsv({ query, res, requestId }) {
        const filters = parseAuditFilters(query);
        await sendAuditCsv(res, ctx.store, filters, requestId, nowIso(ctx.clock()).slice(0, 10));
        return 'sent' as const;
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/audit/verify',
      handler: async () => json(200, await verifyAuditChain(ctx.store)),
    },
  ];
}
