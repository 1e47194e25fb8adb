/**
 * Kysely's PostgreSQL dialect with one retry for reads whose connection was lost (issue 39 item 9).
 *
 * Why: when PostgreSQL restarts or an administrator terminates the backends (`pg_terminate_backend`,
 * a failover), every pooled connection dies, but the pool notices an idle one only when its error
 * event is processed: a key lookup may be sent on a dead connection a moment later and fail with
 * 57P01 or "Connection terminated", although the server answers again. A read has no effect, so it
 * is sent once more, on a connection opened for it (not one from the pool, whose other idle
 * connections may be dead too). Only a `SELECT` built with the query builder, outside a transaction
 * (inside one the transaction is lost with its connection); writes are never repeated here: the
 * write-behind queue keeps and retries its own. Any other failure, or a failed retry, is thrown
 * as it is, and the request path answers 503 `store_unavailable`.
 */
import type pg from 'pg';
import {
  PostgresDialect, PostgresDriver, type CompiledQuery, type DatabaseConnection, type Driver, type PostgresDialectConfig,
  type QueryCompiler, type QueryResult, type TransactionSettings,
} from 'kysely';
import { isConnectionLostError } from './store-errors.ts';

export interface ReadRetryConfig extends PostgresDialectConfig {
  /** Opens a new connection outside the pool, for a retry; the dialect ends it after the query. */
  connectFresh(): Promise<pg.Client>;
  /** Retries running at once, at most (a restart fails every query together); beyond, no retry. */
  maxConcurrentRetries: number;
}

/** `PostgresDialect` whose driver retries reads once after a lost connection (see the file's comment). */
export class ReadRetryPostgresDialect extends PostgresDialect {
  readonly #config: ReadRetryConfig;
  constructor(config: ReadRetryConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ReadRetryDriver(new PostgresDriver(this.#config), this.#config);
  }
}

/** True for a query that only reads: a builder `SELECT` (raw SQL may call functions with effects). */
function isRead(query: CompiledQuery): boolean {
  return query.query.kind === 'SelectQueryNode';
}

/** The connection type `PostgresDriver` hands out (its class is not exported). */
type PooledConnection = Parameters<PostgresDriver['releaseConnection']>[0];

class ReadRetryDriver implements Driver {
  readonly #inner: PostgresDriver;
  readonly #config: ReadRetryConfig;
  #retrying = 0;
  constructor(inner: PostgresDriver, config: ReadRetryConfig) {
    this.#inner = inner;
    this.#config = config;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new ReadRetryConnection(await this.#inner.acquireConnection(), this);
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as ReadRetryConnection;
    c.inTransaction = true;
    return this.#inner.beginTransaction(c.inner, settings);
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ReadRetryConnection;
    try {
      await this.#inner.commitTransaction(c.inner);
    } finally {
      c.inTransaction = false;
    }
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ReadRetryConnection;
    try {
      await this.#inner.rollbackTransaction(c.inner);
    } finally {
      c.inTransaction = false;
    }
  }
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.savepoint((connection as ReadRetryConnection).inner, name, compile);
  }
  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.rollbackToSavepoint((connection as ReadRetryConnection).inner, name, compile);
  }
  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.#inner.releaseSavepoint((connection as ReadRetryConnection).inner, name, compile);
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection((connection as ReadRetryConnection).inner as PooledConnection);
  }
  destroy(): Promise<void> {
    return this.#inner.destroy();
  }

  /** Runs `query` on a new connection, or throws `original` when too many retries run already. */
  async retry<R>(query: CompiledQuery, original: unknown): Promise<QueryResult<R>> {
    if (this.#retrying >= this.#config.maxConcurrentRetries) throw original;
    this.#retrying++;
    let client: pg.Client | undefined;
    try {
      client = await this.#config.connectFresh();
      const result = await client.query(query.sql, [...query.parameters]);
      return { rows: (result.rows ?? []) as R[] };
    } finally {
      this.#retrying--;
      client?.end().catch(() => {});
    }
  }
}

class ReadRetryConnection implements DatabaseConnection {
  inTransaction = false;
  readonly inner: DatabaseConnection;
  readonly #driver: ReadRetryDriver;
  constructor(inner: DatabaseConnection, driver: ReadRetryDriver) {
    this.inner = inner;
    this.#driver = driver;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (err) {
      if (this.inTransaction || !isRead(query) || !isConnectionLostError(err)) throw err;
      return this.#driver.retry<R>(query, err);
    }
  }
  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
