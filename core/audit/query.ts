/**
 * The audit log's list (admin API `GET /admin/api/audit`, its CSV, `tollgate audit list`): newest first,
 * filtered by actor, action, object type and time, paged by id (`cursor` = the last id of the previous
 * page, so pages stay stable while rows are appended).
 */
import type { Store } from '../store/store.ts';
import type { AuditLogTable } from '../store/db-types.ts';
import type { AuditRow } from './audit.ts';

export interface AuditFilters {
  /** Exact actor (`alice`, `cli:root`). */
  actor?: string;
  /** Exact action (`users.update`), or a prefix ending in `*` (`users.*`). */
  action?: string;
  objectType?: string;
  objectId?: string;
  /** ISO-8601 bounds on `at`: from inclusive, to exclusive. */
  from?: string;
  to?: string;
  /** Rows older than this id (the previous page's `next_cursor`). */
  cursor?: number;
  /** Page size (callers cap it). */
  limit: number;
}

export interface AuditPage {
  data: AuditRow[];
  /** The id to pass as `cursor` for the next page; null on the last page. */
  next_cursor: number | null;
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A stored row as the API shows it: `before`/`after` parsed from their JSON text. */
export function toAuditRow(row: AuditLogTable): AuditRow {
  return { ...row, id: Number(row.id), actor_kind: row.actor_kind, before: parseJson(row.before), after: parseJson(row.after) };
}

/** One page of rows matching `filters`, newest first. */
export async function listAudit(store: Store, filters: AuditFilters): Promise<AuditPage> {
  let query = store.db.selectFrom('audit_log').selectAll();
  if (filters.actor !== undefined) query = query.where('actor', '=', filters.actor);
  if (filters.action !== undefined) {
    query = filters.action.endsWith('*')
      ? query.where('action', '>=', filters.action.slice(0, -1)).where('action', '<', `${filters.action.slice(0, -1)}\uffff`)
      : query.where('action', '=', filters.action);
  }
  if (filters.objectType !== undefined) query = query.where('object_type', '=', filters.objectType);
  if (filters.objectId !== undefined) query = query.where('object_id', '=', filters.objectId);
  if (filters.from !== undefined) query = query.where('at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('at', '<', filters.to);
  if (filters.cursor !== undefined) query = query.where('id', '<', filters.cursor);
  const rows = await query.orderBy('id', 'desc').limit(filters.limit + 1).execute();
  const more = rows.length > filters.limit;
  const data = rows.slice(0, filters.limit).map(toAuditRow);
  return { data, next_cursor: more ? data[data.length - 1]!.id : null };
}
