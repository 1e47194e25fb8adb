/**
 * The plugin key-value store on the gateway's database: table `plugin_kv` (schema.sql v18), SQLite
 * in one process (`plugin-kv-sqlite.ts`), PostgreSQL for replicas (`plugin-kv-postgres.ts`).
 *
 * Expired rows are never returned (`get` compares `expires_at` with the clock) and are deleted by a
 * sweep: every `sweepIntervalMs` (an unref'd timer, started by the first call), on the one replica
 * holding the `plugin-kv-sweep` lease, at most `sweepBatch` rows a tick, so a tick stays a few ms
 * on SQLite's synchronous connection however many rows expired at once.
 */
import type { Clock } from '../runtime/clock.ts';
import type { Log } from '../runtime/log.ts';
import type { Leases } from '../coordination/leases.ts';
import type { Store } from './store.ts';
import type { KvOps, PluginKvEngine } from './plugin-kv.ts';
import { createSqliteKvOps } from './plugin-kv-sqlite.ts';
import { createPostgresKvOps } from './plugin-kv-postgres.ts';

export interface DatabaseKvOptions {
  clock: Clock;
  /** The coordination's leases: only one replica sweeps at a time. */
  leases: Leases;
  log: Log;
  /** Time between two sweeps, ms (default 60 s). */
  sweepIntervalMs?: number;
  /** Expired rows one sweep deletes at most (default 500). */
  sweepBatch?: number;
}

/** The database engine, with `sweep` exposed so tests (and a shutdown) can run one now. */
export interface DatabaseKvEngine extends PluginKvEngine {
  readonly engine: 'sqlite' | 'postgres';
  /** One sweep now, lease or not: returns the rows deleted. */
  sweep(): Promise<number>;
}

const SWEEP_LEASE = 'plugin-kv-sweep';

/** The plugin key-value store on `store`'s database; statements are prepared on first use. */
export function createDatabaseKv(store: Store, options: DatabaseKvOptions): DatabaseKvEngine {
  const { clock, leases, log } = options;
  const intervalMs = options.sweepIntervalMs ?? 60_000;
  const batch = options.sweepBatch ?? 500;
  let ops: KvOps | null = null;
  const opsOf = () => (ops ??= store.engine === 'sqlite' ? createSqliteKvOps(store.sqlite) : createPostgresKvOps(store.db));
  let timer: NodeJS.Timeout | null = null;
  let sweeping = false;
  let closed = false;
  const tick = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      if (await leases.tryAcquire(SWEEP_LEASE, intervalMs)) await opsOf().sweep(clock(), batch);
    } catch (err) {
      log.warn('plugin kv: sweeping expired entries failed; next tick tries again', { error: (err as Error).message });
    } finally {
      sweeping = false;
    }
  };
  const started = () => {
    if (timer || closed) return;
    timer = setInterval(() => void tick(), intervalMs);
    timer.unref();
  };
  return {
    engine: store.engine,
    get(plugin, key) {
      started();
      return opsOf().get(plugin, key, clock());
    },
    set(write) {
      started();
      return opsOf().set(write, clock());
    },
    delete(plugin, key) {
      started();
      return opsOf().delete(plugin, key);
    },
    sweep: () => opsOf().sweep(clock(), batch),
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
