/**
 * The write-behind queue's target for a store, chosen once by its engine: SQLite's synchronous
 * prepared statements (`write-target-sqlite.ts`) or PostgreSQL's batched statements
 * (`write-target-postgres.ts`).
 */
import type { Store } from '../store/store.ts';
import type { WriteTarget } from './write-behind.ts';
import { createSqliteWriteTarget } from './write-target-sqlite.ts';
import { createPostgresWriteTarget } from './write-target-postgres.ts';

/** The `WriteTarget` that persists the write-behind queue's writes to `store`. */
export function createWriteTarget(store: Store): WriteTarget {
  return store.engine === 'postgres' ? createPostgresWriteTarget(store) : createSqliteWriteTarget(store);
}
