/**
 * The store: one better-sqlite3 connection (WAL, foreign keys on) behind Kysely for typed queries, or
 * a PostgreSQL pool (`store-postgres.ts`) behind the same Kysely types. `schema.sql` is the only DDL;
 * its `-- version: N` sections are applied in order while `PRAGMA user_version` is below N, each in
 * its own transaction (PostgreSQL: see `readMigrations`).
 *
 * Other processes (the CLI) write to the same file; `onExternalChange` tells caches when they did,
 * by polling `PRAGMA data_version`, which changes only for commits made by other connections.
 */
import { readFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../runtime/package-root.ts';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqlite, type SqliteDatabase } from './driver-sqlite.ts';
import { Kysely, SqliteDialect, sql, type Compilable } from 'kysely';
import type { Database } from './db-types.ts';

export type Sqlite = BetterSqlite3.Database;

/** Which database a store runs on: the embedded SQLite file (default) or a PostgreSQL server (several replicas). */
export type StoreEngine = 'sqlite' | 'postgres';

/** What both engines offer (`Store` is one of them, told apart by `engine`). */
interface StoreBase {
  /** The database file, or the PostgreSQL URL without its password: for logs and the banner. */
  readonly location: string;
  /** Typed queries, on either engine. */
  readonly db: Kysely<Database>;
  /** `GET /readyz`'s view of the store: `{engine, status: "ready"|"down"}` (PostgreSQL: its last health probe). */
  readiness(): { engine: StoreEngine; status: 'ready' | 'down' };
  /** Schema version after migrations. */
  readonly schemaVersion: number;
  /**
   * Calls `listener` within `pollMs` of another process committing to the database.
   * Returns an unsubscribe function.
   */
  onExternalChange(listener: () => void): () => void;
  /**
   * Tells the same listeners, at once, that THIS process wrote (the admin API): caches that only
   * watch other processes would otherwise serve stale rows until their TTL.
   */
  notifyChange(): void;
  close(): Promise<void>;
}

/** The embedded store: one better-sqlite3 connection, also reachable raw for prepared statements on hot paths. */
export interface SqliteStore extends StoreBase {
  readonly engine: 'sqlite';
  /** The raw connection, for prepared statements on hot paths and transactions. */
  readonly sqlite: Sqlite;
}

/** The shared store of several replicas: a PostgreSQL pool behind the same Kysely types (`store-postgres.ts`). */
export interface PostgresStore extends StoreBase {
  readonly engine: 'postgres';
}

/** The store, on either engine: code that runs on both uses `db`; SQLite-only code narrows on `engine` first. */
export type Store = SqliteStore | PostgresStore;

/** `store` as the SQLite store it must be for `what` (an export, a test of the file); throws on PostgreSQL. */
export function sqliteStoreOf(store: Store, what: string): SqliteStore {
  if (store.engine !== 'sqlite') throw new Error(`${what} needs the SQLite store; this one is PostgreSQL (${store.location})`);
  return store;
}

const SCHEMA_PATH = join(packageRoot(import.meta.url), 'schema.sql');

/** One migration: the schema `version` it brings the database to, and the SQL that does it. */
export interface Migration {
  version: number;
  sql: string;
}

/**
 * The migrations in `schema.sql` for one engine, in ascending order.
 *
 * SQLite: every `-- version: N` section (up to its `-- postgres:` part, if any).
 * PostgreSQL: the `-- postgres baseline: N` section (the whole schema at version N, as one
 * migration: PostgreSQL support started at N), then the `-- postgres:` part of each later version.
 * A later version without a `-- postgres:` part is an error: both engines move together.
 */
export function readMigrations(engine: StoreEngine = 'sqlite', schemaText = readFileSync(SCHEMA_PATH, 'utf8')): Migration[] {
  const sqlite: Migration[] = [];
  const postgres = new Map<number, string>();
  let baseline = null as Migration | null;
  let current: { version: number; part: 'sqlite' | 'postgres' | 'baseline'; lines: string[] } | null = null;
  const finish = () => {
    if (!current) return;
    const sql = current.lines.join('\n');
    if (current.part === 'sqlite') sqlite.push({ version: current.version, sql });
    else if (current.part === 'postgres') postgres.set(current.version, sql);
    else baseline = { version: current.version, sql };
  };
  for (const line of schemaText.split('\n')) {
    const version = /^-- version: (\d+)\s*$/.exec(line);
    const base = /^-- postgres baseline: (\d+)\s*$/.exec(line);
    if (version || base) {
      finish();
      current = { version: Number((version ?? base)![1]), part: version ? 'sqlite' : 'baseline', lines: [] };
      continue;
    }
    if (/^-- postgres:\s*$/.test(line) && current?.part === 'sqlite') {
      finish();
      current = { version: current.version, part: 'postgres', lines: [] };
      continue;
    }
    current?.lines.push(line);
  }
  finish();
  sqlite.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`schema.sql: expected "-- version: ${i + 1}", found version ${m.version}`);
  });
  if (engine === 'sqlite') return sqlite;
  const start: Migration | null = baseline;
  if (!start) throw new Error('schema.sql: no "-- postgres baseline: N" section');
  const later = sqlite.filter((m) => m.version > start.version).map((m) => {
    const sql = postgres.get(m.version);
    if (sql === undefined) throw new Error(`schema.sql: version ${m.version} has no "-- postgres:" part`);
    return { version: m.version, sql };
  });
  return [start, ...later];
}

/**
 * Applies pending migrations; returns the resulting `user_version`. Safe when several processes open
 * a new database at once (two CLI commands, a gateway and a command): each migration runs in a
 * `BEGIN IMMEDIATE` transaction, which waits for the write lock (`busy_timeout`) before it reads the
 * version, so a process that lost the race sees the version the winner committed and skips that
 * step. A version read before the lock could be stale and apply a step twice ("table … already
 * exists"). An up-to-date database is read without taking the lock.
 */
export function migrate(sqlite: Sqlite): number {
  const migrations = readMigrations();
  const userVersion = () => sqlite.pragma('user_version', { simple: true }) as number;
  let version = userVersion();
  for (const migration of migrations) {
    if (migration.version <= version) continue;
    version = sqlite.transaction(() => {
      const current = userVersion();
      if (migration.version <= current) return current;
      sqlite.exec(migration.sql);
      sqlite.pragma(`user_version = ${migration.version}`);
      return migration.version;
    }).immediate();
  }
  return version;
}

export interface OpenStoreOptions {
  /** How often to poll for other processes' commits, ms. */
  changePollMs?: number;
}

/**
 * How long a statement waits for another connection's lock before SQLITE_BUSY, ms, while nothing
 * else waits on the process (the CLI, migrations at start, a graceful stop's last flush): a CLI
 * command or a gateway starting beside another writer waits its turn.
 */
export const PATIENT_BUSY_TIMEOUT_MS = 5000;
/**
 * The same wait while the gateway serves, ms. better-sqlite3 waits on the main thread, so every
 * write that meets a lock (another process's `BEGIN EXCLUSIVE`, a long CLI transaction) would
 * freeze every request for the whole wait, once per write-behind flush: ten requests took minutes.
 * A few ms absorb a short commit of another process; beyond, the write fails at once as
 * unavailable: the write-behind keeps its writes for the next flush, a write a request makes
 * before its answer's status answers 503 `store_unavailable`, and a write made after
 * the upstream answered retries asynchronously for a while (the response-store's insert) since its
 * client's status is already sent.
 */
export const SERVING_BUSY_TIMEOUT_MS = 5;

/** Sets how long `store`'s SQLite connection waits for a lock, ms (`*_BUSY_TIMEOUT_MS`); nothing on PostgreSQL. */
export function setBusyTimeout(store: Store, timeoutMs: number): void {
  if (store.engine === 'sqlite' && store.sqlite.open) store.sqlite.pragma(`busy_timeout = ${Math.trunc(timeoutMs)}`);
}

/** Attempts at switching a file to WAL, and the wait between two, ms. */
const WAL_ATTEMPTS = 50;
const WAL_RETRY_MS = 20;

/**
 * Switches the file to WAL. Two processes opening a new file at once (two CLI commands, replicas
 * starting) can meet while one converts it: SQLite then answers SQLITE_BUSY at once, without waiting
 * `busy_timeout` (it does not wait where waiting could deadlock), so the switch is retried a while.
 * Blocking waits are fine here: this runs once, when the store opens, before anything is served.
 */
function enableWal(sqlite: SqliteDatabase): void {
  for (let attempt = 1; ; attempt++) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (attempt >= WAL_ATTEMPTS || !/^SQLITE_BUSY/.test(String((err as { code?: unknown }).code))) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WAL_RETRY_MS);
    }
  }
}

/** Opens (creating if needed) the database file and brings its schema up to date. */
export function openStore(file: string, options: OpenStoreOptions = {}): SqliteStore {
  mkdirSync(dirname(file), { recursive: true });
  const sqlite = openSqlite(file);
  enableWal(sqlite);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${PATIENT_BUSY_TIMEOUT_MS}`);
  const schemaVersion = migrate(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });

  const listeners = new Set<() => void>();
  let timer: NodeJS.Timeout | null = null;
  let dataVersion = sqlite.pragma('data_version', { simple: true }) as number;
  const poll = () => {
    const now = sqlite.pragma('data_version', { simple: true }) as number;
    if (now === dataVersion) return;
    dataVersion = now;
    for (const listener of listeners) listener();
  };

  return {
    engine: 'sqlite',
    location: file,
    readiness: () => ({ engine: 'sqlite', status: sqlite.open ? 'ready' : 'down' }),
    sqlite,
    db,
    schemaVersion,
    onExternalChange(listener) {
      listeners.add(listener);
      if (!timer) {
        timer = setInterval(poll, options.changePollMs ?? 250);
        timer.unref();
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    notifyChange() {
      for (const listener of listeners) listener();
    },
    async close() {
      if (timer) clearInterval(timer);
      listeners.clear();
      await db.destroy();
      if (sqlite.open) sqlite.close();
    },
  };
}

/** The second `nowIso` last formatted (ms since the epoch ÷ 1000, floored) and its text up to the milliseconds. */
let isoSecond = NaN;
let isoSecondPrefix = '';

/**
 * Current time as stored in the database: ISO-8601 UTC with milliseconds (`Date#toISOString`).
 * Every request's log row takes one; `toISOString` costs ~1.5 µs on Node 20, so the text up to the
 * second is kept and a call within the same second only appends the milliseconds.
 */
export function nowIso(nowMs: number = Date.now()): string {
  const wholeMs = Math.trunc(nowMs); // as Date does
  const second = Math.floor(wholeMs / 1000);
  if (second !== isoSecond) {
    const iso = new Date(nowMs).toISOString();
    // Years past 9999 (or before 0) are written with six digits and a sign: not cached.
    if (iso.length !== 24) return iso;
    isoSecond = second;
    isoSecondPrefix = iso.slice(0, 20);
    return iso;
  }
  const ms = wholeMs - second * 1000;
  return `${isoSecondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/**
 * Prepares a Kysely-built query as a better-sqlite3 statement, for hot paths where Kysely's async
 * executor would cost more than the query. Build the query with placeholder values; pass the real
 * values to the statement positionally, in the order they appear in the query. The row type is
 * inferred from the query.
 */
export function prepareQuery<O>(sqlite: Sqlite, query: Compilable<O>): BetterSqlite3.Statement<unknown[], O> {
  return sqlite.prepare<unknown[], O>(query.compile().sql);
}

/**
 * True when `err` is a unique-constraint violation on either engine: better-sqlite3's
 * `SQLITE_CONSTRAINT_UNIQUE` (or `_PRIMARYKEY`), PostgreSQL's SQLSTATE 23505.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/**
 * Takes the write lock at the start of a transaction that reads before it writes. On SQLite a deferred
 * transaction (Kysely's `BEGIN`) that reads and then writes fails at once with SQLITE_BUSY_SNAPSHOT
 * ("database is locked") when another connection, e.g. a running gateway's log writer, committed in
 * between: `busy_timeout` does not retry that. A write that changes nothing takes the lock, waiting for
 * it like any write. On PostgreSQL it is a no-op.
 */
export async function lockForWrite(trx: Kysely<Database>, table: keyof Database): Promise<void> {
  await sql`DELETE FROM ${sql.table(table)} WHERE 1 = 0`.execute(trx);
}
