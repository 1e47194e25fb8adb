/**
 * Which store the tests' gateways run on: SQLite in each data dir (default) or, with
 * `TOLLGATE_TEST_STORE=postgres`, a fresh PostgreSQL database per data dir on one real PostgreSQL
 * server: the run's (`test/run-tests.js` starts it and names it in `TOLLGATE_TEST_PG_URL`), else one
 * per test file (`postgres-server.ts`). The database is keyed by the data dir, so a gateway
 * restarted on the same data dir, and the CLI run against it, see the same data.
 *
 * In-process gateways (`test-gateway.ts`), `tollgate serve` processes (`gateway-process.ts`) and CLI
 * runs (`cli.ts`) all ask `testDatabaseUrl(dataDir)`; tests that read the database themselves open
 * it with `openTestStore(dataDir)` and use `store.db`.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { openGatewayStore } from '../../core/store/data-dir.ts';
import type { Store } from '../../core/store/store.ts';
import { sharedPostgresDatabases, startPostgresServer } from './postgres-server.ts';

/** `postgres` when this run puts every test gateway on PostgreSQL. */
export const TEST_STORE_ENGINE: 'sqlite' | 'postgres' = process.env.TOLLGATE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

let server: Promise<{ createDatabase(): Promise<string> }> | null = null;
const databases = new Map<string, Promise<string>>();

function keyOf(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/** The PostgreSQL URL a gateway on `dataDir` uses in this run, or null (SQLite in `dataDir`). */
export function testDatabaseUrl(dataDir: string): Promise<string | null> {
  if (TEST_STORE_ENGINE === 'sqlite') return Promise.resolve(null);
  const key = keyOf(dataDir);
  let url = databases.get(key);
  if (!url) {
    // The run's shared cluster when test/run-tests.js started one; else one for this file, shared by
    // the whole file and never stopped: without unref the file's process would never exit.
    const shared = process.env.TOLLGATE_TEST_PG_URL;
    server ??= shared ? Promise.resolve(sharedPostgresDatabases(shared)) : startPostgresServer().then((started) => {
      started.unref();
      return started;
    });
    url = server.then((s) => s.createDatabase());
    databases.set(key, url);
  }
  return url;
}

/** The environment for a child process (CLI, `tollgate serve`) on `dataDir`: `TOLLGATE_DATABASE_URL` on PostgreSQL runs. */
export async function testStoreEnv(dataDir: string | undefined): Promise<NodeJS.ProcessEnv> {
  const url = dataDir ? await testDatabaseUrl(dataDir) : null;
  return url ? { TOLLGATE_DATABASE_URL: url } : {};
}

/** Opens the store a gateway on `dataDir` uses (migrating it if new). Close it when done. */
export async function openTestStore(dataDir: string): Promise<Store> {
  return openGatewayStore(dataDir, { url: await testDatabaseUrl(dataDir) });
}
