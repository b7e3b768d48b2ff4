// Protects the PostgreSQL engine behind a transaction pooler (PgBouncer, pool_mode = transaction): no named statement, the
// statement timeout set in each transaction, and migrations that take their lock per transaction.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import pg from 'pg';

import { loadConfig } from '../../src/config.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

const skip = (await postgresSkipReason()) ?? pgbouncerSkipReason();
const { after, before, describe, test } = requiring(skip);

describe('PostgreSQL behind PgBouncer in transaction mode', () => {
  // One server connection per database: every client of it shares the same session, as clients do under load.
  let bouncer: PgBouncer;
  before(async () => {
    bouncer = await startPgBouncer({ poolSize: 1 });
  });
  after(async () => {
    await bouncer?.stop();
  });

  async function database(t: TestContext): Promise<TestDatabase> {
    const made = await createTestDatabase();
    t.after(() => made.drop());
    return made;
  }

  /** Configured as PG_POOLER=transaction configures it. */
  function engine(t: TestContext, url: string, statementTimeoutMs = 5000): PostgresEngine {
    const settings = loadConfig({ DATABASE_URL: url, PG_POOLER: 'transaction' }).postgres;
    const made = new PostgresEngine({ ...settings, url, connectTimeoutMs: 30_000, statementTimeoutMs });
    t.after(() => made.close());
    return made;
  }

  test('named statements collide across the clients sharing a server connection; PG_POOLER=transaction sends none', async (t) => {
    const url = bouncer.url((await database(t)).name);
    // What PG_PREPARED_STATEMENTS=on did: the same name prepared by two clients whose sessions are one server's.
    const clients = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    for (const client of clients) {
      client.on('error', () => undefined);
      await client.connect();
      t.after(() => client.end().catch(() => undefined));
    }
    await clients[0]!.query({ name: 'aapi_0', text: 'SELECT $1::int AS n', values: [1] });
    await assert.rejects(clients[1]!.query({ name: 'aapi_0', text: 'SELECT $1::text AS t', values: ['x'] }), /prepared statement "aapi_0" already exists/);

    // Two engines configured for the pooler alternate different texts on that one server connection.
    const [first, second] = [engine(t, url), engine(t, url)];
    for (let round = 0; round < 20; round += 1) {
      const [a, b] = await Promise.all([first.one('SELECT $1::int AS n', [round]), second.one('SELECT $1::text AS t', [`r${round}`])]);
      assert.equal(a?.n, round);
      assert.equal(b?.t, `r${round}`);
    }
  });

  test("a transaction is cancelled at the engine's statement timeout though the server has none (SET LOCAL in its BEGIN)", async (t) => {
    const made = await database(t);
    const store = engine(t, bouncer.url(made.name), 300);
    assert.equal((await store.one("SELECT current_setting('statement_timeout') AS s"))?.s, '0', 'test setup: the server should have no timeout');
    await assert.rejects(
      store.transaction((query) => query('SELECT pg_sleep(30)')),
      (error) => error instanceof DomainError && error.code === 'store_busy',
    );
    // Local to that transaction: the server connection, shared by the next client, keeps no timeout.
    assert.equal((await store.one("SELECT current_setting('statement_timeout') AS s"))?.s, '0', 'the timeout outlived its transaction');
  });

  test('five instances migrating an empty database at once through it: each migration applied exactly once, no lock left', async (t) => {
    const made = await database(t);
    await made.query(`ALTER DATABASE ${made.name} SET statement_timeout = '5s'`);
    const stores = Array.from({ length: 5 }, () => {
      const store = new PostgresStore({ url: bouncer.url(made.name), environment: 'live', poolMax: 2, connectTimeoutMs: 30_000, statementTimeoutMs: 5000, preparedStatements: false, pooler: 'transaction' });
      t.after(() => store.close());
      return store;
    });
    const reports = await Promise.all(stores.map((store) => store.migrate()));
    const current = reports[0]!.current;
    const applied = reports.flatMap((report) => report.applied).sort((a, b) => a - b);
    assert.deepEqual(applied, Array.from({ length: current }, (_, index) => index + 1), 'a migration was applied twice or not at all');
    assert.deepEqual(reports.map((report) => report.environment), Array(5).fill('live'));
    const locks = await made.query(
      "SELECT l.objid, l.granted, a.state, left(a.query, 120) AS query FROM pg_locks l JOIN pg_stat_activity a USING (pid) " +
        // pg_locks is the cluster's: only this database's, since other tests migrate theirs meanwhile.
        "WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    assert.deepEqual(locks.rows, [], 'a migration lock outlived its transaction on a pooled server connection');
    for (const store of stores) await store.checkSchema();
  });
});
