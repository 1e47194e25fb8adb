/**
 * The usage-log CSV export (`GET /admin/api/logs.csv`): the rows of the JSON listing with the same
 * filters, as RFC 4180 CSV (csv-stringify: CRLF records, fields with a comma, a quote or a line
 * break quoted, quotes doubled), header row first, columns in `LOG_ROW_FIELDS` order.
 *
 * Why it never holds the export in memory: rows are read in keyset batches of `BATCH_ROWS`, and the
 * next row is written only while the socket keeps up (the stringifier is piped into the response, and
 * a full stringifier buffer is awaited to drain). A client that goes away ends the loop.
 */
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { Store } from '../db.ts';
import type { Log } from '../log.ts';
import { LOG_ROW_FIELDS, queryLogPage, type LogCursor, type LogFilters } from './logs-query.ts';

/** Rows per keyset query: large enough that query overhead vanishes, small enough to stay a few hundred KB. */
export const BATCH_ROWS = 1000;

/**
 * A spreadsheet runs a cell that starts with one of these as a formula. Models and error codes are
 * partly chosen by API clients, so such a text cell gets a leading `'` (OWASP "CSV injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export interface CsvExport {
  store: Store;
  log: Log;
  filters: LogFilters;
  requestId: string;
  /** `YYYY-MM-DD` for the file name. */
  date: string;
}

/** Resolves on the stream's next `drain`, or at once when the response has closed. */
function drainOrClose(stream: Writable, res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      res.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Writes the whole response (status, headers, CSV body). Filters must be validated before: once
 * the headers are out, an error can only cut the download short (it is logged, the socket is
 * destroyed so the client sees an incomplete file, not a silently short one).
 */
export async function sendLogsCsvOnMainThread(res: ServerResponse, job: CsvExport): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="tollgate-usage-${job.date}.csv"`,
    'cache-control': 'no-store',
    'x-request-id': job.requestId,
  });
  const csv = stringify({
    header: true,
    columns: LOG_ROW_FIELDS as string[],
    record_delimiter: 'windows',
    // csv-stringify quotes the record delimiter (CRLF) but not a lone LF or CR, which RFC 4180 readers split on.
    quoted_match: /[\r\n]/,
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      string: (value) => (FORMULA_START.test(value) ? `'${value}` : value),
    },
  });
  csv.pipe(res);
  try {
    let cursor: LogCursor | undefined;
    for (;;) {
      const page = queryLogPage(job.store, job.filters, { limit: BATCH_ROWS, ...(cursor ? { cursor } : {}) });
      for (const row of page.rows) {
        if (res.destroyed) return;
        if (!csv.write(row)) await drainOrClose(csv, res);
      }
      const last = page.rows[page.rows.length - 1];
      if (!page.nextCursor || !last || res.destroyed) break;
      cursor = { createdAt: last.created_at, id: last.id };
    }
    csv.end();
    await finished(res);
  } catch (err) {
    if (res.destroyed) return;
    job.log.error('csv export failed', { requestId: job.requestId, error: err });
    csv.unpipe(res);
    res.destroy();
  }
}
