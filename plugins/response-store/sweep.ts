/**
 * The background removal of expired responses: every `intervalMs` (and once shortly after boot),
 * expired rows are deleted in batches of `SWEEP_BATCH`, yielding to the event loop between batches so
 * a large backlog never holds the database (or requests) for long. Expired rows are already
 * unreadable (`store.ts` filters on `expires_at`); the sweep only reclaims their space.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../core/runtime/clock.ts';
import type { Log } from '../../core/runtime/log.ts';
import type { ResponseTable } from './store.ts';

/** Rows deleted per statement. */
export const SWEEP_BATCH = 500;

/**
 * Deletes every row of `table` expired at `nowMs`, `batchSize` rows per statement; resolves to how
 * many it deleted. `stopped` is checked before each batch (shutdown closes the database).
 */
export async function sweepExpired(table: ResponseTable, nowMs: number, batchSize = SWEEP_BATCH, stopped: () => boolean = () => false): Promise<number> {
  let total = 0;
  while (!stopped()) {
    const deleted = await table.sweepBatch(nowMs, batchSize);
    total += deleted;
    if (deleted < batchSize) break;
    // On SQLite the batch ran synchronously under the await: let requests in before the next one.
    await nextTurn();
  }
  return total;
}

export interface Sweeper {
  /** Stops the timers; resolves once a sweep under way has finished its batch (the store closes next). */
  stop(): Promise<void>;
}

/** Starts the periodic sweep (timers unref'd: they never keep the process alive); `intervalMs` 0 = none. */
export function createSweeper(table: ResponseTable, clock: Clock, log: Log, intervalMs: number): Sweeper {
  if (intervalMs === 0) return { stop: async () => {} };
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = sweepExpired(table, clock(), SWEEP_BATCH, () => stopped)
      .then((deleted) => {
        if (deleted > 0) log.info('expired responses deleted', { deleted });
      })
      .catch((err: unknown) => log.error('response sweep failed', { err }))
      .finally(() => {
        running = null;
      });
  };
  const first = setTimeout(run, 1000);
  first.unref();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
