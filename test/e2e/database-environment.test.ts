// Each database knows its environment: the sandbox refuses the live database and live refuses a sandbox one, however the URLs
// are spelled; and the sandbox's seed leaves alone every account it did not create.
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { demoAccounts, type DemoAccount } from '../../src/sandbox/demo-accounts.ts';
import { call, failureMessage } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { cliOk, createWorkspace, runCli, startServer, type CliResult, type Workspace } from '../support/server-process.ts';

function demoAccount(username: string): DemoAccount {
  const found = demoAccounts().find((account) => account.username === username);
  if (found === undefined) throw new Error(`demoAccounts() has no account named ${username}`);
  return found;
}

/**
 * Everything the CLI shows of one account and its keys, read with the given flags (which say the database and environment);
 * but when a key was last used, which a test's own call changes.
 */
async function accountState(workspace: Workspace, username: string, flags: readonly string[] = []): Promise<unknown> {
  const account = JSON.parse(await cliOk(workspace, ['users', 'show', username, '--json', ...flags]));
  const keys = JSON.parse(await cliOk(workspace, ['keys', 'list', username, '--json', ...flags])) as Array<Record<string, unknown>>;
  return { account, keys: keys.map(({ last_used_at: _used, ...key }) => key) };
}

/**
 * Starts `account-api serve ARGS` and expects it to exit 1 before it listens, with a message on stderr naming both
 * environments; returns that message.
 */
async function expectRefusedStart(workspace: Workspace, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  let output: string;
  try {
    const server = await startServer(workspace, args, env);
    const lines = server.output.join('\n');
    await server.stop();
    assert.fail(`account-api serve ${args.join(' ')} started, but it must refuse this database:\n${lines}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    output = (error as Error).message;
  }
  assert.match(output, /exited with 1 before it was ready/, `serve ${args.join(' ')} should exit 1 by itself:\n${output}`);
  const refusal = output.split('\n').find((line) => line.startsWith('account-api: '));
  assert.ok(refusal !== undefined, `serve ${args.join(' ')} should say why it refuses:\n${output}`);
  assertNamesBothEnvironments(refusal);
  return refusal;
}

function assertNamesBothEnvironments(message: string): void {
  assert.match(message, /\blive\b/, `the refusal should name the live environment: ${message}`);
  assert.match(message, /\bsandbox\b/, `the refusal should name the sandbox: ${message}`);
}

/** Runs the CLI and expects it to refuse the database: exit 1, both environments named. */
async function expectRefusedCli(workspace: Workspace, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const result = await runCli(workspace, args, env);
  assert.equal(result.code, 1, `account-api ${args.join(' ')} should refuse this database (exit 1):\n${result.stderr}${result.stdout}`);
  assertNamesBothEnvironments(result.stderr);
  return result;
}

describe('SQLite: one database file, spelled differently', () => {
  let workspace: Workspace;
  let liveDemo: unknown;
  const liveDb = () => join(workspace.dir, 'live.db');

  before(async () => {
    workspace = createWorkspace();
    // A real customer who happens to be called demo: not Premium, with a live key of their own.
    await cliOk(workspace, ['users', 'create', 'demo', '--name', 'A Live Customer']);
    await cliOk(workspace, ['keys', 'create', 'demo', '--label', 'their own']);
    symlinkSync(liveDb(), join(workspace.dir, 'live-link.db'));
    liveDemo = await accountState(workspace, 'demo');
  });

  after(() => workspace.cleanup());

  test('serve --sandbox refuses the live database reached through a symlink in SANDBOX_DATABASE_URL', async () => {
    await expectRefusedStart(workspace, ['--sandbox'], { SANDBOX_DATABASE_URL: `sqlite:${join(workspace.dir, 'live-link.db')}` });
  });

  test('serve --sandbox refuses the live database given with --database-url, spelled with ./ or through a symlink', async () => {
    await expectRefusedStart(workspace, ['--sandbox', '--database-url', 'sqlite:./live.db']);
    await expectRefusedStart(workspace, ['--sandbox', '--database-url', 'sqlite:./live-link.db']);
    // Without DATABASE_URL there is no other URL to compare with: only the database itself can tell.
    await expectRefusedStart(workspace, ['--sandbox', '--database-url', `file:${join(workspace.dir, 'live-link.db')}`], { DATABASE_URL: '' });
  });

  test('serve --sandbox --workers 2 refuses it in the primary, before any worker starts', async () => {
    await expectRefusedStart(workspace, ['--sandbox', '--workers', '2', '--database-url', 'sqlite:./live-link.db']);
  });

  test('the CLI with --sandbox refuses the live database too', async () => {
    await expectRefusedCli(workspace, ['users', 'list', '--sandbox', '--database-url', 'sqlite:./live-link.db']);
    await expectRefusedCli(workspace, ['keys', 'create', 'demo', '--sandbox', '--database-url', 'sqlite:./live-link.db']);
    await expectRefusedCli(workspace, ['users', 'premium', 'demo', 'on', '--sandbox', '--database-url', 'sqlite:./live-link.db']);
    await expectRefusedCli(workspace, ['migrate', '--sandbox', '--database-url', 'sqlite:./live-link.db']);
  });

  test('after every refusal the live demo account is exactly as it was: not Premium, its own key only', async () => {
    const now = (await accountState(workspace, 'demo')) as { account: { premium: boolean }; keys: Array<{ prefix: string }> };
    assert.deepEqual(now, liveDemo, 'a refused sandbox still changed the live account named demo');
    assert.equal(now.account.premium, false, 'the live demo account was made Premium');
    assert.deepEqual(now.keys.map((key) => key.prefix.slice(0, 10)), ['aapi_live_'], 'a sandbox key was attached to the live demo account');
  });

  test('the published demo key opens nothing on a live server over that database', async () => {
    const live = await startServer(workspace);
    try {
      const result = await call('GET', `${live.api}/settings`, { auth: { username: 'demo', key: demoAccount('demo').key.token } });
      assert.equal(result.status, 401, result.text);
    } finally {
      await live.stop();
    }
  });

  test('the live server and the live CLI refuse a sandbox database, however it is spelled', async () => {
    await cliOk(workspace, ['users', 'create', 'sandy', '--sandbox']);
    symlinkSync(join(workspace.dir, 'sandbox.db'), join(workspace.dir, 'sandbox-link.db'));
    await expectRefusedStart(workspace, [], { DATABASE_URL: 'sqlite:./sandbox-link.db' });
    await expectRefusedStart(workspace, ['--database-url', `sqlite:${join(workspace.dir, 'sandbox.db')}`]);
    await expectRefusedCli(workspace, ['users', 'create', 'intruder', '--database-url', 'sqlite:./sandbox-link.db']);
    const names = JSON.parse(await cliOk(workspace, ['users', 'list', '--json', '--sandbox'])).map((account: { username: string }) => account.username);
    assert.deepEqual(names, ['sandy'], 'the live CLI wrote to the sandbox database');
  });

  test('a live and a sandbox process migrating one new database at once: exactly one of them wins', async () => {
    for (let round = 0; round < 3; round++) {
      const path = join(workspace.dir, `race-${round}.db`);
      symlinkSync(path, join(workspace.dir, `race-${round}-link.db`));
      const [live, sandbox] = await Promise.all([
        runCli(workspace, ['migrate', '--database-url', `sqlite:${path}`]),
        runCli(workspace, ['migrate', '--sandbox', '--database-url', `sqlite:./race-${round}-link.db`]),
      ]);
      const codes = [live.code, sandbox.code];
      assert.deepEqual([...codes].sort(), [0, 1], `exactly one migrate should win, round ${round}:\nlive: ${live.stderr}\nsandbox: ${sandbox.stderr}`);
      assertNamesBothEnvironments((live.code === 1 ? live : sandbox).stderr);
      const database = new DatabaseSync(path, { readOnly: true });
      const recorded = database.prepare('SELECT environment FROM deployment').all();
      database.close();
      assert.deepEqual(recorded.map((row) => row.environment), [live.code === 0 ? 'live' : 'sandbox'], 'the database should record the winner');
    }
  });
});

describe('the sandbox seed and an account it did not create', () => {
  let workspace: Workspace;

  before(() => {
    workspace = createWorkspace();
  });

  after(() => workspace.cleanup());

  test('an account named demo that someone created in the sandbox database is left untouched, and the demo key opens nothing', async () => {
    await cliOk(workspace, ['users', 'create', 'demo', '--sandbox', '--name', 'Not The Seed']);
    const ownKey = (await cliOk(workspace, ['keys', 'create', 'demo', '--sandbox'])).trim();
    const before = await accountState(workspace, 'demo', ['--sandbox']);

    const sandbox = await startServer(workspace, ['--sandbox']);
    try {
      const published = await call('GET', `${sandbox.api}/settings`, { auth: { username: 'demo', key: demoAccount('demo').key.token } });
      assert.equal(published.status, 401, `the published demo key must not open someone else's account: ${published.text}`);
      const own = await call('GET', `${sandbox.api}/user`, { auth: { username: 'demo', key: ownKey } });
      assert.equal(own.status, 403, `the account must not have been made Premium: ${own.text}`);
      assert.equal(failureMessage(own).code, 'premium_required');
      const basic = demoAccount('demo-basic');
      const other = await call('GET', `${sandbox.api}/hello`, { auth: { username: basic.username, key: basic.key.token } });
      assert.equal(other.status, 200, `the other demo account should still be seeded: ${other.text}`);
      const warning = sandbox.output.find((line) => /demo/.test(line) && /unavailable/i.test(line));
      assert.ok(warning !== undefined, `the sandbox should warn that the demo account is unavailable:\n${sandbox.output.join('\n')}`);
      assert.ok(
        !sandbox.output.some((line) => line.includes(demoAccount('demo').key.token)),
        'the sandbox should not advertise a demo key that opens nothing',
      );
    } finally {
      await sandbox.stop();
    }
    assert.deepEqual(await accountState(workspace, 'demo', ['--sandbox']), before, 'starting the sandbox changed an account it did not create');
  });
});

/** The same URL with the host spelled the other way (localhost and 127.0.0.1), or else with a harmless extra parameter. */
function otherSpelling(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '127.0.0.1') parsed.hostname = 'localhost';
  else if (parsed.hostname === 'localhost') parsed.hostname = '127.0.0.1';
  else parsed.searchParams.set('application_name', 'another-spelling');
  return parsed.toString();
}

const skip = await postgresSkipReason();

describe('PostgreSQL: one database, reached as localhost and as 127.0.0.1', { skip }, () => {
  let live: TestDatabase;
  let sandboxFirst: TestDatabase;
  let workspace: Workspace;
  let liveDemo: unknown;

  before(async () => {
    [live, sandboxFirst] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    workspace = createWorkspace({ DATABASE_URL: live.url });
    await cliOk(workspace, ['users', 'create', 'demo', '--name', 'A Live Customer']);
    await cliOk(workspace, ['keys', 'create', 'demo']);
    liveDemo = await accountState(workspace, 'demo');
  });

  after(async () => {
    await Promise.all([live?.drop(), sandboxFirst?.drop()]);
    workspace?.cleanup();
  });

  test('serve --sandbox refuses the live database under its other spelling, from SANDBOX_DATABASE_URL or --database-url', async () => {
    const spelled = otherSpelling(live.url);
    assert.notEqual(spelled, live.url);
    await expectRefusedStart(workspace, ['--sandbox'], { SANDBOX_DATABASE_URL: spelled });
    await expectRefusedStart(workspace, ['--sandbox', '--database-url', spelled]);
    await expectRefusedCli(workspace, ['keys', 'create', 'demo', '--sandbox', '--database-url', spelled]);
    assert.deepEqual(await accountState(workspace, 'demo'), liveDemo, 'a refused sandbox still changed the live account named demo');
  });

  test('the live server refuses a database the sandbox created, under either spelling', async () => {
    const sandbox = await startServer(workspace, ['--sandbox', '--database-url', otherSpelling(sandboxFirst.url)]);
    await sandbox.stop();
    await expectRefusedStart(workspace, ['--database-url', sandboxFirst.url]);
    await expectRefusedStart(workspace, [], { DATABASE_URL: otherSpelling(sandboxFirst.url) });
    const accounts = await sandboxFirst.query('SELECT username, premium FROM accounts ORDER BY id');
    assert.deepEqual(
      accounts.rows.map((row) => row.username),
      ['demo', 'demo-basic'],
      'the sandbox database should hold only its demo accounts',
    );
  });
});
