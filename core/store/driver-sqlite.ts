/**
 * The SQLite driver: better-sqlite3, in the major that is safe on the running Node.
 *
 * Why two: better-sqlite3 12 subclasses the raw `node::ObjectWrap`, whose destructor on Node 24
 * asserts a current Environment; a Statement collected at teardown or by a GC outside one aborts the
 * process (`Assertion failed: (env) != nullptr` in `RemoveEnvironmentCleanupHook`, WiseLibs/better-sqlite3
 * #1515, seen here on every Node 24 test run). better-sqlite3 13 moved to Node-API and fixes it, but
 * needs Node 22+ (it crashes on Node 20). So Node 22+ loads 13 (`better-sqlite3-napi`, an npm alias
 * that ships prebuilt binaries) and Node 20 loads 12 (compiled at install). Their JavaScript API is
 * the same; every module opens databases through `openSqlite`. The alias is an optional dependency:
 * every 13.x declares engines `>=22`, so npm skips it on Node 20 instead of warning (EBADENGINE), and
 * installs it when `npm install` runs again on Node 22+ (package-lock.json unchanged either way).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteOptions = BetterSqlite3.Options;

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** The npm package this Node loads. */
export const SQLITE_PACKAGE = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/**
 * Loads the driver package `name`. Throws an Error saying to run `npm install` again when it is not
 * installed: node_modules was installed on an older Node (npm skipped the optional
 * `better-sqlite3-napi` there), copied from elsewhere, or failed to build.
 */
export function loadSqliteDriver(name: string): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)(name) as typeof BetterSqlite3;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'MODULE_NOT_FOUND' || !(err as Error).message.includes(`'${name}'`)) throw err;
    throw new Error(`the SQLite driver ${name} is not installed for Node ${process.versions.node}: node_modules was installed on another Node version; run \`npm install\` again with this one`, { cause: err });
  }
}

const Driver = loadSqliteDriver(SQLITE_PACKAGE);

/**
 * Page cache per connection, KiB: SQLite's own default. better-sqlite3 builds SQLite with 16 MB
 * (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), which the log's inserts fill within minutes and which is never
 * given back (malloc'd on the main thread): +14 to +17 MB of RSS under load. What the writes touch is
 * a few hundred KiB (the last pages of the log table and of each index, the rollups), and reads miss
 * into the OS's file cache: 300,000 log rows cost 11-12 µs of CPU a row with either size, and
 * `npm run bench:reporting` (a 1,000,000-row log) was no slower with 2 MB.
 */
const PAGE_CACHE_KIB = 2000;

/** Opens (creating when allowed) the database at `path` (`:memory:` for a private one). */
export function openSqlite(path: string, options?: SqliteOptions): SqliteDatabase {
  const sqlite = new Driver(path, options);
  sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  return sqlite;
}
