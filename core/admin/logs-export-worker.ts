/**
 * The worker thread of the usage-log CSV export (`logs-csv.ts`): reads keyset pages of the log on its
 * own read-only connection (WAL lets it read while the main thread writes) and turns each into CSV
 * text, so neither the queries nor the formatting of a million rows run on the gateway's event loop.
 *
 * Protocol (pull, so the HTTP response's backpressure reaches the reads): the parent posts
 * `{ type: 'next' }`; the worker answers one `{ type: 'chunk', data }` (the CSV of up to `BATCH_ROWS`
 * rows, the header row first in the first chunk; `data` is a transferred ArrayBuffer of UTF-8),
 * `{ type: 'end' }` after the last page, or `{ type: 'error', message }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { stringify } from 'csv-stringify/sync';
import { Kysely, SqliteDialect } from 'kysely';
import { openSqlite } from '../sqlite-driver.ts';
import type { Database } from '../db-types.ts';
import { queryLogPage, type LogCursor, type LogFilters } from './logs-query.ts';
import { csvOptions } from './logs-csv-format.ts';

/** What the parent passes in `workerData`. */
export interface ExportWorkerData {
  /** The database file. */
  file: string;
  filters: LogFilters;
  /** Rows per page (per chunk). */
  batchRows: number;
}

export type ExportWorkerMessage =
  | { type: 'chunk'; data: ArrayBuffer }
  | { type: 'end' }
  | { type: 'error'; message: string };

const { file, filters, batchRows } = workerData as ExportWorkerData;
const sqlite = openSqlite(file, { readonly: true, fileMustExist: true });
sqlite.pragma('busy_timeout = 5000');
const reader = { sqlite, db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }) };
let cursor: LogCursor | undefined;
let first = true;
let done = false;

function nextMessage(): ExportWorkerMessage {
  if (done) return { type: 'end' };
  const page = queryLogPage(reader, filters, { limit: batchRows, ...(cursor ? { cursor } : {}) });
  const last = page.rows[page.rows.length - 1];
  if (!page.nextCursor || !last) done = true;
  else cursor = { createdAt: last.created_at, id: last.id };
  // The header is written even for an empty export, as before.
  if (page.rows.length === 0 && !first) return { type: 'end' };
  const text = stringify(page.rows, csvOptions(first));
  first = false;
  const bytes = Buffer.from(text, 'utf8');
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return { type: 'chunk', data };
}

parentPort!.on('message', () => {
  let message: ExportWorkerMessage;
  try {
    message = nextMessage();
  } catch (err) {
    message = { type: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  if (message.type === 'chunk') parentPort!.postMessage(message, [message.data]);
  else {
    parentPort!.postMessage(message);
    sqlite.close();
  }
});
