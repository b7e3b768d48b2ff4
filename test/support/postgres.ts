// Test support: whether PostgreSQL is here to test against, and a throwaway database per test.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { THROUGH_PGBOUNCER_PORT, throughPooler } from './through-pooler.ts';

/** A superuser connection to an existing database; test databases are created and dropped through it. */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** The admin URL pointed at another database on the same server. */
export function databaseUrl(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

// Connect timeouts generous enough for a loaded machine: a slow connect must not turn into a failed (or skipped) test.
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>, connectTimeoutMs = 30_000): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, application_name: 'account-api tests' });
  client.on('error', () => undefined); // a dropped connection fails the query in flight, which is enough
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Undefined when PostgreSQL answers; otherwise why the tests that need it are skipped.
 * In CI nothing may be skipped silently, so there it throws instead.
 */
export async function postgresSkipReason(): Promise<string | undefined> {
  try {
    // The same generous bound as every other connection here: on a busy machine a slow answer is not an absent server.
    await withClient(ADMIN_URL, (client) => client.query('SELECT 1'));
    return undefined;
  } catch (error) {
    const why = error instanceof Error ? error.message || String(error) : String(error);
    const reason = `PostgreSQL is not reachable at ${withoutPassword(ADMIN_URL)}: ${why}; start it (see docs/deploy.md) to run these tests`;
    if (process.env.CI) throw new Error(`${reason}. In CI these tests must run, not be skipped.`, { cause: error });
    return reason;
  }
}

export interface TestDatabase {
  readonly name: string;
  /** For the service: through PgBouncer when the suite is rerun that way (through-pooler.ts). */
  readonly url: string;
  /** Runs one query as the superuser in this database, for what a test must do behind the store's back. */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** Drops the database even while connections remain open; safe to call twice. */
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `aapi_test_${randomBytes(6).toString('hex')}`;
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}`));
  // Behind a transaction pooler the service needs the server's own statement_timeout (docs/deploy.md#through-pgbouncer):
  // set as an operator sets it for the service's role, here on the database (the tests share one role); as long as the
  // workspace's PG_STATEMENT_TIMEOUT_MS.
  if (THROUGH_PGBOUNCER_PORT !== undefined) {
    await withClient(ADMIN_URL, (client) => client.query(`ALTER DATABASE ${name} SET statement_timeout = '60s'`));
  }
  return {
    name,
    url: throughPooler(databaseUrl(name)),
    // Behind the store's back: always direct.
    query: (text, values = []) => withClient(databaseUrl(name), (client) => client.query(text, values)),
    drop: () => withClient(ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

export interface TestSchema {
  /** Connects to the test database with this schema first on the search_path, so unqualified tables land in it. */
  readonly url: string;
  /** Runs one query as the superuser inside the schema, for what a test must do behind the store's back. */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  drop(): Promise<void>;
}

/**
 * An empty schema inside a test database: as clean as a new database for the store, and about ten times
 * quicker to make and throw away, so each test can have its own.
 */
export async function createTestSchema(database: TestDatabase): Promise<TestSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await withClient(database.url, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(database.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    query: (text, values = []) => withClient(url.toString(), (client) => client.query(text, values)),
    drop: () => withClient(database.url, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}
