// What an operator's maintenance on the PostgreSQL server looks like to callers: a database closed to connections
// (ALLOW_CONNECTIONS false) and a database that has turned read-only (a standby the connection string still names after a
// failover, or default_transaction_read_only) are both 503 store_unavailable with Retry-After, never a 500; nothing is written
// while they last, and service comes back by itself once they end. A server started on a read-only database cannot migrate:
// it stops, saying so, rather than waiting for ever as if the database were unreachable.
import assert from 'node:assert/strict';
import pg from 'pg';
import { eventually } from '../support/eventually.ts';
import { call, failureMessage, type CallResult } from '../support/http.ts';
import { ADMIN_URL, createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, expectStartFailure, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const skip = await postgresSkipReason();
const { after, before, describe, test } = requiring(skip);

function assertUnavailable(answer: CallResult, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.text}`);
  assert.equal(answer.body.status, 'error');
  assert.equal(failureMessage(answer).code, 'store_unavailable', `${what}: ${answer.text}`);
  assert.ok(Number(answer.headers.get('retry-after')) > 0, `${what}: a 503 says when to retry`);
}

describe('PostgreSQL under maintenance', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let server: ServerProcess;
  let alice: Account;
  let admin: pg.Client;

  /** As the superuser, from the server's maintenance database: the test database may be closed to connections. */
  async function asOperator(statement: string): Promise<void> {
    await admin.query(statement);
  }
  /** Ends the service's open connections, so its next request opens new ones and meets the change. */
  async function endServiceConnections(): Promise<void> {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database.name]);
  }

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({ DATABASE_URL: database.url, PG_CONNECT_TIMEOUT_MS: '2000' });
    server = await startServer(workspace);
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
    admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
  });

  after(async () => {
    await admin?.query(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await server?.stop();
    await admin?.end();
    await database?.drop();
    workspace?.cleanup();
  });

  test('a database closed to connections is 503 store_unavailable for reads and writes, and served again once reopened', async () => {
    assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200);
    await asOperator(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS false`);
    await endServiceConnections();
    try {
      assertUnavailable(await call('GET', `${server.api}/settings`, { auth: alice }), 'GET /settings while closed');
      assertUnavailable(await call('POST', `${server.api}/user`, { auth: alice, form: { name: 'Written while closed' } }), 'POST /user while closed');
    } finally {
      await asOperator(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS true`);
    }
    const back = await eventually('GET /user once the database is open again', () => call('GET', `${server.api}/user`, { auth: alice }), (answer) => answer.status === 200);
    assert.equal(back.body.data.name, 'Alice', 'the write answered 503 left nothing behind');
    assert.equal(server.child.exitCode, null, 'the server never exited');
  });

  test('a read-only database answers reads, refuses writes with 503 store_unavailable and writes nothing, and takes writes once writable', async () => {
    await asOperator(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
    await endServiceConnections();
    try {
      await eventually('a read on the read-only database', () => call('GET', `${server.api}/settings`, { auth: alice }), (answer) => answer.status === 200);
      assertUnavailable(await call('POST', `${server.api}/settings`, { auth: alice, form: { timezone: 'Asia/Tokyo' } }), 'POST /settings while read-only');
      assertUnavailable(await call('POST', `${server.api}/user`, { auth: alice, form: { name: 'Written while read-only' } }), 'POST /user while read-only');
    } finally {
      await asOperator(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
      await endServiceConnections();
    }
    const unchanged = await call('GET', `${server.api}/user`, { auth: alice });
    assert.equal(unchanged.body.data.name, 'Alice');
    assert.equal(unchanged.body.data.timezone, 'UTC');
    const written = await eventually(
      'POST /settings once writable',
      () => call('POST', `${server.api}/settings`, { auth: alice, form: { timezone: 'Asia/Tokyo' } }),
      (answer) => answer.status === 200,
    );
    assert.equal(written.body.data.timezone, 'Asia/Tokyo', written.text);
  });

  test('a server started on a read-only database stops with status 1, saying to point DATABASE_URL at the primary', async () => {
    const another = createWorkspace({ DATABASE_URL: database.url, PG_CONNECT_TIMEOUT_MS: '2000' });
    await asOperator(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
    try {
      const output = await expectStartFailure(another);
      assert.match(output, /The database is read-only .*point DATABASE_URL at the primary/, output);
      assert.doesNotMatch(output, /Waiting for PostgreSQL/, 'it waited as for an unreachable database');
    } finally {
      await asOperator(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
      another.cleanup();
    }
    assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200, 'the running server was not affected');
  });
});
