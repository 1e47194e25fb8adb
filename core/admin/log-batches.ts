/**
 * The usage log read in bounded batches, newest first, for the CSV export's worker thread
 * (`logs-export-worker.ts`), on a connection of its own (the gateway's store lives on the main thread).
 *
 * SQLite: keyset pages (`queryLogPage`) on a read-only connection to the file. PostgreSQL: the whole
 * export is one query (`compileLogExportQuery`) read through a server-side cursor (`pg-cursor`),
 * `batchRows` rows per fetch: one snapshot, and the server keeps what was not fetched yet, so the
 * worker never holds more than one batch. Rows come out identical on both (`toLogRow`).
 */
import Cursor from 'pg-cursor';
import {
  DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteDialect,
} from 'kysely';
import { openSqlite } from '../store/driver-sqlite.ts';
import type { Database } from '../store/db-types.ts';
import { storeTypeParsers, TollgateClient } from '../store/store-postgres.ts';
import {
  compileLogExportQuery, queryLogPage, toLogRow, type LogCursor, type LogFilters, type LogRow, type RawLogRow,
} from './logs-query.ts';

/** Where the log is: the SQLite file, or the PostgreSQL URL (password included). Structured-cloneable. */
export type LogSource = { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string };

/** One batch; `last` when nothing follows it. */
export interface LogBatch {
  rows: LogRow[];
  last: boolean;
}

/** Successive batches of the matching rows. `next` must not be called again before it resolved. */
export interface LogBatches {
  next(): Promise<LogBatch>;
  /** Releases the connection; call once, after the last batch or to stop early. */
  close(): Promise<void>;
}

/** Opens the connection and starts reading. Rejects when the database cannot be opened. */
export function openLogBatches(source: LogSource, filters: LogFilters, batchRows: number): Promise<LogBatches> {
  return source.engine === 'sqlite' ? Promise.resolve(sqliteBatches(source.file, filters, batchRows)) : postgresBatches(source.url, filters, batchRows);
}

function sqliteBatches(file: string, filters: LogFilters, batchRows: number): LogBatches {
  const sqlite = openSqlite(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  const reader = { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }) };
  let cursor: LogCursor | undefined;
  return {
    async next() {
      const page = await queryLogPage(reader, filters, { limit: batchRows, ...(cursor ? { cursor } : {}) });
      const last = page.rows[page.rows.length - 1];
      if (page.nextCursor && last) cursor = { createdAt: last.created_at, id: last.id };
      return { rows: page.rows, last: !page.nextCursor || !last };
    },
    async close() {
      await reader.db.destroy();
      if (sqlite.open) sqlite.close();
    },
  };
}

/** Kysely only to compile the query for PostgreSQL: the worker's connection is a plain `pg.Client`. */
const postgresCompiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

async function postgresBatches(url: string, filters: LogFilters, batchRows: number): Promise<LogBatches> {
  const client = new TollgateClient({ connectionString: url, types: storeTypeParsers });
  // A dropped connection fails the pending read; without a listener it would crash the thread.
  client.on('error', () => {});
  await client.connect();
  const compiled = compileLogExportQuery({ db: postgresCompiler }, filters);
  const cursor = client.query(new Cursor<RawLogRow>(compiled.sql, compiled.parameters as unknown[]));
  return {
    async next() {
      const rows = await cursor.read(batchRows);
      return { rows: rows.map(toLogRow), last: rows.length < batchRows };
    },
    async close() {
      await cursor.close().catch(() => {});
      await client.end();
    },
  };
}
