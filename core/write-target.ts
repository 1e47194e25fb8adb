/**
 * The write-behind queue's target for a store, chosen once by its engine: SQLite's synchronous
 * prepared statements (`sqlite-write-target.ts`) or PostgreSQL's batched statements
 * (`postgres-write-target.ts`).
 */
import type { Store } from './db.ts';
import type { WriteTarget } from './write-behind.ts';
import { createSqliteWriteTarget } from './sqlite-write-target.ts';
import { createPostgresWriteTarget } from './postgres-write-target.ts';

/** The `WriteTarget` that persists the write-behind queue's writes to `store`. */
export function createWriteTarget(store: Store): WriteTarget {
  return store.engine === 'postgres' ? createPostgresWriteTarget(store) : createSqliteWriteTarget(store);
}
