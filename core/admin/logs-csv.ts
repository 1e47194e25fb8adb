/**
 * The usage-log CSV export (`GET /admin/api/logs.csv`): the rows of the JSON listing with the same
 * filters, as CSV (`logs-csv-format.ts`).
 *
 * Why a worker thread: a full export reads and formats every row of the log (a million rows take
 * tens of seconds), which on the main thread would stall every other request for that long. The
 * worker (`logs-export-worker.ts`) reads on its own connection (read-only SQLite, or a PostgreSQL
 * server-side cursor) and formats; this thread only writes bytes to the socket.
 *
 * Why it never holds the export in memory: the worker produces one chunk (`BATCH_ROWS` rows) per
 * request, and the next is requested only once the socket took the previous one (`write()` returned
 * true, or `drain`). A client that goes away ends the worker.
 */
import type { ServerResponse } from 'node:http';
import { Worker } from 'node:worker_threads';
import { finished } from 'node:stream/promises';
import type { Store } from '../store/store.ts';
import type { Log } from '../runtime/log.ts';
import type { LogFilters } from './logs-query.ts';
import type { ExportWorkerData, ExportWorkerMessage } from './logs-export-worker.ts';
import type { LogSource } from './log-batches.ts';
import { postgresUrlOf } from '../store/store-postgres.ts';

/** Rows per chunk: large enough that query and message overhead vanish, small enough to stay a few hundred KB. */
export const BATCH_ROWS = 1000;

export interface CsvExport {
  store: Store;
  log: Log;
  filters: LogFilters;
  requestId: string;
  /** `YYYY-MM-DD` for the file name. */
  date: string;
}

/**
 * The worker: `dist/logs-export-worker.js` beside the bundle (`bin/build.js` builds both), or the
 * TypeScript source beside this file when running from source. A worker does not inherit the tsx
 * loader and Node 20 ignores `--import` in a worker's `execArgv`, so from source a one-line module
 * registers tsx in the worker first, then imports the source.
 */
function startWorker(data: ExportWorkerData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./logs-export-worker.js', import.meta.url), { workerData: data });
  const source = new URL('./logs-export-worker.ts', import.meta.url).href;
  const boot = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(source)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), { workerData: data });
}

/** Where the worker reads: the store's SQLite file, or its PostgreSQL URL (a connection of its own). */
function logSource(store: Store): LogSource {
  if (store.engine === 'sqlite') return { engine: 'sqlite', file: store.sqlite.name };
  const url = postgresUrlOf(store);
  if (!url) throw new Error('csv export: this PostgreSQL store has no connection URL to give the worker');
  return { engine: 'postgres', url };
}

/** Resolves on the response's next `drain`, or at once when it has closed. */
function drainOrClose(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Asks the worker for its next message. Rejects when the worker fails or exits first. */
function pull(worker: Worker): Promise<ExportWorkerMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ExportWorkerMessage) => settle(() => resolve(message));
    const onError = (err: Error) => settle(() => reject(err));
    const onExit = (code: number) => settle(() => reject(new Error(`csv export worker exited (${code})`)));
    const settle = (then: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      then();
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage({ type: 'next' });
  });
}

/**
 * Writes the whole response (status, headers, CSV body). Filters must be validated before: once
 * the headers are out, an error can only cut the download short (it is logged, the socket is
 * destroyed so the client sees an incomplete file, not a silently short one).
 */
export async function sendLogsCsv(res: ServerResponse, job: CsvExport): Promise<void> {
  const source = logSource(job.store);
  res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="tollgate-usage-${job.date}.csv"`,
    'cache-control': 'no-store',
    'x-request-id': job.requestId,
  });
  const worker = startWorker({ source, filters: job.filters, batchRows: BATCH_ROWS });
  try {
    for (;;) {
      const message = await pull(worker);
      if (message.type === 'error') throw new Error(message.message);
      if (message.type === 'end' || res.destroyed) break;
      if (!res.write(Buffer.from(message.data))) await drainOrClose(res);
      if (res.destroyed) break;
    }
    if (res.destroyed) return;
    res.end();
    await finished(res);
  } catch (err) {
    if (res.destroyed) return;
    job.log.error('csv export failed', { requestId: job.requestId, error: err });
    res.destroy();
  } finally {
    void worker.terminate();
  }
}
