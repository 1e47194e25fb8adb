/**
 * The request log's background writer: a bounded in-memory queue written to `llm_requests` in
 * batches, one transaction per batch, flushed when a batch is full, on an interval, and on close.
 * When the database is unavailable (locked, full) the rows stay queued for the next flush; a row the
 * database refuses for good is logged and dropped so it cannot block the rows behind it.
 */
import type { Store } from '../../core/db.ts';
import { prepareQuery } from '../../core/db.ts';
import type { NewLlmRequest } from '../../core/db-types.ts';
import type { Log } from '../../core/log.ts';
import type { LoggerConfig } from './schema.ts';

/** Every column the writer fills, in statement order. */
const COLUMNS = [
  'request_id', 'gateway_user_id', 'api_key_id', 'provider', 'model_requested', 'model_served', 'status',
  'error_code', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'latency_ms', 'ttft_ms', 'stream', 'created_at',
  'cache_write_tokens', 'cost_nanos', 'usage_estimated', 'unpriced', 'endpoint', 'attempts',
] as const satisfies ReadonlyArray<keyof NewLlmRequest>;

export type RequestLogRow = { [K in (typeof COLUMNS)[number]]: NewLlmRequest[K] };

/** Errors that say the database is unavailable right now (locked, full, I/O), not that a row is bad. */
function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|PROTOCOL)/.test(code);
}

export interface RequestLogWriter {
  enqueue(row: RequestLogRow): void;
  /** Writes everything queued now. Returns the number of rows written. */
  flush(): number;
  /** Rows waiting in memory. */
  depth(): number;
  close(): void;
}

export function createRequestLogWriter(store: Store, config: LoggerConfig, log: Log): RequestLogWriter {
  const sample = Object.fromEntries(COLUMNS.map((c) => [c, null])) as unknown as NewLlmRequest;
  const insert = prepareQuery(store.sqlite, store.db.insertInto('llm_requests').values(sample));
  const valuesOf = (row: RequestLogRow) => COLUMNS.map((c) => row[c]);
  const userExists = prepareQuery(store.sqlite, store.db.selectFrom('gateway_users').select('id').where('id', '=', 0)).pluck();
  const keyExists = prepareQuery(store.sqlite, store.db.selectFrom('api_keys').select('id').where('id', '=', 0)).pluck();

  const writeBatch = store.sqlite.transaction((rows: RequestLogRow[]) => {
    for (const row of rows) insert.run(valuesOf(row));
  });
  // A user or key deleted while its request sat in the queue: keep the row, drop the dangling reference.
  const detach = (row: RequestLogRow): RequestLogRow => ({
    ...row,
    gateway_user_id: row.gateway_user_id != null && userExists.get(row.gateway_user_id) !== undefined ? row.gateway_user_id : null,
    api_key_id: row.api_key_id != null && keyExists.get(row.api_key_id) !== undefined ? row.api_key_id : null,
  });

  let queue: RequestLogRow[] = [];
  let dropped = 0;
  let scheduled = false;

  /** Writes one batch; returns false when the database is unavailable and the batch must wait. */
  function writeOrSalvage(batch: RequestLogRow[]): boolean {
    try {
      writeBatch(batch);
      return true;
    } catch (err) {
      if (isTransient(err)) {
        log.error('request log write failed; rows kept for retry', { queued: queue.length, err });
        return false;
      }
    }
    // A row the database refuses (a dangling user/key reference, a constraint) must not block the
    // rows behind it: write one by one, detaching dangling references, dropping what still fails.
    for (const row of batch) {
      try {
        insert.run(valuesOf(detach(row)));
      } catch (err) {
        if (isTransient(err)) throw err;
        log.error('request log row dropped: the database refuses it', { requestId: row.request_id, err });
      }
    }
    return true;
  }

  function flush(): number {
    let written = 0;
    while (queue.length > 0 && store.sqlite.open) {
      const batch = queue.slice(0, config.batchSize);
      try {
        if (!writeOrSalvage(batch)) return written;
      } catch (err) {
        log.error('request log write failed; rows kept for retry', { queued: queue.length, err });
        return written;
      }
      queue = queue.slice(batch.length);
      written += batch.length;
    }
    return written;
  }

  const timer = setInterval(flush, config.flushIntervalMs);
  timer.unref();

  return {
    enqueue(row) {
      queue.push(row);
      if (queue.length > config.maxQueueSize) {
        queue.shift();
        if (dropped++ % 1000 === 0) log.error('request log queue full: dropping oldest rows', { dropped, maxQueueSize: config.maxQueueSize });
      }
      if (queue.length >= config.batchSize && !scheduled) {
        // Write after the current response work, not inside it.
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          flush();
        });
      }
    },
    flush,
    depth: () => queue.length,
    close() {
      clearInterval(timer);
      flush();
      if (queue.length > 0) log.error('request log: rows could not be written at shutdown', { lost: queue.length });
    },
  };
}
