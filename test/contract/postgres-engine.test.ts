// Protects what only the PostgreSQL store promises: lost connections become store_unavailable and heal, timeouts
// become store_busy, nothing half-written remains, and keys rest only as hashes.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

import { issueKey, KEY_PREFIXES } from '../../src/domain/api-keys.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres/postgres-store.ts';
import { HANG_MS } from '../support/eventually.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

const skip = await postgresSkipReason();
const { describe, test } = requiring(skip);

async function migratedStore(
  t: TestContext,
  options: Partial<PostgresStoreOptions> = {},
): Promise<{ database: TestDatabase; store: PostgresStore }> {
  const database = await createTestDatabase();
  const store = new PostgresStore({ url: database.url, environment: 'live', poolMax: 4, connectTimeoutMs: 2000, statementTimeoutMs: 5000, ...options });
  t.after(async () => {
    await store.close();
    await database.drop();
  });
  await store.migrate();
  return { database, store };
}

/** A second session that holds the account's row lock, as a slow transaction elsewhere would. */
async function lockAccountRow(t: TestContext, database: TestDatabase, accountId: number): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: database.url });
  holder.on('error', () => undefined);
  await holder.connect();
  t.after(() => holder.end().catch(() => undefined));
  await holder.query('BEGIN');
  await holder.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return holder;
}

function storeSessions(database: TestDatabase, where = 'true'): Promise<pg.QueryResult> {
  return database.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'account-api' AND ${where}`,
    [database.name],
  );
}

function killStoreSessions(database: TestDatabase, where = 'true'): Promise<pg.QueryResult> {
  return database.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'account-api' AND ${where}`,
    [database.name],
  );
}

/** Polls `check`; the bound is a hang detector, not a timing check (a loaded machine may take long to get there). */
async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = HANG_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`still waiting for ${what} after ${timeoutMs} ms: taken for a hang`);
    await sleep(20);
  }
}

function withCode(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof DomainError, `expected DomainError '${code}', got ${String(error)}`);
    assert.equal(error.code, code, `wrong code (message: ${error.message})`);
    assert.equal(error.kind, 'unavailable');
    return true;
  };
}

describe('PostgreSQL store: engine failures', () => {
  test('idle connections killed by the server do not crash the process; the pool drops them and the next call reconnects', async (t) => {
    const lost: Error[] = [];
    const { database, store } = await migratedStore(t, { onConnectionError: (error) => lost.push(error) });
    await Promise.all(Array.from({ length: 4 }, () => store.ping())); // fills the pool with idle connections
    const killed = (await killStoreSessions(database)).rowCount!;
    assert.ok(killed > 0, 'test setup: the store had no connection to kill');
    await waitFor(`the pool to notice all ${killed} connections died`, () => lost.length === killed);
    await store.ping();
    assert.equal(await store.countAccounts(), 0);
  });

  test('calls racing a server that kills their connections fail only with store_unavailable, and the store recovers', async (t) => {
    const { database, store } = await migratedStore(t);
    await Promise.all(Array.from({ length: 4 }, () => store.ping()));
    const killed = (await killStoreSessions(database)).rowCount!;
    // Some of these may get a connection the pool has not yet seen die: that is a 503, never a crash or a 500.
    const racing = await Promise.allSettled(Array.from({ length: 8 }, () => store.countAccounts()));
    for (const result of racing) {
      if (result.status === 'rejected') withCode('store_unavailable')(result.reason);
    }
    // Counted, not timed: each failed call drops at most one dead connection, so a store that recovers by itself (no
    // back-off, no restart) fails no more calls than it had connections killed, however slowly the machine runs.
    let failed = 0;
    await waitFor('a call to succeed again', () =>
      store.ping().then(
        () => true,
        (error) => withCode('store_unavailable')(error) && (failed++, false),
      ),
    );
    assert.ok(failed <= killed, `the store failed ${failed} calls after ${killed} of its connections were killed: it did not recover at once`);
  });

  test('a connection killed mid-statement fails with store_unavailable, writes nothing, and the store recovers', async (t) => {
    const { database, store } = await migratedStore(t);
    const created = await store.createAccount({ username: 'victor', name: 'before', timezone: 'UTC', premium: false });
    const holder = await lockAccountRow(t, database, created.id);
    const update = store.updateName(created.id, 'after');
    update.catch(() => undefined); // observed below; keeps the rejection from being reported as unhandled meanwhile
    await waitFor('the update to wait on the row lock', async () => (await storeSessions(database, "wait_event_type = 'Lock'")).rowCount! > 0);
    await killStoreSessions(database, "wait_event_type = 'Lock'");
    await assert.rejects(update, withCode('store_unavailable'));
    await holder.query('ROLLBACK');
    assert.equal((await store.findAccount('victor'))?.name, 'before', 'the interrupted update was written anyway');
    assert.equal((await store.updateName(created.id, 'after')).name, 'after', 'the store did not recover');
  });

  test('a statement stuck on a lock past statement_timeout fails with store_busy and writes nothing', async (t) => {
    const { database, store } = await migratedStore(t, { statementTimeoutMs: 300 });
    const created = await store.createAccount({ username: 'wendy', name: 'before', timezone: 'UTC', premium: false });
    const holder = await lockAccountRow(t, database, created.id);
    const started = performance.now();
    await assert.rejects(store.updateTimezone(created.id, 'Asia/Tokyo'), withCode('store_busy'));
    const elapsed = performance.now() - started;
    // store_busy (not store_unavailable) says the engine's statement_timeout gave up, not the client's later read timeout;
    // no upper bound on the time, which a loaded machine could stretch.
    assert.ok(elapsed >= 250, `the statement was given up after ${Math.round(elapsed)} ms, before its 300 ms statement_timeout`);
    await holder.query('ROLLBACK');
    assert.equal((await store.findAccount('wendy'))?.timezone, 'UTC', 'the timed-out update was written anyway');
  });
});

describe('PostgreSQL store: keys at rest', () => {
  test('the api_keys table holds the SHA-256 of each key and never the key or its secret', async (t) => {
    const { database, store } = await migratedStore(t);
    await store.createAccount({ username: 'niaj', name: 'niaj', timezone: 'UTC', premium: false });
    const keys = [issueKey('live'), issueKey('sandbox')];
    for (const key of keys) {
      await store.createKey('niaj', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: 'ci' });
    }
    const rows = (await database.query('SELECT k::text AS text, secret_hash FROM api_keys k')).rows;
    const text = rows.map((row) => String(row.text)).join('\n');
    for (const key of keys) {
      assert.ok(text.includes(key.keyId), 'test setup: the key id is not in the rows, so nothing was checked');
      assert.ok(!text.includes(key.token), 'the whole key is stored in clear');
      const secret = key.token.slice(KEY_PREFIXES[key.environment].length + key.keyId.length, -6);
      assert.ok(!text.includes(secret), 'the secret part of the key is stored in clear');
      assert.ok(
        rows.some((row) => Buffer.from(row.secret_hash as Buffer).equals(key.hash)),
        'the SHA-256 of the key is not what is stored',
      );
    }
  });
});

describe('PostgreSQL store: last-use stamps', () => {
  test('stamps of many keys made together are written in one statement, and a stamp never moves back', async (t) => {
    const { database, store } = await migratedStore(t);
    const keys = Array.from({ length: 10 }, () => issueKey('live'));
    for (const [index, key] of keys.entries()) {
      await store.createAccountWithKey(
        { username: `stamped${index}`, name: 'Stamped', timezone: 'UTC', premium: true },
        { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null },
      );
    }
    // Counts the statements that write last_used_at, whatever their number of rows.
    await database.query(`CREATE TABLE stamp_statements (n int NOT NULL); INSERT INTO stamp_statements VALUES (0);
      CREATE FUNCTION count_stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE stamp_statements SET n = n + 1; RETURN NULL; END $$;
      CREATE TRIGGER count_stamps AFTER UPDATE OF last_used_at ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION count_stamp();`);
    const usedAt = new Date('2030-01-02T03:04:05.000Z');
    await Promise.all(keys.map((key) => store.touchKey(key.keyId, usedAt)));
    assert.equal((await database.query('SELECT n FROM stamp_statements')).rows[0].n, 1, 'ten stamps took more than one statement');
    for (const index of keys.keys()) {
      assert.deepEqual((await store.listKeys(`stamped${index}`)).map((key) => key.lastUsedAt), [usedAt.toISOString()]);
    }
    await store.touchKey(keys[0]!.keyId, new Date('2029-01-01T00:00:00.000Z'));
    assert.deepEqual((await store.listKeys('stamped0')).map((key) => key.lastUsedAt), [usedAt.toISOString()], 'an older stamp moved it back');
  });

  test('a stamp still waiting for its batch is written when the store closes', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const store = new PostgresStore({ url: database.url, environment: 'live', poolMax: 2, connectTimeoutMs: 2000, statementTimeoutMs: 5000 });
    await store.migrate();
    const key = issueKey('live');
    await store.createAccountWithKey(
      { username: 'closing', name: 'Closing', timezone: 'UTC', premium: true },
      { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null },
    );
    const stamped = store.touchKey(key.keyId, new Date('2030-01-02T03:04:05.000Z'));
    await store.close();
    await stamped;
    const { rows } = await database.query('SELECT last_used_at FROM api_keys WHERE key_id = $1', [key.keyId]);
    assert.equal((rows[0].last_used_at as Date).toISOString(), '2030-01-02T03:04:05.000Z');
  });
});
