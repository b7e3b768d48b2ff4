// `account-api backup` while the server takes writes, and the restore: a second server on the copy serves what was acknowledged.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { HANG_MS } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import {
  cliJsonError as jsonError,
  describeRun,
  expectCliExit as expectExit,
  cliOk,
  createAccount,
  createWorkspace,
  runCli,
  startServer,
  type Account,
  type CliResult,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

const WRITERS = 6;
/** Accounts written straight into the file before the server starts, so the copy is megabytes, not a few pages. */
const PADDING_ACCOUNTS = 20_000;
const TIMEZONES = ['Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'Africa/Accra', 'Australia/Sydney', 'UTC'];

const workspaces: Workspace[] = [];

after(() => {
  for (const workspace of workspaces) workspace.cleanup();
});

function freshWorkspace(): Workspace {
  const workspace = createWorkspace();
  workspaces.push(workspace);
  return workspace;
}

/** Opens a copy as an operator would check it, without changing it. */
function readCopy<T>(path: string, read: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

interface Write {
  readonly seq: number;
  readonly kind: 'name' | 'timezone';
  readonly value: string;
  ackedAt: number | null;
  status: number | null;
}

/** Sequential writes for one account until told to stop, each recorded with when (if) it was acknowledged. */
function writeUntil(server: ServerProcess, account: Account, stopped: () => boolean, writes: Write[]): Promise<void> {
  return (async () => {
    for (let seq = 0; !stopped(); seq++) {
      const write: Write =
        seq % 2 === 0
          ? { seq, kind: 'name', value: `${account.username} ${seq}`, ackedAt: null, status: null }
          : { seq, kind: 'timezone', value: TIMEZONES[seq % TIMEZONES.length]!, ackedAt: null, status: null };
      writes.push(write);
      const result = await call('POST', `${server.api}/${write.kind === 'name' ? 'user' : 'settings'}`, {
        auth: account,
        form: { [write.kind]: write.value },
      });
      write.status = result.status;
      if (result.status === 200) write.ackedAt = performance.now();
    }
  })();
}

interface Created {
  readonly username: string;
  readonly code: number | null;
  readonly exitedAt: number;
}

/** Accounts created one after another through the CLI, as an operator would while the server runs. */
function createUntil(workspace: Workspace, stopped: () => boolean, created: Created[]): Promise<void> {
  return (async () => {
    for (let n = 0; !stopped(); n++) {
      const username = `cli-${n}`;
      const result = await runCli(workspace, ['users', 'create', username]);
      created.push({ username, code: result.code, exitedAt: performance.now() });
    }
  })();
}

/** Waits for `check`; the bound is a hang detector, not a timing check (a loaded machine may take long to get there). */
async function until(what: string, check: () => boolean, limitMs = HANG_MS): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > limitMs) throw new Error(`${what} did not happen within ${limitMs} ms: taken for a hang`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a backup taken under write load, then restored', () => {
  let workspace: Workspace;
  let server: ServerProcess;
  let writers: Account[];
  const file = () => join(workspace.dir, 'backups', 'live-copy.db');

  before(async () => {
    workspace = freshWorkspace();
    await cliOk(workspace, ['migrate']);
    const db = new DatabaseSync(join(workspace.dir, 'live.db'));
    const now = new Date().toISOString();
    const insert = db.prepare("INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at) VALUES (?, ?, 'UTC', 0, ?, ?)");
    db.exec('BEGIN');
    for (let i = 0; i < PADDING_ACCOUNTS; i++) insert.run(`padding-${i}`, `Padding account number ${i}`, now, now);
    db.exec('COMMIT');
    db.close();
    writers = await Promise.all(Array.from({ length: WRITERS }, (_, i) => createAccount(workspace, `writer-${i}`)));
    server = await startServer(workspace);
  });

  after(async () => {
    await server?.stop();
  });

  test('the copy opens, is whole and current, holds every write acknowledged before it started, and serves', async () => {
    mkdirSync(join(workspace.dir, 'backups'));
    let stop = false;
    const writes = writers.map(() => [] as Write[]);
    const created: Created[] = [];
    const load = [...writers.map((account, i) => writeUntil(server, account, () => stop, writes[i]!)), createUntil(workspace, () => stop, created)];
    const acked = (i: number) => writes[i]!.filter((write) => write.ackedAt !== null).length;

    let backup: CliResult;
    let startedAt: number;
    let endedAt: number;
    try {
      await until('writes and a CLI account before the backup', () => writers.every((_, i) => acked(i) >= 5) && created.length >= 1);
      startedAt = performance.now();
      backup = await runCli(workspace, ['backup', file(), '--json']);
      endedAt = performance.now();
      const before = writers.map((_, i) => acked(i));
      const createdBefore = created.length;
      // The server keeps taking writes after the backup, as during it.
      await until('writes and a CLI account after the backup', () => writers.every((_, i) => acked(i) >= before[i]! + 3) && created.length > createdBefore);
    } finally {
      stop = true;
      await Promise.all(load);
    }

    assert.equal(backup.code, 0, describeRun(['backup', file(), '--json'], backup));
    const report = JSON.parse(backup.stdout);
    assert.equal(report.backup, file());
    assert.ok(report.pages > 100, `a database of ${PADDING_ACCOUNTS} accounts is more than 100 pages: ${backup.stdout}`);
    assert.deepEqual(readdirSync(join(workspace.dir, 'backups')), ['live-copy.db'], 'the backup leaves nothing but FILE behind');
    const all = writes.flat();
    const failed = all.filter((write) => write.status !== null && write.status !== 200);
    assert.deepEqual(failed, [], 'no write may fail while the backup runs');
    const during = all.filter((write) => write.ackedAt !== null && write.ackedAt > startedAt && write.ackedAt < endedAt).length;
    assert.ok(during > 0, 'writes should be acknowledged while the backup runs: the server is not stopped');
    assert.ok(created.every((account) => account.code === 0), `every CLI users create should succeed: ${JSON.stringify(created)}`);

    // Restore as docs/operations.md says: the copy becomes the database file of a stopped (here: new) server.
    const restored = freshWorkspace();
    copyFileSync(file(), join(restored.dir, 'live.db'));

    const { integrity, version, environment, accounts } = readCopy(file(), (db) => ({
      integrity: db.prepare('PRAGMA integrity_check').all().map((row) => String(row.integrity_check)),
      version: Number(db.prepare('SELECT max(version) AS version FROM schema_migrations').get()!.version),
      environment: String(db.prepare('SELECT environment FROM deployment').get()!.environment),
      accounts: new Map(db.prepare('SELECT username, name, timezone FROM accounts').all().map((row) => [String(row.username), row])),
    }));
    assert.deepEqual(integrity, ['ok'], 'PRAGMA integrity_check of the copy');
    const current = JSON.parse(await cliOk(workspace, ['migrate', '--json'])).current;
    assert.equal(version, current, 'the copy should have every migration the live database has');
    assert.equal(environment, 'live', 'the copy keeps the record that it is the live database');
    assert.equal([...accounts.keys()].filter((name) => name.startsWith('padding-')).length, PADDING_ACCOUNTS);

    for (const [i, account] of writers.entries()) {
      const row = accounts.get(account.username);
      assert.ok(row !== undefined, `${account.username} is missing from the copy`);
      const sent = writes[i]!;
      // Each writer waits for one answer before sending the next: the copy holds the last write acknowledged before the backup
      // started, or one sent after it.
      for (const kind of ['name', 'timezone'] as const) {
        const mine = sent.filter((write) => write.kind === kind);
        const lastAcked = mine.filter((write) => write.ackedAt !== null && write.ackedAt < startedAt).at(-1)!;
        const allowed = new Set(mine.filter((write) => write.seq >= lastAcked.seq).map((write) => write.value));
        assert.ok(
          allowed.has(String(row[kind])),
          `${account.username}'s ${kind} in the copy is '${row[kind]}', but '${lastAcked.value}' (write ${lastAcked.seq}) was acknowledged before the backup started`,
        );
      }
    }
    const acknowledgedAccounts = created.filter((account) => account.exitedAt < startedAt);
    assert.ok(acknowledgedAccounts.length >= 1);
    for (const account of acknowledgedAccounts) assert.ok(accounts.has(account.username), `${account.username} was created before the backup but is not in it`);

    const second = await startServer(restored);
    try {
      for (const account of writers) {
        const answer = await call('GET', `${second.api}/user`, { auth: account });
        assert.equal(answer.status, 200, `the restored server should serve ${account.username}: ${answer.text}`);
        assert.equal(answer.body.data.name, accounts.get(account.username)!.name, `the restored server serves the copy's ${account.username}`);
      }
      const write = await call('POST', `${second.api}/user`, { auth: writers[0]!, form: { name: 'After the restore' } });
      assert.equal(write.status, 200, `the restored database takes writes: ${write.text}`);
    } finally {
      await second.stop();
    }
  });

  test('refuses to replace an existing file without --force, and replaces it with --force', async () => {
    const target = join(workspace.dir, 'existing.db');
    writeFileSync(target, 'an operator file that must survive');
    const refused = await expectExit(workspace, ['backup', target, '--json'], 1);
    assert.equal(jsonError(refused).code, 'backup_file_exists');
    assert.match(jsonError(refused).message, /--force/, 'the refusal says how to replace the file');
    assert.equal(readFileSync(target, 'utf8'), 'an operator file that must survive');

    await expectExit(workspace, ['backup', target, '--force'], 0);
    assert.deepEqual(
      readCopy(target, (db) => db.prepare('PRAGMA integrity_check').all().map((row) => String(row.integrity_check))),
      ['ok'],
    );
  });

  test('refuses to write over the database itself, even with --force', async () => {
    const result = await expectExit(workspace, ['backup', './live.db', '--force', '--json'], 1);
    assert.equal(jsonError(result).code, 'backup_file_exists');
    const answer = await call('GET', `${server.api}/user`, { auth: writers[0]! });
    assert.equal(answer.status, 200, `the server's database is untouched: ${answer.text}`);
  });
});

describe('what backup cannot copy', () => {
  test('PostgreSQL: exit 1 with code backup_unsupported, pointing to pg_dump', async () => {
    const workspace = freshWorkspace();
    const target = join(workspace.dir, 'copy.db');
    const result = await expectExit(workspace, ['backup', target, '--json'], 1, { DATABASE_URL: 'postgres://account_api@127.0.0.1:9/accounts' });
    assert.equal(jsonError(result).code, 'backup_unsupported');
    assert.match(jsonError(result).message, /pg_dump/);
    const text = await expectExit(workspace, ['backup', target], 1, { DATABASE_URL: 'postgres://account_api@127.0.0.1:9/accounts' });
    assert.match(text.stderr, /^account-api: .*pg_dump.*\n$/, 'one line');
    assert.ok(!existsSync(target));
  });

  test('a database that does not exist: exit 1 with code database_not_found, and nothing created', async () => {
    const workspace = freshWorkspace();
    const target = join(workspace.dir, 'copy.db');
    const result = await expectExit(workspace, ['backup', target, '--json'], 1);
    assert.equal(jsonError(result).code, 'database_not_found');
    assert.deepEqual(readdirSync(workspace.dir), [], 'neither a database nor a backup may be created');
  });
});
