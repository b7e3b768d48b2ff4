// The PostgreSQL engine every postgres.ts part runs on: a node-postgres pool, one statement or transaction at a time,
// failures translated (pg-errors.ts). It names no table. Behind a transaction pooler (PG_POOLER=transaction) it keeps no
// session state: no startup parameter but application_name, the statement timeout set per transaction, and no named statement
// (config.ts refuses PG_PREPARED_STATEMENTS=on with it).
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ConfigError } from '../../config.ts';
import { closeWithin } from '../bounded-close.ts';
import { isConnectionFailure, translatePgError } from './pg-errors.ts';
import { pgDriver } from './pg-driver.ts';
import { socketClosed, socketOf } from './pg-sockets.ts';
import type { Query, Row } from './query.ts';

export interface PostgresConnectionOptions {
  readonly url: string;
  readonly poolMax: number;
  /** Waiting for a connection past this fails with store_unavailable. */
  readonly connectTimeoutMs: number;
  /** Server-side; the client gives up on a silent server a little later. */
  readonly statementTimeoutMs: number;
  /** Named statements, prepared once per connection: PostgreSQL plans each once. */
  readonly preparedStatements?: boolean;
  /** `transaction`: the URL is a transaction pooler (PgBouncer), so a connection's session lasts one transaction. */
  readonly pooler?: 'none' | 'transaction';
  /** Idle connections that die; the pool has already dropped them. */
  readonly onConnectionError?: (error: Error) => void;
}

/**
 * A named statement's name: a hash of its text, so one name never means two statements, whichever process or version named it
 * and in whatever order it first ran them (numbered by first use, two processes gave aapi_0 to different SQL: issue 36).
 * 160 bits in hex: within PostgreSQL's 63-byte identifiers.
 */
function statementName(text: string): string {
  return `aapi_${createHash('sha256').update(text).digest('hex').slice(0, 40)}`;
}

/** The client timeout only catches a server that stopped answering, so the server's fires first. */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/** A socket failing mid-query emits 'error' on the client, nobody else listens: marked broken, the pool discards it. */
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
  readonly connection: PostgresConnectionOptions;
  readonly #pool: pg.Pool;
  /** Every open connection, so close() can cut them when the server does not see them out (bounded-close.ts). */
  readonly #clients = new Set<pg.PoolClient>();
  #closing: Promise<void> | undefined;
  /** Each text's name (statementName), worked out once. */
  readonly #names: Map<string, string> | null;
  readonly #beforeClose: (() => Promise<void>)[] = [];
  /** What opens a transaction: behind a pooler, with the statement timeout the session cannot carry, in the same round trip. */
  readonly #begin: string;

  constructor(options: PostgresConnectionOptions) {
    this.connection = options;
    const pooled = options.pooler === 'transaction';
    this.#names = options.preparedStatements === false ? null : new Map();
    this.#begin = pooled ? `BEGIN; SET LOCAL statement_timeout = ${Math.trunc(options.statementTimeoutMs)}` : 'BEGIN';
    this.#pool = new (pgDriver().Pool)({
      connectionString: options.url,
      max: options.poolMax,
      connectionTimeoutMillis: options.connectTimeoutMs,
      // PgBouncer refuses it as a startup parameter; behind it, a single statement runs under the server's own setting
      // (docs/deploy.md#through-pgbouncer) and a transaction under the SET LOCAL in its BEGIN.
      ...(pooled ? {} : { statement_timeout: options.statementTimeoutMs }),
      query_timeout: options.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
      application_name: 'account-api',
      keepAlive: true,
    });
    // Without a listener, an idle connection dying (engine restart) would crash the process.
    this.#pool.on('error', (error) => options.onConnectionError?.(error));
    this.#pool.on('connect', (client) => this.#clients.add(client));
    this.#pool.on('remove', (client) => this.#clients.delete(client));
  }

  /** Unlike pool.query, a constraint violation keeps the connection. A property, so a part hands it on unbound. */
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

  /** For statements whose rows are not wanted: only the count crosses. */
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

  /** Constraint failures keep the connection. */
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
      await query(this.#begin);
      const result = await work(query);
      await query('COMMIT');
      return result;
    } catch (error) {
      if (lease.broken === undefined) await lease.client.query('ROLLBACK').catch(() => undefined);
      throw translatePgError(error);
    } finally {
      lease.release();
    }
  }

  #statement(text: string, values: readonly unknown[]): pg.QueryConfig {
    if (this.#names === null || values.length === 0) return { text, values: values as unknown[] };
    let name = this.#names.get(text);
    if (name === undefined) {
      name = statementName(text);
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

  /**
   * Behind a transaction pooler a single statement (most of the service's) runs under the server's own statement_timeout,
   * set for the service's role; a server that has none, or a longer one, would let it run unbounded. Refuses to go on then.
   */
  async assertStatementTimeout(): Promise<void> {
    if (this.connection.pooler !== 'transaction') return;
    const row = await this.one("SELECT setting::bigint AS ms FROM pg_settings WHERE name = 'statement_timeout'");
    const serverMs = Number(row?.ms ?? 0);
    const wanted = Math.trunc(this.connection.statementTimeoutMs);
    if (serverMs > 0 && serverMs <= wanted) return;
    throw new ConfigError(
      `Behind PG_POOLER=transaction the database's own statement_timeout bounds single statements, and it is ` +
        `${serverMs === 0 ? 'off' : `${serverMs} ms, longer than PG_STATEMENT_TIMEOUT_MS (${wanted} ms)`}: ` +
        `run ALTER ROLE <the service's role> SET statement_timeout = '${wanted}ms' ` +
        '(docs/deploy.md#through-pgbouncer).',
    );
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  beforeClose(work: () => Promise<void>): void {
    this.#beforeClose.push(work);
  }

  close(): Promise<void> {
    // pool.end() refuses a second call.
    this.#closing ??= Promise.allSettled(this.#beforeClose.map((work) => work())).then(async () => {
      // pool.end() only asks each connection to end (Terminate, then a half-close); its socket stays open, and so does the
      // process, until the server sees it out, which a paused server or a silent network never does: bounded.
      const sockets = [...this.#clients].flatMap((client) => socketOf(client) ?? []);
      await closeWithin(
        async () => {
          await this.#pool.end();
          await Promise.all(sockets.map(socketClosed));
        },
        () => {
          for (const socket of sockets) socket.destroy();
        },
      );
    });
    return this.#closing;
  }
}

/** Its public methods are all the store's (composeStore). */
export abstract class PostgresPart {
  protected readonly engine: PostgresEngine;

  constructor(engine: PostgresEngine) {
    this.engine = engine;
  }
}
