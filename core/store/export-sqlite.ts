/**
 * `tollgate export-sqlite --to postgres://…`: copies a single-node install's SQLite database into an
 * empty PostgreSQL database, every row of every table, ids kept (so keys, users, log rows and
 * rollups keep their references), then moves each identity sequence past the largest id so new rows
 * do not collide. One PostgreSQL transaction: an interrupted export leaves the target empty.
 *
 * The SQLite side is read in pages of `batchRows` by rowid order (the log can be millions of rows;
 * memory stays bounded), and checked afterwards: each table's row count must match in PostgreSQL.
 */
import pg from 'pg';
import type { Sqlite } from './store.ts';
import { migratePostgres, TollgateClient } from './store-postgres.ts';

/**
 * Tables in an order that satisfies every foreign key (parents first). `response_totals` and
 * `plugin_kv_totals` are not copied: PostgreSQL's triggers count the rows as they are copied in.
 */
export const EXPORT_TABLES = [
  'teams', 'gateway_users', 'api_keys', 'admin_users', 'admin_sessions', 'portal_sessions', 'model_pricing', 'provider_credentials', 'model_catalog',
  'llm_requests', 'usage_rollups', 'responses', 'response_items', 'budget_alerts', 'plugin_kv',
  'usage_report_credentials', 'reconciliation_runs', 'reconciliation_differences',
] as const;

/**
 * Text columns of SQLite that are bytea in PostgreSQL (their UTF-8 bytes, schema.sql v18): sent as
 * buffers, since a string parameter for a bytea column is read as bytea's own escape format.
 */
const TEXT_TO_BYTEA: Readonly<Record<string, ReadonlySet<string>>> = { plugin_kv: new Set(['value']) };

/** Tables whose `id` is an identity column (its sequence must follow the copied ids). */
const IDENTITY_TABLES = new Set(['teams', 'gateway_users', 'api_keys', 'admin_users', 'provider_credentials', 'llm_requests', 'budget_alerts', 'reconciliation_runs']);

/** PostgreSQL allows 65,535 bind parameters per statement. */
const MAX_PARAMS = 60_000;

export interface ExportResult {
  /** Rows copied, per table. */
  tables: Record<string, number>;
  schemaVersion: number;
}

export class ExportRefused extends Error {}

/**
 * Copies `sqlite` (already migrated to the latest version) into the database at `url` (migrated
 * here). Throws `ExportRefused` when the target already holds rows, or when a count differs after
 * the copy (nothing is committed then).
 */
export async function exportSqliteToPostgres(
  sqlite: Sqlite, url: string, options: { batchRows?: number; onTable?: (table: string, rows: number) => void } = {},
): Promise<ExportResult> {
  const pool = new pg.Pool({ connectionString: url, max: 1, Client: TollgateClient });
  try {
    const schemaVersion = await migratePostgres(pool);
    const sourceVersion = sqlite.pragma('user_version', { simple: true }) as number;
    if (sourceVersion !== schemaVersion) {
      throw new ExportRefused(`the SQLite database is at schema version ${sourceVersion}, PostgreSQL at ${schemaVersion}: run this tollgate version on both`);
    }
    const client = await pool.connect();
    try {
      for (const table of EXPORT_TABLES) {
        const { rows } = await client.query<{ taken: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${table}) AS taken`);
        if (rows[0]!.taken) throw new ExportRefused(`the PostgreSQL database is not empty (table ${table} has rows): export into a new database`);
      }
      await client.query('BEGIN');
      const tables: Record<string, number> = {};
      try {
        // The rollup detach trigger only matters for deletes; the copy inserts only.
        for (const table of EXPORT_TABLES) {
          tables[table] = await copyTable(sqlite, client, table, options.batchRows ?? 1_000);
          options.onTable?.(table, tables[table]);
        }
        for (const table of IDENTITY_TABLES) {
          await client.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce((SELECT max(id) FROM ${table}), 0) + 1, false)`);
        }
        for (const table of EXPORT_TABLES) {
          const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
          const expected = (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
          if (rows[0]!.n !== expected) throw new ExportRefused(`table ${table}: ${rows[0]!.n} rows in PostgreSQL, ${expected} in SQLite`);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      return { tables, schemaVersion };
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

async function copyTable(sqlite: Sqlite, client: pg.PoolClient, table: string, batchRows: number): Promise<number> {
  const columns = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  const perStatement = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMS / columns.length)));
  // Keyset paging (an index range per page, never OFFSET's re-scan): by rowid, or by the primary key
  // of usage_rollups, which is WITHOUT ROWID.
  const keys = table === 'usage_rollups' ? ['bucket_start', 'gateway_user_id', 'provider', 'model_requested', 'model_served'] : ['rowid'];
  const keyList = keys.join(', ');
  const select = `SELECT ${keyList}, ${columns.join(', ')} FROM ${table}`;
  const first = sqlite.prepare(`${select} ORDER BY ${keyList} LIMIT ?`).raw();
  const next = sqlite.prepare(`${select} WHERE (${keyList}) > (${keys.map(() => '?').join(', ')}) ORDER BY ${keyList} LIMIT ?`).raw();
  const identity = IDENTITY_TABLES.has(table) ? ' OVERRIDING SYSTEM VALUE' : '';
  const asBytes = columns.map((c) => TEXT_TO_BYTEA[table]?.has(c) ?? false);
  let copied = 0;
  let last: unknown[] | null = null;
  for (;;) {
    const page = (last ? next.all(...last, perStatement) : first.all(perStatement)) as unknown[][];
    if (page.length === 0) break;
    last = page[page.length - 1]!.slice(0, keys.length);
    const params: unknown[] = [];
    const tuples = page.map((row) => `(${row.slice(keys.length).map((value, i) => {
      params.push(asBytes[i] && typeof value === 'string' ? Buffer.from(value, 'utf8') : value);
      return `$${params.length}`;
    }).join(', ')})`);
    await client.query(`INSERT INTO ${table} (${columns.join(', ')})${identity} VALUES ${tuples.join(', ')}`, params);
    copied += page.length;
  }
  return copied;
}
