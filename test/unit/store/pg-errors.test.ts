// Protects how PostgreSQL failures are sorted: unreachable (503, try again), busy (503), or a real fault (500, unchanged).
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ConfigError } from '../../../src/config.ts';
import { DomainError } from '../../../src/domain/errors.ts';
import { isConnectionFailure, translatePgError } from '../../../src/store/postgres/pg-errors.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { HANG_MS } from '../../support/eventually.ts';

function failure(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

function assertUnavailable(error: unknown, code = 'store_unavailable'): void {
  assert.ok(error instanceof DomainError, `expected a DomainError, got ${String(error)}`);
  assert.equal(error.kind, 'unavailable');
  assert.equal(error.code, code, `wrong code (message: ${error.message})`);
}

describe('a transaction pooler the configuration does not name', () => {
  test("PgBouncer's refusal of a startup parameter is a configuration error that says to set PG_POOLER, not a failure to retry", () => {
    const refusal = failure('unsupported startup parameter: statement_timeout', { code: '08P01', severity: 'FATAL' });
    assert.equal(isConnectionFailure(refusal), false, 'retrying cannot cure it');
    const translated = translatePgError(refusal);
    assert.ok(translated instanceof ConfigError, `expected a ConfigError, got ${String(translated)}`);
    assert.match(translated.message, /unsupported startup parameter: statement_timeout\. Set PG_POOLER=transaction/);
  });
});

describe('sorting PostgreSQL failures', () => {
  const unreachable: Array<[string, Error]> = [
    ['connection refused', failure('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    ['connection reset', failure('read ECONNRESET', { code: 'ECONNRESET' })],
    ['a timed-out socket', failure('connect ETIMEDOUT', { code: 'ETIMEDOUT' })],
    ['a broken pipe', failure('write EPIPE', { code: 'EPIPE' })],
    ['every address refused', new AggregateError([failure('connect ECONNREFUSED ::1:5432', { code: 'ECONNREFUSED' })], '')],
    ['the server closing the socket', failure('Connection terminated unexpectedly')],
    ['a connect timeout', failure('Connection terminated due to connection timeout', { cause: failure('Connection terminated') })],
    ['a lone client that could not connect in time', failure('timeout expired')],
    ['a pool with no connection to give', failure('timeout exceeded when trying to connect')],
    ['a server that stopped answering', failure('Query read timeout')],
    ['a client whose connection already failed', failure('Client has encountered a connection error and is not queryable')],
    ['administrator shutdown (57P01)', failure('terminating connection due to administrator command', { code: '57P01' })],
    ['crash shutdown (57P02)', failure('terminating connection because of crash of another server process', { code: '57P02' })],
    ['the server starting up (57P03)', failure('the database system is starting up', { code: '57P03' })],
    ['a database not accepting connections (55000)', failure('database "accounts" is not currently accepting connections', { code: '55000' })],
    ['a write reaching a standby after a failover (25006)', failure('cannot execute INSERT in a read-only transaction', { code: '25006' })],
    ['too many connections (53300)', failure('sorry, too many clients already', { code: '53300' })],
    ['connection failure (08006)', failure('connection failure', { code: '08006' })],
    ['could not connect (08001)', failure('could not establish connection', { code: '08001' })],
  ];
  for (const [what, error] of unreachable) {
    test(`${what} becomes store_unavailable, keeping the cause`, () => {
      assert.equal(isConnectionFailure(error), true);
      const translated = translatePgError(error);
      assertUnavailable(translated);
      assert.equal((translated as DomainError).cause, error, 'the original error is not kept as the cause');
      assert.equal((translated as DomainError).message, 'The database is unreachable; try again shortly.');
    });
  }

  test('a statement timeout becomes store_busy', () => {
    assertUnavailable(translatePgError(failure('canceling statement due to statement timeout', { code: '57014' })), 'store_busy');
  });

  test("a NUL byte in a caller's value is the caller's to fix (400 invalid_parameter), not a fault", () => {
    const translated = translatePgError(failure('invalid byte sequence for encoding "UTF8": 0x00', { code: '22021' }));
    assert.ok(translated instanceof DomainError, `expected a DomainError, got ${String(translated)}`);
    assert.equal(translated.kind, 'invalid');
    assert.equal(translated.code, 'invalid_parameter');
  });

  const faults: Array<[string, Error]> = [
    ['a unique violation', failure('duplicate key value violates unique constraint', { code: '23505', constraint: 'x' })],
    ['a syntax error', failure('syntax error at or near "SELEC"', { code: '42601' })],
    ['a missing table', failure('relation "accounts" does not exist', { code: '42P01' })],
    ['a wrong password', failure('password authentication failed for user "x"', { code: '28P01' })],
    ['another object_not_in_prerequisite_state (55000)', failure('cannot change sequence "s" while it is in use', { code: '55000' })],
    ['a pool already closed', failure('Cannot use a pool after calling end on the pool')],
  ];
  for (const [what, error] of faults) {
    test(`${what} passes through unchanged`, () => {
      assert.equal(isConnectionFailure(error), false);
      assert.equal(translatePgError(error), error);
    });
  }

  test('a DomainError passes through unchanged', () => {
    const error = new DomainError('not_found', 'account_not_found', 'x');
    assert.equal(translatePgError(error), error);
  });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

function storeAt(port: number, connectTimeoutMs = 2000): PostgresStore {
  return new PostgresStore({ environment: 'live', url: `postgres://account-api@127.0.0.1:${port}/nothing`, poolMax: 2, connectTimeoutMs, statementTimeoutMs: 1000 });
}

describe('a PostgreSQL store that cannot reach its server', () => {
  test('fails with store_unavailable when the port refuses connections', async () => {
    const server = createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve)); // nothing listens there any more
    const store = storeAt(port);
    try {
      for (const call of [() => store.ping(), () => store.findAccount('x'), () => store.migrate(), () => store.checkSchema()]) {
        await assert.rejects(call(), (error) => (assertUnavailable(error), true));
      }
    } finally {
      await store.close();
    }
  });

  test('fails with store_unavailable within the connect timeout when the server never answers', async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => sockets.push(socket)); // accepts, then says nothing
    const port = await listen(server);
    const store = storeAt(port, 200);
    try {
      // Without the connect timeout these calls would wait for ever on a server that says nothing; the bound only turns such
      // a hang into a failure that says so (it is not a timing check: a loaded machine may take long, and that is fine).
      const calls = (async () => {
        await assert.rejects(store.ping(), (error) => (assertUnavailable(error), true));
        await assert.rejects(store.migrate(), (error) => (assertUnavailable(error), true));
        return 'failed';
      })();
      const hang = sleep(HANG_MS, 'hung', { ref: false });
      assert.equal(await Promise.race([calls, hang]), 'failed', `the calls were still waiting after ${HANG_MS} ms: no connect timeout`);
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
