/**
 * The store on PostgreSQL (`store.url` in the manifest or `TOLLGATE_DATABASE_URL`), for several
 * replicas: a `pg` pool behind Kysely's `PostgresDialect`, so the same typed queries run on both
 * engines. Migrations come from `schema.sql` (`readMigrations('postgres')`), applied under an
 * advisory lock so replicas starting together migrate once, and recorded in `tollgate_schema`.
 *
 * Types read back as SQLite gives them: bigint (int8) and numeric (sums) as JS numbers — every
 * integer Tollgate stores (nano-USD, tokens, ids) stays below 2^53.
 *
 * Change feed: `notifyChange()` tells this process's listeners at once and every other process
 * through `NOTIFY tollgate_changes`; a dedicated connection `LISTEN`s and calls the listeners when
 * another process wrote (the admin API or CLI of another replica), and once after every reconnect
 * (notifications sent while disconnected are lost, so caches are dropped).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Kysely } from 'kysely';
import { Counter, Histogram } from 'prom-client';
import type { MetricsRegistry } from '../runtime/metrics.ts';
import type { Database } from './db-types.ts';
import { readMigrations, type PostgresStore, type Store } from './store.ts';
import { isStoreUnavailableError } from './store-errors.ts';
import { ReadRetryPostgresDialect } from './postgres-read-retry.ts';

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const CHANNEL = 'tollgate_changes';
/** Any fixed 64-bit number: the advisory lock that serialises migrations across replicas. */
const MIGRATION_LOCK = 7_320_114_216;

/** Type parsers of every store connection (int8 and numeric as JS numbers); also for connections opened elsewhere. */
export const storeTypeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Strings PostgreSQL's text type cannot hold: NUL, which SQLite stores as is. */
// eslint-disable-next-line no-control-regex -- NUL is the character sought
const NUL = /\u0000/g;

function withoutNul(value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replace(NUL, '\uFFFD') : value;
}

/**
 * The `pg` client every Tollgate connection uses: string parameters have NUL replaced by U+FFFD.
 * PostgreSQL refuses NUL in text ("invalid byte sequence for encoding UTF8: 0x00"), so a hostile
 * model name or id would otherwise fail a lookup with a 500 and a log row's whole batch; SQLite
 * stores it. A lookup of such a value then finds nothing, as it would have.
 */
export class TollgateClient extends pg.Client {}
// Patched on the prototype rather than overridden, so the class keeps pg's typed overloads (callbacks,
// submittables such as pg-cursor, configs); only the parameter array is changed.
TollgateClient.prototype.query = function query(this: pg.Client, ...args: unknown[]) {
  const [first, second] = args;
  if (Array.isArray(second)) args[1] = second.map(withoutNul);
  else if (first && typeof first === 'object' && Array.isArray((first as { values?: unknown }).values)) {
    const config = first as { values: unknown[] };
    config.values = config.values.map(withoutNul);
  }
  return (pg.Client.prototype.query as (...a: unknown[]) => unknown).apply(this, args);
} as pg.Client['query'];

/** How often the store checks the server for `GET /readyz`, ms. */
const HEALTH_PROBE_MS = 5_000;

export interface OpenPostgresOptions {
  /** How often the server is checked for `readiness()`, ms (default 5,000). */
  healthProbeMs?: number;
  /** Prometheus registry: `tollgate_store_query_seconds` and `tollgate_store_query_errors_total` are added to it. */
  metrics?: MetricsRegistry;
  /** Most connections in the pool (default 10). */
  maxConnections?: number;
  /** Wait before reconnecting the change feed after it dropped, ms (default 1000). */
  reconnectMs?: number;
  /** Called with errors of the change feed's connection (it reconnects by itself). */
  onError?: (err: Error) => void;
}

/** `postgres://user:***@host/db`: the URL without its password, for logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** Applies pending migrations under the advisory lock; returns the resulting version. */
export async function migratePostgres(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS tollgate_schema (version bigint NOT NULL)');
      const current = await client.query<{ version: number }>('SELECT version FROM tollgate_schema');
      let version = current.rows[0] ? Number(current.rows[0].version) : 0;
      for (const migration of readMigrations('postgres')) {
        if (migration.version <= version) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('DELETE FROM tollgate_schema');
          await client.query('INSERT INTO tollgate_schema (version) VALUES ($1)', [migration.version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        version = migration.version;
      }
      return version;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * How long opening a connection to PostgreSQL may take, ms, for the pool and for the connections
 * opened beside it (a read's retry, the change feed). pg waits without bound by default, so during a
 * network blackhole (packets dropped, no RST) a connect waited the OS's TCP timeout (~2 min) while a
 * request waited on it; a reachable server, even a loaded one, accepts in well under this.
 */
export const CONNECT_TIMEOUT_MS = 5000;

/** Connects, migrates and returns the store. Throws when the server is unreachable or a migration fails. */
export async function openPostgresStore(url: string, options: OpenPostgresOptions = {}): Promise<Store> {
  const maxConnections = options.maxConnections ?? 10;
  const pool = new pg.Pool({
    connectionString: url, max: maxConnections, types: storeTypeParsers, Client: TollgateClient, connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A client's error (the server restarted, an administrator terminated the connection) must not
  // crash the process. The pool listens on its idle clients only ('error' below) and removes that
  // listener while a client is checked out, and Kysely adds none when it acquires one: so every client
  // gets its own listener when it connects. The query under way fails with the error (a transient one:
  // `isTransientPostgresError`), and the pool discards the broken client when it is released.
  pool.on('connect', (client) => client.on('error', (err) => options.onError?.(err)));
  pool.on('error', (err) => options.onError?.(err));
  let schemaVersion: number;
  try {
    schemaVersion = await migratePostgres(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  // Each query's time and failures for `/metrics` (Kysely's log hook: no wrapper on the query path).
  const seconds = options.metrics && new Histogram({
    name: 'tollgate_store_query_seconds', help: 'Time of each PostgreSQL query of this replica, seconds.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2], registers: [options.metrics],
  });
  const failures = options.metrics && new Counter({
    name: 'tollgate_store_query_errors_total', help: 'PostgreSQL queries (and health probes) of this replica that failed: unreachable, refused, or bad.', registers: [options.metrics],
  });
  // `GET /readyz` reports the server as last seen by a probe or a query that could not reach it,
  // never waiting on it; the next successful probe says it is back.
  let healthy = true;
  const db = new Kysely<Database>({
    // A read whose pooled connection was terminated (a restart) is sent once more on a new one.
    dialect: new ReadRetryPostgresDialect({
      pool,
      maxConcurrentRetries: maxConnections,
      async connectFresh() {
        const client = new TollgateClient({ connectionString: url, types: storeTypeParsers, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
        client.on('error', (err) => options.onError?.(err));
        await client.connect();
        return client;
      },
    }),
    log: (event) => {
      if (event.level === 'error') {
        failures?.inc();
        if (isStoreUnavailableError(event.error)) healthy = false;
      } else {
        seconds?.observe(event.queryDurationMillis / 1000);
      }
    },
  });
  const probe = () => {
    pool.query('SELECT 1').then(() => (healthy = true), () => {
      healthy = false;
      failures?.inc();
    });
  };
  const probeTimer = setInterval(probe, options.healthProbeMs ?? HEALTH_PROBE_MS);
  probeTimer.unref();

  // Each process's notifications carry its own id, so it does not tell its listeners twice.
  const instance = randomUUID();
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of listeners) listener();
  };
  let feed: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  /** True once a feed connection has dropped: the next one must assume it missed changes. */
  let missed = false;
  const connectFeed = async (): Promise<void> => {
    if (closed || feed || listeners.size === 0) return;
    const client = new TollgateClient({ connectionString: url, types: storeTypeParsers, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    feed = client;
    const drop = (err?: Error) => {
      if (feed !== client) return;
      feed = null;
      missed = true;
      if (err) options.onError?.(err);
      client.end().catch(() => {});
      if (!closed) {
        retry = setTimeout(() => void connectFeed(), options.reconnectMs ?? 1000);
        retry.unref();
      }
    };
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload !== instance) tell();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Whatever changed while a dropped connection was down was not heard. (Not on the first
      // connection: telling then would drop caches loaded a moment ago, and a price book emptied
      // mid-command; what changed between opening the store and LISTEN is a start-up instant.)
      if (missed) {
        missed = false;
        tell();
      }
    } catch (err) {
      drop(err as Error);
    }
  };

  const store: PostgresStore = {
    engine: 'postgres',
    location: redactDatabaseUrl(url),
    db,
    schemaVersion,
    onExternalChange(listener) {
      listeners.add(listener);
      void connectFeed();
      return () => {
        listeners.delete(listener);
      };
    },
    notifyChange() {
      tell();
      pool.query('SELECT pg_notify($1, $2)', [CHANNEL, instance]).catch((err: Error) => options.onError?.(err));
    },
    readiness: () => ({ engine: 'postgres', status: healthy ? 'ready' : 'down' }),
    async close() {
      clearInterval(probeTimer);
      closed = true;
      if (retry) clearTimeout(retry);
      listeners.clear();
      const client = feed;
      feed = null;
      await client?.end().catch(() => {});
      await db.destroy();
    },
  };
  urls.set(store, url);
  return store;
}

const urls = new WeakMap<Store, string>();

/**
 * The connection URL (password included) of a store `openPostgresStore` returned, for a worker
 * thread that needs its own connection (the CSV export); undefined for any other store.
 */
export function postgresUrlOf(store: Store): string | undefined {
  return urls.get(store);
}
