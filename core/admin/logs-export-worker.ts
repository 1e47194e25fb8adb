/**
 * The worker thread of the usage-log CSV export (`logs-csv.ts`): reads the log in batches on its own
 * connection and turns each batch into CSV text, so neither the queries nor the formatting of a
 * million rows run on the gateway's event loop.
 *
 * Where it reads (`log-batches.ts`): on SQLite, keyset pages on a read-only connection to the file
 * (WAL lets it read while the main thread writes); on PostgreSQL, one query through a server-side
 * cursor on its own `pg` connection, `batchRows` rows per read (one snapshot; the server holds the
 * rest). Either way at most one batch is in memory.
 *
 * Protocol (pull, so the HTTP response's backpressure reaches the reads): the parent posts
 * `{ type: 'next' }`; the worker answers one `{ type: 'chunk', data }` (the CSV of up to `BATCH_ROWS`
 * rows, the header row first in the first chunk; `data` is a transferred ArrayBuffer of UTF-8),
 * `{ type: 'end' }` after the last batch, or `{ type: 'error', message }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { stringify } from 'csv-stringify/sync';
import type { LogFilters } from './logs-query.ts';
import { csvOptions } from './logs-csv-format.ts';
import { openLogBatches, type LogSource } from './log-batches.ts';

/** What the parent passes in `workerData`. */
export interface ExportWorkerData {
  source: LogSource;
  filters: LogFilters;
  /** Rows per batch (per chunk). */
  batchRows: number;
}

export type ExportWorkerMessage =
  | { type: 'chunk'; data: ArrayBuffer }
  | { type: 'end' }
  | { type: 'error'; message: string };

const { source, filters, batchRows } = workerData as ExportWorkerData;
const batches = openLogBatches(source, filters, batchRows);
// A failed open is reported by the first `next` (as an error message), not as an unhandled rejection.
batches.catch(() => {});
let first = true;
let done = false;

async function nextMessage(): Promise<ExportWorkerMessage> {
  if (done) return { type: 'end' };
  const batch = await (await batches).next();
  if (batch.last) done = true;
  // The header is written even for an empty export, as before.
  if (batch.rows.length === 0 && !first) return { type: 'end' };
  const text = stringify(batch.rows, csvOptions(first));
  first = false;
  const bytes = Buffer.from(text, 'utf8');
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return { type: 'chunk', data };
}

async function close(): Promise<void> {
  try {
    await (await batches).close();
  } catch {
    // Opening failed: its error was the message already sent.
  }
}

/** Answers one `next`. Never rejects: a failure becomes an error message, and `close` swallows its own. */
async function answerNext(): Promise<void> {
  let message: ExportWorkerMessage;
  try {
    message = await nextMessage();
  } catch (err) {
    message = { type: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  if (message.type === 'chunk') parentPort!.postMessage(message, [message.data]);
  else {
    parentPort!.postMessage(message);
    await close();
  }
}

// The parent waits for each answer before it asks again, so calls never overlap.
parentPort!.on('message', () => void answerNext());
