// The PostgreSQL engine every postgres.ts part runs on: a node-postgres pool, one statement or one transaction at a time,
// failures translated into the store's own (pg-errors.ts). It names no table: the SQL lives beside each concern's interface.
import type pg from 'pg';
import { isConnectionFailure, translatePgError } from './pg-errors.ts';
import { pgDriver } from './pg-driver.ts';
import type { Query, Row } from './query.ts';

export interface PostgresConnectionOptions {
  /** postgres://user:password@host:port/database */
  readonly url: string;
  readonly poolMax: number;
  /** How long a call waits for a connection (new or from the pool) before failing with store_unavailable. */
  readonly connectTimeoutMs: number;
  /** PostgreSQL cancels a statement after this long; the client gives up on a silent server a little later. */
  readonly statementTimeoutMs: number;
  /** Statements with parameters prepared once per connection (named), then only bound: PostgreSQL plans each once. */
  readonly preparedStatements?: boolean;
  /** Told about connections that die while idle in the pool; the pool has already dropped them. */
  readonly onConnectionError?: (error: Error) => void;
}

/** The client-side timeout only has to catch a server that stopped answering, so the server's own timeout fires first. */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/**
 * A pooled connection while it is checked out. A socket that fails mid-query also emits 'error' on the client, which nobody
 * else listens to then: it marks the connection broken, and release() has the pool discard it rather than reuse it.
 */
class Lease {
  broken: Error | undefined;
  readonly client: pg.PoolClient;
  readonly #onError = (error: Error) => {
    this.broken = error;
  };

  constructor(client: pg.PoolClient) {
    this.client = client;
    client.on('error', this.#onError);
  }

  release(): void {
    this.client.removeListener('error', this.#onError);
    this.client.release(this.broken);
  }
}

export class PostgresEngine {
  /** What migrate's own connection (outside the pool) needs: migrate.ts. */
  readonly connection: PostgresConnectionOptions;
  readonly #pool: pg.Pool;
  #closing: Promise<void> | undefined;
  /** Each statement's name by its text, when statements are prepared; the same text has the same name on every connection. */
  readonly #names: Map<string, string> | null;
  readonly #beforeClose: (() => Promise<void>)[] = [];

  constructor(options: PostgresConnectionOptions) {
    this.connection = options;
    this.#names = options.preparedStatements === false ? null : new Map();
    this.#pool = new (pgDriver().Pool)({
      connectionString: options.url,
      max: options.poolMax,
      connectionTimeoutMillis: options.connectTimeoutMs,
      statement_timeout: options.statementTimeoutMs,
      query_timeout: options.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
      application_name: 'account-api',
      keepAlive: true,
    });
    // An idle connection dies when the engine restarts; without a listener that 'error' would crash the process.
    // The pool has already dropped the connection, and the next call opens a fresh one.
    this.#pool.on('error', (error) => options.onConnectionError?.(error));
  }

  /**
   * One statement on a pooled connection. Unlike pool.query, a constraint violation keeps the connection;
   * only a connection-level failure discards it. A property, so a part hands it on as a Query with no bind.
   */
  readonly query: Query = async (text, values = []) => {
    const lease = await this.#lease();
    try {
      const result = await lease.client.query(this.#statement(text, values));
      return result.rows as Row[];
    } catch (error) {
      if (isConnectionFailure(error)) lease.broken = error as Error;
      throw translatePgError(error);
    } finally {
      lease.release();
    }
  };

  /** One statement whose rows are not wanted (a DELETE of a batch): answers how many it touched, and nothing else crosses. */
  async rowCount(text: string, values: readonly unknown[] = []): Promise<number> {
    const lease = await this.#lease();
    try {
      return (await lease.client.query(this.#statement(text, values))).rowCount ?? 0;
    } catch (error) {
      if (isConnectionFailure(error)) lease.broken = error as Error;
      throw translatePgError(error);
    } finally {
      lease.release();
    }
  }

  async one(text: string, values: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.query(text, values))[0];
  }

  /** Several statements on one connection, committed together or not at all; constraint failures keep the connection. */
  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const lease = await this.#lease();
    const query: Query = async (text, values = []) => {
      try {
        return (await lease.client.query(this.#statement(text, values))).rows as Row[];
      } catch (error) {
        if (isConnectionFailure(error)) lease.broken = error as Error;
        throw error;
      }
    };
    try {
      await query('BEGIN');
      const result = await work(query);
      await query('COMMIT');
      return result;
    } catch (error) {
      // A connection that is gone has rolled back on the server already.
      if (lease.broken === undefined) await lease.client.query('ROLLBACK').catch(() => undefined);
      throw translatePgError(error);
    } finally {
      lease.release();
    }
  }

  /** A statement with parameters gets its name (node-postgres then prepares it on each connection once); others go as they are. */
  #statement(text: string, values: readonly unknown[]): pg.QueryConfig {
    if (this.#names === null || values.length === 0) return { text, values: values as unknown[] };
    let name = this.#names.get(text);
    if (name === undefined) {
      name = `aapi_${this.#names.size}`;
      this.#names.set(text, name);
    }
    return { name, text, values: values as unknown[] };
  }

  async #lease(): Promise<Lease> {
    try {
      return new Lease(await this.#pool.connect());
    } catch (error) {
      throw translatePgError(error);
    }
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  /** Work a part still owes the database (a batch it holds) is done before the pool closes. */
  beforeClose(work: () => Promise<void>): void {
    this.#beforeClose.push(work);
  }

  close(): Promise<void> {
    // pool.end() refuses a second call; every caller waits for the one shutdown instead.
    this.#closing ??= Promise.allSettled(this.#beforeClose.map((work) => work())).then(() => this.#pool.end());
    return this.#closing;
  }
}

/** What every concern's postgres.ts part holds: the engine it runs on. Its public methods are all the store's (composeStore). */
export abstract class PostgresPart {
  protected readonly engine: PostgresEngine;

  constructor(engine: PostgresEngine) {
    this.engine = engine;
  }
}
