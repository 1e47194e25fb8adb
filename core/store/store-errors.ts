/**
 * Which errors of the two store engines mean the database is unavailable now (retrying later may
 * succeed) rather than that a query or its data is wrong. The error catalog (`core/errors.ts`) maps
 * them to 503 `store_unavailable`; the write-behind queue keeps its writes and retries. Knowledge of
 * each engine's codes lives here, beside the engines, and imports nothing.
 */

/** Socket errors that mean the PostgreSQL server is unreachable now. */
const UNREACHABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** pg's own errors, without a code, for a connection lost or not made in time. */
const PG_UNREACHABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable/i;
/** SQLite result codes for a database that cannot be written now (locked, full, I/O, read-only disk). */
const SQLITE_UNAVAILABLE_CODE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|PROTOCOL)/;

/**
 * True when `err`, thrown by either store engine, says the database is unavailable now (retrying
 * later may succeed), not that the query or the data is wrong. One definition for the request path
 * (`store_unavailable`, 503) and the write-behind queue (keep the writes, retry).
 * - PostgreSQL: a socket error (ECONNREFUSED, ECONNRESET, …), SQLSTATE class 08 (connection
 *   exception), 57P01..57P03 (the server shutting down, crashed, or not yet accepting connections),
 *   53300 (too many connections), 40001/40P01 (serialization failure, deadlock: the same transaction
 *   may succeed when retried); pg's own "Connection terminated" errors; an AggregateError of such
 *   (Node's connect to a name with several addresses).
 * - SQLite (better-sqlite3's `code`): SQLITE_BUSY, LOCKED, FULL, IOERR, CANTOPEN, READONLY, PROTOCOL
 *   and their extended codes.
 */
export function isStoreUnavailableError(err: unknown): boolean {
  const { code, message, errors } = (err ?? {}) as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (SQLITE_UNAVAILABLE_CODE.test(code)) return true;
    if (UNREACHABLE_SOCKET_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code)) return true;
    if (code === '53300' || code === '40001' || code === '40P01') return true;
  }
  if (typeof message === 'string' && PG_UNREACHABLE_MESSAGE.test(message)) return true;
  return Array.isArray(errors) && errors.length > 0 && errors.every(isStoreUnavailableError);
}

/** pg's errors for a connection that was open and is gone (its query never ran to the end there). */
const PG_LOST_MESSAGE = /Connection terminated|Client was closed and is not queryable|Client has encountered a connection error/i;

/**
 * True when `err` says the PostgreSQL connection a query ran on was lost (57P01 admin_shutdown,
 * 57P02 crash_shutdown, ECONNRESET, EPIPE, pg's "Connection terminated" and "Client was closed"),
 * while the server itself may answer on a new connection: a read that failed so is worth one retry.
 * Not a refused or timed-out connect (the server is away: a retry now would fail the same way).
 */
export function isConnectionLostError(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === '57P01' || code === '57P02' || code === 'ECONNRESET' || code === 'EPIPE') return true;
  return typeof message === 'string' && PG_LOST_MESSAGE.test(message);
}
