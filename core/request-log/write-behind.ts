/**
 * The write-behind queue: what the request path has decided but not yet persisted (a request's log
 * row, a user's spend after a settlement), held in memory and written in batches, ONE transaction per
 * batch: when `batchSize` writes are queued (on the next turn of the event loop, never inside the
 * response work), every `flushIntervalMs`, on `flush()` (before a read that must see them) and on
 * `close()`.
 *
 * Why one queue for every kind: the writes of one request (its spend and its log row, with the
 * rollups the log row updates) commit in the same transaction, so after any crash the persisted
 * spend equals the sum of the logged costs of the period. They are queued as ONE item: with
 * `joinRequests` (the logger's queue) a spend or alert waits beside the queue until the log row of
 * its `group` (the request id) arrives, or `release(group)` says none will; the budget settles before
 * the logger queues the row, sometimes across an await (a Redis round trip), and a flush in between
 * used to commit the spend in one batch and its row in the next (issue 39 item 10). An item is never
 * split across batches, and batches commit in queue order. A batch whose commit was acknowledged
 * too late (the connection dropped after COMMIT) is retried; the targets then skip a request whose
 * row is already stored, with its spend and alerts, so nothing is counted twice.
 *
 * Durability window: a write is persisted at most `flushIntervalMs` (plus the time of one batch)
 * after it was queued. A `kill -9` or a crash loses at most the writes of that window (50 ms by
 * default: the requests acknowledged in the last 50 ms lose their log row and their spend together);
 * a graceful stop (`close()`) loses nothing. (SQLite in WAL with `synchronous = NORMAL`: a committed
 * batch survives a process crash; a power cut can also lose the commits since the last checkpoint.)
 *
 * Failure policy (a background job never throws out of a timer, and never kills the process):
 * - the store is unavailable (locked, disk full, read-only, I/O; PostgreSQL down or restarting): the
 *   batch stays queued, is retried on the next flush, and the failure is logged (once per outage, and
 *   its end); `status()` says so
 *   (`GET /readyz`, `/metrics`) until a flush succeeds; past `maxQueueSize` writes the oldest items
 *   (whole: a row with its spend) are dropped and counted;
 * - the store refuses a write for good (a constraint, a bad value): the batch is retried item by
 *   item, each in its own transaction, and a refused group write by write; each write still refused
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
   * `scope` 'team': the spend of team `userId` (`teams`, schema v23) rather than of a user.
   */
  | { kind: 'spend'; group: string; userId: number; deltaNanos: number; spentNanos: number; periodStartIso: string; scope?: 'team' }
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
  /** Writes waiting in memory (those being written, and spends waiting for their log row, included). */
  depth(): number;
  /**
   * With `joinRequests`: the writes of `group` waiting for its log row are queued without one (the
   * logger logs no row for this request). Harmless when none wait.
   */
  release(group: string): void;
  /** The queue's health, for `GET /readyz` and `/metrics`. */
  status(): WriteBehindStatus;
  /** Flushes and stops the interval; later writes are still accepted and flushed by `flush()`. */
  close(): void | Promise<void>;
}

/** What `WriteBehind.status()` reports. */
export interface WriteBehindStatus {
  /** Writes waiting in memory (`depth()`). */
  queued: number;
  /** Writes dropped because the queue was full (the store unavailable too long), since start. */
  dropped: number;
  /** True from a flush that met an unavailable store until a batch commits again. */
  failing: boolean;
}

/** How a queue groups writes (`createWriteBehind`'s last argument). */
export interface WriteBehindOptions {
  /**
   * A spend or alert waits for the log row of its group and is queued with it, as one item (the
   * logger's queue, where every settled request gets a row). Without it (the budget's own queue when
   * no logger is configured) each write is queued at once, joined to the last item if of its group.
   */
  joinRequests?: boolean;
}

/** Writes committed together, never split: a request's log row first, then its spend and alerts. */
interface Item {
  readonly group: string;
  readonly writes: PendingWrite[];
}

/** Groups waiting for their log row, at most: past it the oldest is queued without one. */
const MAX_WAITING_GROUPS = 10_000;

/** One call to the target, made by the driver (`runSync`/`runAsync`) for the flush logic. */
type Step = () => void | Promise<void>;
/** The flush logic as a generator of target calls: an error of a call is thrown back in at its `yield`. */
type Flushing = Generator<Step, number, undefined>;

/** The queue over `target`. */
export function createWriteBehind(target: WriteTarget, settings: WriteBehindSettings, log: Log, options: WriteBehindOptions = {}): WriteBehind {
  let queue: Item[] = [];
  /** Writes in `queue`. */
  let queuedWrites = 0;
  /** Spends and alerts waiting for their group's log row (`joinRequests`), in arrival order. */
  const waiting = new Map<string, PendingWrite[]>();
  let waitingWrites = 0;
  let dropped = 0;
  let failing = false;
  let scheduled = false;
  /** Items at the head of the queue handed to the target and not yet consumed (an async write in flight). */
  let inFlight = 0;
  /** The asynchronous flush running now, if any. */
  let running: Promise<number> | null = null;
  /** Writes consumed (persisted or refused for good) since the queue was created. */
  let consumed = 0;

  /** The first items holding `batchSize` writes or more (an item is never split). */
  function nextBatch(): Item[] {
    let end = 0;
    let writes = 0;
    while (end < queue.length && writes < settings.batchSize) writes += queue[end++]!.writes.length;
    return queue.slice(0, end);
  }

  /** Drops the first `count` items of the queue (persisted, or refused for good). */
  function consume(count: number): void {
    let writes = 0;
    for (let i = 0; i < count; i++) writes += queue[i]!.writes.length;
    queue = queue.slice(count);
    queuedWrites -= writes;
    consumed += writes;
    inFlight = Math.max(0, inFlight - count);
  }

  /**
   * Writes `batch` one item at a time, then a refused item one write at a time, dropping what the
   * store refuses for good. Each item is consumed once written, so a store that becomes unavailable
   * midway (a transient error, thrown) leaves only the unwritten items queued.
   */
  function* salvage(batch: Item[]): Generator<Step, void, undefined> {
    for (const item of batch) {
      try {
        yield () => target.writeBatch(item.writes);
        failing = false;
        consume(1);
        continue;
      } catch (err) {
        if (target.isTransient(err)) throw err;
      }
      for (const write of item.writes) {
        try {
          yield () => target.writeOne(write);
        } catch (err) {
          if (target.isTransient(err)) throw err;
          log.error('write dropped: the database refuses it', { kind: write.kind, group: write.group, err });
        }
      }
      consume(1);
    }
  }

  /** Queues `writes` as one item. */
  function push(group: string, writes: PendingWrite[]): void {
    queue.push({ group, writes });
    queuedWrites += writes.length;
    bound();
  }

  /** Drops the oldest items not in flight past `maxQueueSize` writes; schedules a flush at `batchSize`. */
  function bound(): void {
    while (queuedWrites > settings.maxQueueSize && queue.length > inFlight + 1) {
      // The oldest item not being written now: one in flight is consumed by position when it commits.
      const [lost] = queue.splice(inFlight, 1);
      queuedWrites -= lost!.writes.length;
      if (dropped % 1000 === 0) log.error('write-behind queue full: dropping oldest writes', { dropped: dropped + lost!.writes.length, maxQueueSize: settings.maxQueueSize });
      dropped += lost!.writes.length;
    }
    if (queuedWrites >= settings.batchSize && !scheduled) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        safeFlush();
      });
    }
  }

  /** Queues the writes of `group` that wait for a row, without one. */
  function release(group: string): void {
    const writes = waiting.get(group);
    if (!writes) return;
    waiting.delete(group);
    waitingWrites -= writes.length;
    push(group, writes);
  }

  function* flushing(): Flushing {
    const before = consumed;
    while (queue.length > 0 && target.isOpen()) {
      const batch = nextBatch();
      inFlight = batch.length;
      try {
        try {
          const writes = batch.flatMap((item) => item.writes);
          yield () => target.writeBatch(writes);
          // The store answers again (under steady load the queue may never be empty at the end of a flush).
          if (failing) log.info('background writes resumed', { queued: queuedWrites });
          failing = false;
          consume(batch.length);
        } catch (err) {
          if (target.isTransient(err)) throw err;
          yield* salvage(batch);
        }
      } catch (err) {
        inFlight = 0;
        // Once per outage, not once per flush (every 50 ms while a lock is held); /readyz and
        // /metrics show it meanwhile.
        if (!failing) log.error('background write failed; writes kept for retry', { queued: queuedWrites, err });
        failing = true;
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
    if (queuedWrites > 0) log.error('write-behind: writes could not be persisted at shutdown', { lost: queuedWrites });
  }

  const timer = setInterval(safeFlush, settings.flushIntervalMs);
  timer.unref();

  return {
    enqueue(write) {
      if (options.joinRequests && write.kind !== 'request') {
        const writes = waiting.get(write.group);
        if (writes) writes.push(write);
        else waiting.set(write.group, [write]);
        waitingWrites++;
        // A row that never comes (a plugin failed between the settlement and the logger) must not
        // hold writes forever: past the bound the oldest group is queued without its row.
        if (waiting.size > MAX_WAITING_GROUPS) release(waiting.keys().next().value!);
        return;
      }
      const joined = options.joinRequests ? waiting.get(write.group) : undefined;
      if (joined) {
        waiting.delete(write.group);
        waitingWrites -= joined.length;
        return push(write.group, [write, ...joined]);
      }
      const last = queue[queue.length - 1];
      if (last && last.group === write.group && queue.length > inFlight) {
        last.writes.push(write);
        queuedWrites++;
        return bound();
      }
      push(write.group, [write]);
    },
    release,
    status: () => ({ queued: queuedWrites + waitingWrites, dropped, failing }),
    flush,
    depth: () => queuedWrites + waitingWrites,
    close() {
      clearInterval(timer);
      for (const group of [...waiting.keys()]) release(group);
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

