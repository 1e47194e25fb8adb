/**
 * The write-behind queue: what the request path has decided but not yet persisted (a request's log
 * row, a user's spend after a settlement), held in memory and written in batches, ONE transaction per
 * batch: when `batchSize` writes are queued (on the next turn of the event loop, never inside the
 * response work), every `flushIntervalMs`, on `flush()` (before a read that must see them) and on
 * `close()`.
 *
 * Why one queue for every kind: the writes of one request (its spend and its log row, with the
 * rollups the log row updates) commit in the same transaction, so after any crash the persisted
 * spend equals the sum of the logged costs of the period. Writes of one `group` (the request id)
 * are never split across batches, and batches commit in queue order.
 *
 * Durability window: a write is persisted at most `flushIntervalMs` (plus the time of one batch)
 * after it was queued. A `kill -9` or a crash loses at most the writes of that window (50 ms by
 * default: the requests acknowledged in the last 50 ms lose their log row and their spend together);
 * a graceful stop (`close()`) loses nothing. (SQLite in WAL with `synchronous = NORMAL`: a committed
 * batch survives a process crash; a power cut can also lose the commits since the last checkpoint.)
 *
 * Failure policy (a background job never throws out of a timer, and never kills the process):
 * - the store is unavailable (locked, disk full, I/O): the batch stays queued, is retried on the next
 *   flush, and the failure is logged; past `maxQueueSize` the oldest writes are dropped and counted;
 * - the store refuses a write for good (a constraint, a bad value): the batch is retried group by
 *   group, each in its own transaction, and a refused group write by write; each write still refused
 *   is dropped with a log line naming it, and every other write of the batch is persisted.
 *
 * The queue is store-agnostic: a `WriteTarget` persists the writes (`write-target-sqlite.ts` for
 * the embedded SQLite, synchronous; `write-target-postgres.ts`, asynchonous: one flush at a time, so
 * batches still commit in queue order). `createWriteTarget` picks the store's.
 */
import type { Log } from '../runtime/log.ts';
import type { RequestLogRow } from './request-log-row.ts';

/** One pending write. Data only, so any store can persist it. */
export type PendingWrite =
  /** A request's `llm_requests` row (the store also adds it to the usage rollups). */
  | { kind: 'request'; group: string; row: RequestLogRow }
  /**
   * A settlement's spend, integer nano-USD: `deltaNanos` added to the user's stored spend of the
   * budget period that starts at `periodStartIso`; when the stored spend belongs to another period
   * (a rollover), it becomes `spentNanos`, the ledger's total for this one. Deltas, not totals, so a
   * spend adjusted by another writer meanwhile (`tollgate pricing reprice` in another process) is kept.
   */
  | { kind: 'spend'; group: string; userId: number; deltaNanos: number; spentNanos: number; periodStartIso: string }
  /**
   * A budget alert threshold crossed by the spend of the same group: recorded once per user, period
   * and threshold (a duplicate is ignored), with its webhook body. `deliver` false records it as
   * 'unsent' (no webhook configured).
   */
  | { kind: 'alert'; group: string; userId: number; periodStartIso: string; thresholdPercent: number; firedAtIso: string; payload: string; deliver: boolean };

/**
 * What persists writes. A method may throw; the queue decides what then. The SQLite target answers
 * synchronously (its flushes stay synchronous: a read right after `flush()` sees the writes); the
 * PostgreSQL one returns promises, and the queue then awaits each call before the next.
 */
export interface WriteTarget {
  /** Persists `writes` in one transaction, all or nothing. */
  writeBatch(writes: readonly PendingWrite[]): void | Promise<void>;
  /** Persists one write on its own, repairing what can be repaired (a reference to a deleted user). */
  writeOne(write: PendingWrite): void | Promise<void>;
  /** True when `err` says the store is unavailable now (retry later), not that the writes are bad. */
  isTransient(err: unknown): boolean;
  /** False once the store is closed (nothing more can be written). */
  isOpen(): boolean;
}

/** Batching and bounds (the logger plugin's config). */
export interface WriteBehindSettings {
  /** Writes per transaction (a group is never split, so a batch may be a little larger). */
  batchSize: number;
  /** Longest a write waits in memory, ms: the durability window. */
  flushIntervalMs: number;
  /** Writes held while the store is unavailable; past it the oldest are dropped. */
  maxQueueSize: number;
}

/**
 * The queue, as the logger provides it (`writeBehind` service) and the budget uses it. Over a
 * synchronous target (SQLite) `flush` and `close` finish before they return and return plain values;
 * over an asynchronous one (PostgreSQL) they return promises: await them before reading what was queued.
 */
export interface WriteBehind {
  /** Queues a write; never throws, never writes synchronously. */
  enqueue(write: PendingWrite): void;
  /**
   * Writes everything queued now (stops early while the store is unavailable). Returns the writes
   * persisted or dropped. Never runs two flushes at once: a call during a flush waits for it first.
   */
  flush(): number | Promise<number>;
  /** Writes waiting in memory (those being written included). */
  depth(): number;
  /** Flushes and stops the interval; later writes are still accepted and flushed by `flush()`. */
  close(): void | Promise<void>;
}

/** One call to the target, made by the driver (`runSync`/`runAsync`) for the flush logic. */
type Step = () => void | Promise<void>;
/** The flush logic as a generator of target calls: an error of a call is thrown back in at its `yield`. */
type Flushing = Generator<Step, number, undefined>;

/** The queue over `target`. */
export function createWriteBehind(target: WriteTarget, settings: WriteBehindSettings, log: Log): WriteBehind {
  let queue: PendingWrite[] = [];
  let dropped = 0;
  let scheduled = false;
  /** Writes at the head of the queue handed to the target and not yet consumed (an async write in flight). */
  let inFlight = 0;
  /** The asynchronous flush running now, if any. */
  let running: Promise<number> | null = null;
  /** Writes consumed (persisted or refused for good) since the queue was created. */
  let consumed = 0;

  /** The first `batchSize` writes, extended to the end of the last one's group. */
  function nextBatch(): PendingWrite[] {
    let end = Math.min(settings.batchSize, queue.length);
    const lastGroup = queue[end - 1]?.group;
    while (end < queue.length && queue[end]!.group === lastGroup) end++;
    return queue.slice(0, end);
  }

  /** Drops the first `count` writes of the queue (persisted, or refused for good). */
  function consume(count: number): void {
    queue = queue.slice(count);
    consumed += count;
    inFlight = Math.max(0, inFlight - count);
  }

  /**
   * Writes `batch` one group at a time, then a refused group one write at a time, dropping what the
   * store refuses for good. Each group is consumed once written, so a store that becomes unavailable
   * midway (a transient error, thrown) leaves only the unwritten groups queued.
   */
  function* salvage(batch: PendingWrite[]): Generator<Step, void, undefined> {
    for (const group of groupsOf(batch)) {
      try {
        yield () => target.writeBatch(group);
        consume(group.length);
        continue;
      } catch (err) {
        if (target.isTransient(err)) throw err;
      }
      for (const write of group) {
        try {
          yield () => target.writeOne(write);
        } catch (err) {
          if (target.isTransient(err)) throw err;
          log.error('write dropped: the database refuses it', { kind: write.kind, group: write.group, err });
        }
      }
      consume(group.length);
    }
  }

  function* flushing(): Flushing {
    const before = consumed;
    while (queue.length > 0 && target.isOpen()) {
      const batch = nextBatch();
      inFlight = batch.length;
      try {
        try {
          yield () => target.writeBatch(batch);
          consume(batch.length);
        } catch (err) {
          if (target.isTransient(err)) throw err;
          yield* salvage(batch);
        }
      } catch (err) {
        inFlight = 0;
        log.error('background write failed; writes kept for retry', { queued: queue.length, err });
        break;
      }
    }
    inFlight = 0;
    return consumed - before;
  }

  /** Runs a flush; synchronous until the target first answers with a promise, then asynchronous. */
  function flush(): number | Promise<number> {
    if (running) return running.then(flush);
    const result = drive(flushing());
    if (!(result instanceof Promise)) return result;
    const settled = result.finally(() => {
      if (running === settled) running = null;
    });
    running = settled;
    return settled;
  }

  /** Never throws nor rejects: a timer callback that throws would end the process. */
  function safeFlush(): void {
    // A flush under way takes the writes queued meanwhile too (it runs until the queue is empty).
    if (running) return;
    try {
      const result = flush();
      if (result instanceof Promise) result.catch((err: unknown) => log.error('background write failed', { err }));
    } catch (err) {
      log.error('background write failed', { err });
    }
  }

  function reportLost(): void {
    if (queue.length > 0) log.error('write-behind: writes could not be persisted at shutdown', { lost: queue.length });
  }

  const timer = setInterval(safeFlush, settings.flushIntervalMs);
  timer.unref();

  return {
    enqueue(write) {
      queue.push(write);
      if (queue.length > settings.maxQueueSize && queue.length > inFlight) {
        // The oldest write not being written now: one in flight is consumed by position when it commits.
        queue.splice(inFlight, 1);
        if (dropped++ % 1000 === 0) log.error('write-behind queue full: dropping oldest writes', { dropped, maxQueueSize: settings.maxQueueSize });
      }
      if (queue.length >= settings.batchSize && !scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          safeFlush();
        });
      }
    },
    flush,
    depth: () => queue.length,
    close() {
      clearInterval(timer);
      let result: number | Promise<number>;
      try {
        result = flush();
      } catch (err) {
        log.error('background write failed', { err });
        reportLost();
        return;
      }
      if (!(result instanceof Promise)) return reportLost();
      return result.then(reportLost, (err: unknown) => {
        log.error('background write failed', { err });
        reportLost();
      });
    },
  };
}

/**
 * Runs `flushing`, calling each target step it yields. Synchronous while the steps are (the SQLite
 * target: no promise, no microtask, as fast as a plain loop); from the first step that returns a
 * promise on, asynchronous, awaiting each step before the next.
 */
function drive(flushing: Flushing): number | Promise<number> {
  let next = flushing.next();
  while (!next.done) {
    let answer: void | Promise<void>;
    try {
      answer = next.value();
    } catch (err) {
      next = flushing.throw(err);
      continue;
    }
    if (answer instanceof Promise) return driveAsync(flushing, answer);
    next = flushing.next();
  }
  return next.value;
}

async function driveAsync(flushing: Flushing, pending: Promise<void>): Promise<number> {
  let next: IteratorResult<Step, number>;
  try {
    await pending;
    next = flushing.next();
  } catch (err) {
    next = flushing.throw(err);
  }
  while (!next.done) {
    try {
      await next.value();
      next = flushing.next();
    } catch (err) {
      next = flushing.throw(err);
    }
  }
  return next.value;
}

/** `writes` cut into runs of the same group, in order. */
function groupsOf(writes: PendingWrite[]): PendingWrite[][] {
  const groups: PendingWrite[][] = [];
  for (const write of writes) {
    const last = groups[groups.length - 1];
    if (last && last[0]!.group === write.group) last.push(write);
    else groups.push([write]);
  }
  return groups;
}
