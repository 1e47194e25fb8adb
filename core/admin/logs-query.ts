/**
 * Usage-log reads for the admin API (`docs/admin-api.md`, "Usage logs"): the filters of
 * `GET /admin/api/logs` parsed from a query string, and keyset pages of `LogRow`s, newest first.
 *
 * Why keyset and not OFFSET: the order is `(created_at DESC, id DESC)` and a page starts strictly
 * after the previous page's last `(created_at, id)`, so a page costs the same at row 50 and at row
 * 900,000, and rows that arrive while someone pages (they are newer) never shift, skip or repeat rows.
 * Every filter but `status` has an index led by its column and followed by `created_at` (rowid = id is
 * the implicit last index column), so SQLite walks one index backwards with no sort (schema.sql v4);
 * PostgreSQL's indexes name `id` as their last column for the same walk (the baseline).
 */
import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { Store } from '../store/store.ts';

/** What the log queries need of a store: its query builder (one on a read-only connection will do). */
export type LogReader = Pick<Store, 'db'>;
import { nowIso } from '../store/store.ts';
import type { Database } from '../store/db-types.ts';
import { invalidRequest } from '../errors.ts';
import { usd } from '../money/money.ts';
import { parseQueryTime, queryInt, queryString } from './fields.ts';
import { parseKeyTagsColumn, parseTagArgument, tagNeedle, type KeyTags } from '../accounts/key-tags.ts';

/** One request as the admin API shows it. `user_id` is null once the user is deleted. */
export interface LogRow {
  id: number;
  request_id: string;
  created_at: string;
  user_id: number | null;
  user_name: string | null;
  api_key_id: number | null;
  api_key_prefix: string | null;
  api_key_name: string | null;
  /** The endpoint (dialect operation): `chat.completions`, `messages.create`, ... */
  endpoint: string | null;
  provider: string | null;
  model_requested: string | null;
  model_served: string | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  /** `cost_nanos / 1e9`; null when nothing was billed. */
  cost_usd: number | null;
  /** Integer nano-USD (1 USD = 1e9); null when nothing was billed. */
  cost_nanos: number | null;
  unpriced: boolean;
  usage_estimated: boolean;
  latency_ms: number;
  ttft_ms: number | null;
  /** The tags of the key that made the request, as they were then (`core/accounts/key-tags.ts`); null = none. */
  tags: KeyTags | null;
  /** The requester's team when the request was made; null = none. `team_name` is null once the team is deleted. */
  team_id: number | null;
  team_name: string | null;
}

/** The `LogRow` fields in API order (the CSV columns). */
export const LOG_ROW_FIELDS: ReadonlyArray<keyof LogRow> = [
  'id', 'request_id', 'created_at', 'user_id', 'user_name', 'api_key_id', 'api_key_prefix', 'api_key_name',
  'endpoint', 'provider', 'model_requested', 'model_served', 'status', 'error_code', 'stream',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cache_write_tokens', 'cost_usd', 'cost_nanos',
  'unpriced', 'usage_estimated', 'latency_ms', 'ttft_ms', 'tags', 'team_id', 'team_name',
];

/** HTTP status filter: one code, or a half-open range `[min, max)` (`4xx` = [400, 500), `error` = [400, ∞)). */
export type StatusFilter = { code: number } | { min: number; max: number };

/** Parsed filters; absent = no restriction. Timestamps are ISO-8601 UTC with ms, as stored. */
export interface LogFilters {
  userId?: number;
  teamId?: number;
  keyId?: number;
  provider?: string;
  /** Matches `model_requested` or `model_served`. */
  model?: string;
  status?: StatusFilter;
  /** Inclusive lower bound on `created_at`. */
  fromIso?: string;
  /** Exclusive upper bound on `created_at`. */
  toIso?: string;
  /** Key tags the row must carry, each `[name, value]` (all of them). */
  tags?: Array<[name: string, value: string]>;
}

/** Where a page starts: strictly after this row in (created_at DESC, id DESC) order. */
export interface LogCursor {
  createdAt: string;
  id: number;
}

const DAY_MS = 86_400_000;
const MAX_ID = Number.MAX_SAFE_INTEGER;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The filters of a logs query string. `from`/`to` accept ISO-8601 or `YYYY-MM-DD`; a date means its
 * whole UTC day, so `to=2026-11-21` ends at 2026-11-22T00:00:00.000Z (exclusive) and includes the 21st.
 * Throws the contract's 400 with `param` naming the bad parameter.
 */
export function parseLogFilters(query: URLSearchParams, nowMs: number): LogFilters {
  const filters: LogFilters = {};
  const userId = queryInt(query, 'user_id', { min: 1, max: MAX_ID });
  if (userId !== undefined) filters.userId = userId;
  const teamId = queryInt(query, 'team_id', { min: 1, max: MAX_ID });
  if (teamId !== undefined) filters.teamId = teamId;
  const keyId = queryInt(query, 'key_id', { min: 1, max: MAX_ID });
  if (keyId !== undefined) filters.keyId = keyId;
  const provider = queryString(query, 'provider');
  if (provider !== undefined) filters.provider = provider;
  const model = queryString(query, 'model');
  if (model !== undefined) filters.model = model;
  const status = queryString(query, 'status');
  if (status !== undefined) filters.status = parseStatus(status);
  const from = queryString(query, 'from');
  if (from !== undefined) filters.fromIso = nowIso(parseQueryTime(from, 'from', nowMs));
  const to = queryString(query, 'to');
  if (to !== undefined) filters.toIso = nowIso(parseQueryTime(to, 'to', nowMs) + (isDate(to) ? DAY_MS : 0));
  const tags = query.getAll('tag');
  if (tags.length > 0) filters.tags = tags.map((t) => parseTagArgument(t, 'tag'));
  if (filters.fromIso && filters.toIso && filters.fromIso >= filters.toIso) {
    throw invalidRequest('"to" must be later than "from".', 'to');
  }
  return filters;
}

function isDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value);
}

function parseStatus(value: string): StatusFilter {
  const lower = value.toLowerCase();
  if (/^[1-5]\d\d$/.test(lower)) return { code: Number(lower) };
  if (/^[1-5]xx$/.test(lower)) {
    const min = Number(lower[0]) * 100;
    return { min, max: min + 100 };
  }
  if (lower === 'error') return { min: 400, max: 1000 };
  throw invalidRequest('"status" must be a status code (e.g. 429), a class (2xx, 4xx, 5xx) or "error".', 'status');
}

/** The opaque `next_cursor` of a page whose last row is `row`: base64url of `[created_at, id]`. */
export function encodeCursor(row: { created_at: string; id: number }): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

/** A `cursor` parameter back into its row position; 400 (`param: "cursor"`) if it was not ours. */
export function decodeCursor(value: string): LogCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && ISO_MS.test(parsed[0])
    && Number.isSafeInteger(parsed[1]) && (parsed[1] as number) > 0) {
    return { createdAt: parsed[0], id: parsed[1] as number };
  }
  throw invalidRequest('"cursor" is not a cursor this API returned; start again without it.', 'cursor');
}

type RequestsEb = ExpressionBuilder<Database & { r: Database['llm_requests'] }, 'r'>;

/** The WHERE terms of the filters and the cursor; `modelColumn` picks one side of the model OR. */
function conditions(eb: RequestsEb, filters: LogFilters, cursor: LogCursor | undefined, modelColumn?: 'r.model_requested' | 'r.model_served'): Expression<SqlBool>[] {
  const terms: Expression<SqlBool>[] = [];
  if (filters.userId !== undefined) terms.push(eb('r.gateway_user_id', '=', filters.userId));
  if (filters.keyId !== undefined) terms.push(eb('r.api_key_id', '=', filters.keyId));
  if (filters.teamId !== undefined) terms.push(eb('r.team_id', '=', filters.teamId));
  if (filters.provider !== undefined) terms.push(eb('r.provider', '=', filters.provider));
  if (filters.model !== undefined) {
    terms.push(modelColumn
      ? eb(modelColumn, '=', filters.model)
      : eb.or([eb('r.model_requested', '=', filters.model), eb('r.model_served', '=', filters.model)]));
  }
  const status = filters.status;
  if (status && 'code' in status) terms.push(eb('r.status', '=', status.code));
  if (status && 'min' in status) terms.push(eb('r.status', '>=', status.min), eb('r.status', '<', status.max));
  if (filters.fromIso !== undefined) terms.push(eb('r.created_at', '>=', filters.fromIso));
  if (filters.toIso !== undefined) terms.push(eb('r.created_at', '<', filters.toIso));
  // An exact, case-sensitive substring test that reads the same on both engines (key-tags.ts says why it is exact).
  for (const [name, value] of filters.tags ?? []) terms.push(sql<SqlBool>`replace(${eb.ref('r.tags')}, ${tagNeedle(name, value)}, '') <> ${eb.ref('r.tags')}`);
  if (cursor) {
    // Spelled as a range on created_at plus a tie-break, so every (x, created_at) index can seek to it.
    terms.push(eb('r.created_at', '<=', cursor.createdAt));
    terms.push(eb.or([eb('r.created_at', '<', cursor.createdAt), eb('r.id', '<', cursor.id)]));
  }
  return terms;
}

/** The ids of one side of the model OR, newest first, at most `limit`: one index walk each. */
function modelArm(store: LogReader, filters: LogFilters, cursor: LogCursor | undefined, limit: number, column: 'r.model_requested' | 'r.model_served') {
  return store.db
    .selectFrom('llm_requests as r')
    .select('r.id')
    .where((eb) => eb.and(conditions(eb, filters, cursor, column)))
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit);
}

/** The selected columns of a `LogRow`, with the user's and key's names, from `r`, `u` and `k`. */
function selectLogRows(store: LogReader) {
  return store.db
    .selectFrom('llm_requests as r')
    .leftJoin('gateway_users as u', 'u.id', 'r.gateway_user_id')
    .leftJoin('api_keys as k', 'k.id', 'r.api_key_id')
    .leftJoin('teams as t', 't.id', 'r.team_id')
    .select([
      'r.id', 'r.request_id', 'r.created_at', 'r.gateway_user_id', 'u.name as user_name', 'r.api_key_id',
      'k.key_prefix as api_key_prefix', 'k.name as api_key_name', 'r.endpoint', 'r.provider', 'r.model_requested', 'r.model_served',
      'r.status', 'r.error_code', 'r.stream', 'r.prompt_tokens', 'r.completion_tokens', 'r.cached_tokens',
      'r.cache_write_tokens', 'r.cost_nanos', 'r.unpriced', 'r.usage_estimated', 'r.latency_ms', 'r.ttft_ms', 'r.tags', 'r.team_id', 't.name as team_name',
    ]);
}

/**
 * The page query, compiled (exported so tests can `EXPLAIN QUERY PLAN` it). With a `model` filter
 * the two sides of "requested OR served" are walked separately, `limit` rows each, and merged:
 * one OR over two columns would otherwise either scan the time index for a rare model or sort every
 * row of a common one.
 */
export function compileLogPageQuery(store: LogReader, filters: LogFilters, cursor: LogCursor | undefined, limit: number) {
  let query = selectLogRows(store);
  if (filters.model === undefined) {
    query = query.where((eb) => eb.and(conditions(eb, filters, cursor)));
  } else {
    const requested = modelArm(store, filters, cursor, limit, 'r.model_requested');
    const served = modelArm(store, filters, cursor, limit, 'r.model_served');
    query = query.where('r.id', 'in', (eb) =>
      eb.selectFrom(requested.as('a')).select('a.id').union(eb.selectFrom(served.as('b')).select('b.id')));
  }
  return query.orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').limit(limit).compile();
}

/**
 * Every row matching `filters`, newest first, as one query with no limit: for a server-side cursor
 * (the PostgreSQL CSV export reads it in batches). The model filter is one OR here: a single
 * statement has no page size to bound each side by.
 */
export function compileLogExportQuery(store: LogReader, filters: LogFilters) {
  return selectLogRows(store)
    .where((eb) => eb.and(conditions(eb, filters, undefined)))
    .orderBy('r.created_at', 'desc').orderBy('r.id', 'desc')
    .compile();
}

/** A row as the store returns it: 0/1 flags, the user id under its column name, no `cost_usd`. */
export interface RawLogRow extends Omit<LogRow, 'user_id' | 'stream' | 'unpriced' | 'usage_estimated' | 'cost_usd' | 'tags'> {
  tags: string | null;
  gateway_user_id: number | null;
  stream: number;
  unpriced: number;
  usage_estimated: number;
}

/** A row as the store returns it, as the API shows it (flags as booleans, `cost_usd` added). */
export function toLogRow(raw: RawLogRow): LogRow {
  return {
    id: raw.id,
    request_id: raw.request_id,
    created_at: raw.created_at,
    user_id: raw.gateway_user_id,
    user_name: raw.user_name,
    api_key_id: raw.api_key_id,
    api_key_prefix: raw.api_key_prefix,
    api_key_name: raw.api_key_name,
    endpoint: raw.endpoint,
    provider: raw.provider,
    model_requested: raw.model_requested,
    model_served: raw.model_served,
    status: raw.status,
    error_code: raw.error_code,
    stream: raw.stream === 1,
    prompt_tokens: raw.prompt_tokens,
    completion_tokens: raw.completion_tokens,
    cached_tokens: raw.cached_tokens,
    cache_write_tokens: raw.cache_write_tokens,
    cost_usd: raw.cost_nanos === null ? null : usd(raw.cost_nanos),
    cost_nanos: raw.cost_nanos,
    unpriced: raw.unpriced === 1,
    usage_estimated: raw.usage_estimated === 1,
    latency_ms: raw.latency_ms,
    ttft_ms: raw.ttft_ms,
    tags: parseKeyTagsColumn(raw.tags),
    team_id: raw.team_id ?? null,
    team_name: raw.team_name ?? null,
  };
}

/** One page of rows matching `filters`, newest first, and the cursor of the next page (null at the end). */
export interface LogPage {
  rows: LogRow[];
  nextCursor: string | null;
}

/** Reads one page. One row more than `limit` is read to know whether a next page exists. */
export async function queryLogPage(store: LogReader, filters: LogFilters, page: { limit: number; cursor?: LogCursor }): Promise<LogPage> {
  const compiled = compileLogPageQuery(store, filters, page.cursor, page.limit + 1);
  const raw = (await store.db.executeQuery(compiled)).rows as RawLogRow[];
  const more = raw.length > page.limit;
  const rows = (more ? raw.slice(0, page.limit) : raw).map(toLogRow);
  const last = rows[rows.length - 1];
  return { rows, nextCursor: more && last ? encodeCursor(last) : null };
}

/** One upstream attempt of a request, as the log detail shows it (`core/proxy/upstream-attempts.ts`). */
export interface LogAttempt {
  provider: string;
  model: string;
  /** The upstream's HTTP status; null when it did not answer (connection refused, timeout). */
  status: number | null;
  /** Null for the attempt that served. */
  error_code: string | null;
  latency_ms: number;
}

/** A row with what only the detail shows: every upstream attempt, oldest first (null: nothing dispatched). */
export interface LogDetail extends LogRow {
  attempts: LogAttempt[] | null;
  /** The upstream's usage report as the gateway read it (OpenAI-shaped `usage`); null when none came (estimated). */
  usage_reported: Record<string, unknown> | null;
  /** The price the row was billed at (a Price's fields, USD per million tokens); null when unpriced. */
  billed_price: Record<string, unknown> | null;
  /** The plugin whose failure ended the request (error `plugin_error`); null otherwise. */
  error_plugin: string | null;
  /** Fields plugins added to the row (`logField` of the plugin SDK); null when none. */
  plugin_fields: Record<string, unknown> | null;
}

/** A JSON object column; null when absent or unreadable (a row written before the column existed). */
function parseObject(column: string | null | undefined): Record<string, unknown> | null {
  if (!column) return null;
  try {
    const parsed: unknown = JSON.parse(column);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `llm_requests.attempts` (JSON written by the logger) in the admin API's snake_case; null when absent or unreadable. */
function parseAttempts(column: string | null | undefined): LogAttempt[] | null {
  if (!column) return null;
  try {
    const parsed = JSON.parse(column) as Array<{ provider: string; model: string; status: number | null; errorCode: string | null; latencyMs: number }>;
    return parsed.map((a) => ({ provider: a.provider, model: a.model, status: a.status, error_code: a.errorCode, latency_ms: a.latencyMs }));
  } catch {
    return null;
  }
}

/** One request by its row id, with its attempts; undefined when there is none. */
export async function getLogRow(store: LogReader, id: number): Promise<LogDetail | undefined> {
  const compiled = store.db
    .selectFrom('llm_requests as r')
    .leftJoin('gateway_users as u', 'u.id', 'r.gateway_user_id')
    .leftJoin('api_keys as k', 'k.id', 'r.api_key_id')
    .leftJoin('teams as t', 't.id', 'r.team_id')
    .selectAll('r')
    .select(['u.name as user_name', 'k.key_prefix as api_key_prefix', 'k.name as api_key_name', 't.name as team_name'])
    .where('r.id', '=', id)
    .compile();
  const raw = (await store.db.executeQuery(compiled)).rows[0];
  return raw
    ? {
      ...toLogRow(raw), attempts: parseAttempts(raw.attempts), usage_reported: parseObject(raw.usage_reported), billed_price: parseObject(raw.billed_price),
      error_plugin: raw.error_plugin ?? null, plugin_fields: parseObject(raw.plugin_fields),
    }
    : undefined;
}
