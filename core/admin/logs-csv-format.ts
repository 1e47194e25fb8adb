/**
 * The usage-log CSV format (`GET /admin/api/logs.csv`): RFC 4180 through csv-stringify (CRLF records,
 * fields with a comma, a quote or a line break quoted, quotes doubled), header row first, columns in
 * `LOG_ROW_FIELDS` order, booleans as `true`/`false`.
 */
import type { Options } from 'csv-stringify';
import { LOG_ROW_FIELDS } from './logs-query.ts';

/**
 * A spreadsheet runs a cell that starts with one of these as a formula. Models and error codes are
 * partly chosen by API clients, so such a text cell gets a leading `'` (OWASP "CSV injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** csv-stringify options of the export; `header` says whether this part starts the file. */
export function csvOptions(header: boolean): Options {
  return {
    header,
    columns: LOG_ROW_FIELDS,
    record_delimiter: 'windows',
    // csv-stringify quotes the record delimiter (CRLF) but not a lone LF or CR, which RFC 4180 readers split on.
    quoted_match: /[\r\n]/,
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      string: (value) => (FORMULA_START.test(value) ? `'${value}` : value),
    },
  };
}
