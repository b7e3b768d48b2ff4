// Data safety: acknowledged writes survive kill -9, migrations run on start, a too-new schema stops the server, SIGTERM is clean.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { HANG_MS } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import {
  cliOk,
  createAccount,
  createWorkspace,
  expectStartFailure,
  runCli,
  startServer,
  type Account,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

const ACCOUNTS = 6;
/** Issue 4 asks for at least 20 rounds; CRASH_ROUNDS runs more (or fewer while debugging). */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 20);
/** Per writer and round; two writers per account, so 6 accounts x 2 x 17 = 204 acknowledged writes a round. */
const ACKNOWLEDGED_WRITES = 17;
/** Writes each writer must have had acknowledged in the last batch before the server is killed under it. */
const IN_FLIGHT_PROGRESS = 3;

const workspaces: Workspace[] = [];

after(() => {
  for (const workspace of workspaces) workspace.cleanup();
});

function freshWorkspace(): Workspace {
  const workspace = createWorkspace();
  workspaces.push(workspace);
  return workspace;
}

function liveDatabasePath(workspace: Workspace): string {
  return join(workspace.dir, 'live.db');
}

/** Opens the database the way an operator would after the server has stopped, and closes it again. */
function withDatabase<T>(workspace: Workspace, work: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(liveDatabasePath(workspace));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

function integrityCheck(workspace: Workspace): string {
  return withDatabase(workspace, (db) =>
    db
      .prepare('PRAGMA integrity_check')
      .all()
      .map((row) => String(row.integrity_check))
      .join('\n'),
  );
}

/** One field of one account, written by exactly one sequential writer, so "the last acknowledged value" is well defined. */
interface Writer {
  readonly account: Account;
  readonly path: '/user' | '/settings';
  readonly field: 'name' | 'timezone';
  nextValue(): string;
  /** The value of the last write answered 200. */
  lastAcknowledged: string;
  /** Every value answered 200 since the last restart: each must have its audit entry. */
  acknowledgedValues: string[];
  /** A value sent whose answer never came (the server died under it), or null. */
  inFlight: string | null;
  acknowledgedThisBatch: number;
}

async function writeOnce(server: ServerProcess, writer: Writer): Promise<void> {
  const value = writer.nextValue();
  writer.inFlight = value;
  const result = await call('POST', `${server.api}${writer.path}`, { auth: writer.account, form: { [writer.field]: value } });
  assert.equal(result.status, 200, `POST ${writer.path} ${writer.field}=${value} for ${writer.account.username} failed: ${result.text}`);
  assert.equal(result.body.data[writer.field], value, `POST ${writer.path} should answer with the value just written: ${result.text}`);
  writer.lastAcknowledged = value;
  writer.acknowledgedValues.push(value);
  writer.inFlight = null;
  writer.acknowledgedThisBatch++;
}

/** Reads every account's stored name and timezone straight from the database file. */
function storedValues(workspace: Workspace): Map<string, { name: string; timezone: string }> {
  return withDatabase(workspace, (db) => {
    const rows = db.prepare('SELECT username, name, timezone FROM accounts').all();
    return new Map(rows.map((row) => [String(row.username), { name: String(row.name), timezone: String(row.timezone) }]));
  });
}

/** Every account.updated entry of this writer's account and field, oldest first, read straight from the database file. */
function auditedValues(workspace: Workspace, writer: Writer): { value: string; actor: string; requestId: unknown }[] {
  return withDatabase(workspace, (db) =>
    db
      .prepare(
        `SELECT json_extract(changes, '$.' || ?) AS change, actor, request_id FROM audit_events
         WHERE action = 'account.updated' AND username = ? ORDER BY id`,
      )
      .all(writer.field, writer.account.username)
      .filter((row) => row.change !== null)
      .map((row) => ({ value: String(JSON.parse(String(row.change)).new), actor: String(row.actor), requestId: row.request_id })),
  );
}

/** An acknowledged change and its audit entry survive together, or neither happened (the in-flight one either way). */
function assertAudited(workspace: Workspace, writer: Writer, stored: string | undefined, where: string): void {
  const entries = auditedValues(workspace, writer);
  const values = new Set(entries.map((entry) => entry.value));
  for (const value of writer.acknowledgedValues) {
    assert.ok(values.has(value), `${where}: ${writer.account.username}'s ${writer.field} ${JSON.stringify(value)} was acknowledged but has no audit entry`);
  }
  assert.equal(
    entries.at(-1)?.value,
    stored,
    `${where}: the newest audit entry of ${writer.account.username}'s ${writer.field} should name the stored value (a change without its entry, or the reverse)`,
  );
  const last = entries.at(-1)!;
  assert.match(last.actor, /^key:[0-9A-Za-z]{12}$/, `${where}: the entry should name the key that made the change`);
  assert.equal(typeof last.requestId, 'string', `${where}: the entry should carry the request id`);
}

function assertSurvivor(writer: Writer, found: string | undefined, where: string): void {
  const allowed = writer.inFlight === null ? [writer.lastAcknowledged] : [writer.lastAcknowledged, writer.inFlight];
  assert.ok(
    found !== undefined && allowed.includes(found),
    `${where}: ${writer.account.username}'s ${writer.field} is ${JSON.stringify(found)}, but the last acknowledged value was ` +
      `${JSON.stringify(writer.lastAcknowledged)}` +
      (writer.inFlight === null ? '' : ` (and ${JSON.stringify(writer.inFlight)} was in flight)`),
  );
}

test('every write answered 200 survives kill -9 of the server, with its audit entry, round after round', async () => {
  const workspace = freshWorkspace();
  let server = await startServer(workspace);
  try {
    const zonesResult = await call('GET', `${server.api}/settings/timezones`, {
      auth: await createAccount(workspace, 'zone-reader'),
    });
    assert.equal(zonesResult.status, 200, zonesResult.text);
    const zones: string[] = zonesResult.body.data;
    assert.ok(zones.length > 100, 'the timezone list should be long enough to give every write a distinct value');

    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, index) => createAccount(workspace, `durable-${index}`, { name: 'initial', timezone: 'UTC' })),
    );
    const writers: Writer[] = [];
    accounts.forEach((account, index) => {
      let names = 0;
      writers.push({
        account,
        path: '/user',
        field: 'name',
        nextValue: () => `${account.username} write ${++names}`,
        lastAcknowledged: 'initial',
        acknowledgedValues: [],
        inFlight: null,
        acknowledgedThisBatch: 0,
      });
      // Each account walks the list from its own offset; consecutive values always differ.
      let position = index * 50;
      writers.push({
        account,
        path: '/settings',
        field: 'timezone',
        nextValue: () => {
          let zone = zones[position++ % zones.length]!;
          if (zone === 'UTC') zone = zones[position++ % zones.length]!;
          return zone;
        },
        lastAcknowledged: 'UTC',
        acknowledgedValues: [],
        inFlight: null,
        acknowledgedThisBatch: 0,
      });
    });

    for (let round = 1; round <= ROUNDS; round++) {
      // Acknowledged batch: all writers at once (concurrent across accounts and fields), each one sequential.
      for (const writer of writers) writer.acknowledgedThisBatch = 0;
      await Promise.all(
        writers.map(async (writer) => {
          for (let i = 0; i < ACKNOWLEDGED_WRITES; i++) await writeOnce(server, writer);
        }),
      );

      // In-flight batch: writers keep going until the server dies under them.
      for (const writer of writers) writer.acknowledgedThisBatch = 0;
      let killing = false;
      const unexpected: unknown[] = [];
      const loops = writers.map(async (writer) => {
        for (;;) {
          try {
            await writeOnce(server, writer);
          } catch (error) {
            if (!killing) unexpected.push(error);
            return;
          }
        }
      });
      // The bound is a hang detector, not a timing check.
      const deadline = Date.now() + HANG_MS;
      while (writers.some((writer) => writer.acknowledgedThisBatch < IN_FLIGHT_PROGRESS) && unexpected.length === 0) {
        if (Date.now() > deadline) throw new Error('the writers made no progress before the kill');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      killing = true;
      await server.kill();
      await Promise.all(loops);
      assert.deepEqual(unexpected, [], `round ${round}: a write failed before the server was killed`);

      assert.equal(integrityCheck(workspace), 'ok', `round ${round}: PRAGMA integrity_check after kill -9`);
      const onDisk = storedValues(workspace);
      for (const writer of writers) {
        const stored = onDisk.get(writer.account.username);
        assertSurvivor(writer, stored?.[writer.field], `round ${round}, database file after kill -9`);
        assertAudited(workspace, writer, stored?.[writer.field], `round ${round}, audit trail after kill -9`);
        writer.acknowledgedValues = [];
      }

      server = await startServer(workspace);
      for (const writer of writers) {
        const read = await call('GET', `${server.api}/user`, { auth: writer.account });
        assert.equal(read.status, 200, `round ${round}: ${writer.account.username} should still read GET /user after the restart: ${read.text}`);
        const found: string = read.body.data[writer.field];
        assertSurvivor(writer, found, `round ${round}, GET /user after restart`);
        assert.equal(found, onDisk.get(writer.account.username)?.[writer.field], 'the restarted server should serve what is on disk');
        // Whatever survived is the new baseline: the next write overwrites it.
        writer.lastAcknowledged = found;
        writer.inFlight = null;
      }
    }

    const acknowledged = writers.length * ACKNOWLEDGED_WRITES * ROUNDS;
    console.log(`kill -9: ${ROUNDS} rounds, ${acknowledged}+ acknowledged writes, every last acknowledged value found after each restart, integrity_check ok`);
    const code = await server.stop();
    assert.equal(code, 0, 'the server should stop cleanly after the last round');
    assert.equal(integrityCheck(workspace), 'ok', 'PRAGMA integrity_check after the last round');
  } finally {
    await server.kill();
  }
});

test('serve applies the migrations to a fresh database', async () => {
  const workspace = freshWorkspace();
  const server = await startServer(workspace);
  await server.stop();

  const rows = withDatabase(workspace, (db) => db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all());
  const versions = rows.map((row) => Number(row.version));
  assert.ok(versions.includes(1), `schema_migrations should record version 1 after serve, found ${JSON.stringify(rows)}`);
  for (const row of rows) {
    assert.ok(String(row.name) !== '', `every applied migration should record its name: ${JSON.stringify(row)}`);
    assert.ok(!Number.isNaN(Date.parse(String(row.applied_at))), `applied_at should be a timestamp: ${JSON.stringify(row)}`);
  }
  const tables = withDatabase(workspace, (db) => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).map((row) => String(row.name));
  assert.ok(tables.includes('accounts') && tables.includes('api_keys'), `the initial migration should create the tables: ${tables.join(', ')}`);
});

test('a database schema newer than this build stops serve and migrate with a clear message', async () => {
  const workspace = freshWorkspace();
  await cliOk(workspace, ['migrate']);
  withDatabase(workspace, (db) => {
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(999, 'from_the_future', new Date().toISOString());
  });

  const failure = await expectStartFailure(workspace);
  assert.match(failure, /newer than this build/, `the server should say why it refuses to start:\n${failure}`);
  const exit = /exited with (\S+) before it was ready/.exec(failure)?.[1];
  assert.ok(exit !== undefined, `the server should have exited by itself, not been started:\n${failure}`);
  assert.ok(exit !== '0' && exit !== 'null', `the server should exit with a non-zero status, got ${exit}`);

  const migrate = await runCli(workspace, ['migrate']);
  assert.equal(migrate.code, 1, `migrate on a too-new schema should exit 1: ${migrate.stderr}${migrate.stdout}`);
  assert.match(migrate.stderr, /newer than this build/, `migrate should say why it refuses: ${migrate.stderr}`);

  const versions = withDatabase(workspace, (db) => db.prepare('SELECT version FROM schema_migrations').all()).map((row) => Number(row.version));
  assert.ok(versions.includes(999), 'a refused start must leave the newer schema record alone');
});

test('SIGTERM stops the server cleanly with exit code 0', async () => {
  const workspace = freshWorkspace();
  const server = await startServer(workspace);
  const hello = await call('GET', `${server.api}/hello`);
  assert.equal(hello.status, 200, hello.text);
  const code = await server.stop();
  assert.equal(code, 0, `SIGTERM should end the server with exit code 0:\n${server.output.join('\n')}`);
  assert.ok(server.output.some((line) => line.includes('stopped')), `the server should log that it stopped:\n${server.output.join('\n')}`);
});

test('SIGTERM sent as soon as the server says it is listening still stops it cleanly', async () => {
  // An orchestrator may stop a server the moment it reports ready; the signal must not find it without a handler.
  for (let attempt = 1; attempt <= 5; attempt++) {
    const workspace = freshWorkspace();
    const server = await startServer(workspace);
    const code = await server.stop();
    assert.equal(
      code,
      0,
      `attempt ${attempt}: SIGTERM right after 'listening' should end the server with exit code 0, ` +
        `not kill it (signal ${server.child.signalCode}):\n${server.output.join('\n')}`,
    );
    assert.ok(server.output.some((line) => line.includes('stopped')), `attempt ${attempt}: the server should log that it stopped`);
  }
});
