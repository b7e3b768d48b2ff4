// The account-api command line as an operator runs it: accounts, keys, migrations, sandbox, exit statuses and output.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SERVICE_NODE_FLAGS } from '../../bench/processes.ts';
import { loadMigrations } from '../../src/store/migrations.ts';
import { HANG_MS } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import { waitForLog } from '../support/signals.ts';
import {
  describeRun,
  expectCliExit,
  cliOk,
  createWorkspace,
  MAIN,
  REPO_ROOT,
  runCli,
  runCommand,
  startServer,
  type CliResult,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

const LIVE_KEY = /^aapi_live_[0-9A-Za-z]{50}$/;
const SANDBOX_KEY = /^aapi_sandbox_[0-9A-Za-z]{50}$/;

let workspace: Workspace;
let server: ServerProcess;
const extraWorkspaces: Workspace[] = [];

before(async () => {
  workspace = createWorkspace();
  // Started on an empty database, so its start-up output is what a newcomer sees after `npm start`.
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
  for (const extra of extraWorkspaces) extra.cleanup();
});

function freshWorkspace(): Workspace {
  const extra = createWorkspace();
  extraWorkspaces.push(extra);
  return extra;
}

const expectExit = (args: readonly string[], code: number, on: Workspace = workspace) => expectCliExit(on, args, code);

async function showJson(username: string, on: Workspace = workspace): Promise<Record<string, unknown>> {
  return JSON.parse(await cliOk(on, ['users', 'show', username, '--json']));
}

async function listJson(on: Workspace = workspace, extra: readonly string[] = []): Promise<Array<Record<string, unknown>>> {
  return JSON.parse(await cliOk(on, ['users', 'list', '--json', ...extra]));
}

/** The one JSON error object that `--json` promises on stderr. */
function jsonError(result: CliResult): { code: string; message: string } {
  let parsed: { error?: { code?: unknown; message?: unknown } };
  try {
    parsed = JSON.parse(result.stderr);
  } catch {
    throw new Error(`--json error output is not JSON: ${result.stderr}`);
  }
  const error = parsed.error;
  assert.ok(error !== undefined, `--json error output has no "error" object: ${result.stderr}`);
  assert.equal(typeof error.code, 'string', `--json error has no string code: ${result.stderr}`);
  assert.equal(typeof error.message, 'string', `--json error has no string message: ${result.stderr}`);
  return error as { code: string; message: string };
}

function keyIdOf(key: string): string {
  return key.replace(/^aapi_(live|sandbox)_/, '').slice(0, 12);
}

/** Waits for `text` in the server's output; the bound is a hang detector, not a timing check. */
async function waitForOutput(target: ServerProcess, text: string, timeoutMs = HANG_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!target.output.some((line) => line.includes(text))) {
    if (Date.now() > deadline) throw new Error(`server output never contained ${JSON.stringify(text)}:\n${target.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Splits a printed command line the way a POSIX shell would for simple words and quotes. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    if (match[1] !== undefined) words.push(match[1].replace(/\\(.)/g, '$1'));
    else if (match[2] !== undefined) words.push(match[2]);
    else words.push(match[3]!);
  }
  return words;
}

test('users create defaults the name to the username, the timezone to UTC and Premium to off', async () => {
  const stdout = await cliOk(workspace, ['users', 'create', 'dana']);
  assert.match(stdout, /dana/, `users create should confirm the account it created: ${stdout}`);
  const shown = await showJson('dana');
  assert.equal(shown.username, 'dana');
  assert.equal(shown.name, 'dana', 'the display name should default to the username');
  assert.equal(shown.timezone, 'UTC', 'the timezone should default to UTC');
  assert.equal(shown.premium, false, 'a new account should not have Premium unless --premium is given');
});

test('users create --json prints the account with user_id, username, name, timezone, premium and created_at', async () => {
  const stdout = await cliOk(workspace, ['users', 'create', 'erik', '--json']);
  const account = JSON.parse(stdout);
  assert.deepEqual(Object.keys(account).sort(), ['created_at', 'name', 'premium', 'timezone', 'user_id', 'username']);
  assert.ok(Number.isInteger(account.user_id) && account.user_id > 0, `user_id should be a positive integer: ${stdout}`);
  assert.equal(account.username, 'erik');
  assert.equal(account.name, 'erik');
  assert.equal(account.timezone, 'UTC');
  assert.equal(account.premium, false);
  assert.equal(typeof account.created_at, 'string');
  assert.ok(!Number.isNaN(Date.parse(account.created_at)), `created_at should be a timestamp: ${account.created_at}`);
});

test('users create takes --name, --timezone and --premium', async () => {
  const account = JSON.parse(
    await cliOk(workspace, ['users', 'create', 'fiona', '--name', 'Fiona Gallagher', '--timezone', 'America/Argentina/Buenos_Aires', '--premium', '--json']),
  );
  assert.equal(account.name, 'Fiona Gallagher');
  assert.equal(account.timezone, 'America/Argentina/Buenos_Aires');
  assert.equal(account.premium, true);
  const shown = await showJson('fiona');
  assert.equal(shown.name, 'Fiona Gallagher', 'the stored name should be the one given with --name');
  assert.equal(shown.timezone, 'America/Argentina/Buenos_Aires', 'the stored timezone should be the one given with --timezone');
  assert.equal(shown.premium, true, 'the account should have Premium after --premium');
});

test('users create accepts a username of exactly 64 allowed characters', async () => {
  const username = `Long.name_with-digits0123${'x'.repeat(39)}`;
  assert.equal(username.length, 64);
  await cliOk(workspace, ['users', 'create', username]);
  const shown = await showJson(username);
  assert.equal(shown.username, username);
});

for (const [what, username] of [
  ['a colon', 'bad:name'],
  ['a space', 'bad name'],
  ['65 characters', 'y'.repeat(65)],
] as const) {
  test(`users create refuses a username with ${what} with exit 2 (a wrong argument) and says what a username may contain`, async () => {
    const result = await expectExit(['users', 'create', username], 2);
    assert.match(result.stderr, /username/i, `the error should name the username as the problem: ${result.stderr}`);
    assert.match(result.stderr, /64/, `the error should state the length limit: ${result.stderr}`);
    assert.match(result.stderr, /letters/i, `the error should say which characters are allowed: ${result.stderr}`);
    const names = (await listJson()).map((account) => account.username);
    assert.ok(!names.includes(username), `a refused username must not be created: ${names.join(', ')}`);
  });
}

test('users create refuses a username that differs from an existing one only in case', async () => {
  await cliOk(workspace, ['users', 'create', 'Gabi']);
  const result = await expectExit(['users', 'create', 'gabi'], 1);
  assert.match(result.stderr, /already exists|taken/i, `the error should say the name is taken: ${result.stderr}`);
  const matching = (await listJson()).filter((account) => String(account.username).toLowerCase() === 'gabi');
  assert.equal(matching.length, 1, `exactly one account named gabi (any case) should exist, found ${JSON.stringify(matching)}`);
  assert.equal(matching[0]!.username, 'Gabi', 'the first account should keep its spelling');
});

test('users create refuses an unknown --timezone with exit 2 (a wrong flag value) and suggests the closest valid name', async () => {
  const result = await expectExit(['users', 'create', 'hana', '--timezone', 'europe/kyiv'], 2);
  assert.match(result.stderr, /timezone/i, `the error should say the timezone is wrong: ${result.stderr}`);
  assert.match(result.stderr, /Europe\/Kyiv/, `the error should suggest Europe/Kyiv: ${result.stderr}`);
  const names = (await listJson()).map((account) => account.username);
  assert.ok(!names.includes('hana'), 'an account with a refused timezone must not be created');
});

test('users list prints a table of accounts, and --json the same accounts as objects', async () => {
  await cliOk(workspace, ['users', 'create', 'ivan', '--name', 'Ivan Petrov', '--timezone', 'Europe/Moscow', '--premium']);
  await cliOk(workspace, ['users', 'create', 'jana']);

  const table = await cliOk(workspace, ['users', 'list']);
  const ivanLine = table.split('\n').find((line) => /\bivan\b/.test(line));
  assert.ok(ivanLine !== undefined, `users list should show ivan:\n${table}`);
  assert.match(ivanLine, /Europe\/Moscow/, `ivan's row should show the timezone: ${ivanLine}`);
  assert.match(ivanLine, /Ivan Petrov/, `ivan's row should show the display name: ${ivanLine}`);
  assert.ok(table.split('\n').some((line) => /\bjana\b/.test(line)), `users list should show jana:\n${table}`);

  const accounts = await listJson();
  const ivan = accounts.find((account) => account.username === 'ivan');
  const jana = accounts.find((account) => account.username === 'jana');
  assert.ok(ivan !== undefined && jana !== undefined, `users list --json should hold ivan and jana: ${JSON.stringify(accounts)}`);
  assert.equal(ivan.name, 'Ivan Petrov');
  assert.equal(ivan.timezone, 'Europe/Moscow');
  assert.equal(ivan.premium, true);
  assert.equal(jana.premium, false);
  assert.ok(Number.isInteger(ivan.user_id) && Number.isInteger(jana.user_id), 'every listed account should carry its user_id');
  assert.notEqual(ivan.user_id, jana.user_id, 'two accounts must not share a user_id');
});

test('users show prints one account, as text and as JSON', async () => {
  await cliOk(workspace, ['users', 'create', 'kofi', '--name', 'Kofi Annan', '--timezone', 'Africa/Accra']);
  const text = await cliOk(workspace, ['users', 'show', 'kofi']);
  assert.match(text, /kofi/);
  assert.match(text, /Kofi Annan/, `users show should print the display name:\n${text}`);
  assert.match(text, /Africa\/Accra/, `users show should print the timezone:\n${text}`);
  const shown = await showJson('kofi');
  assert.equal(shown.username, 'kofi');
  assert.equal(shown.name, 'Kofi Annan');
  assert.equal(shown.timezone, 'Africa/Accra');
  assert.equal(shown.premium, false);
});

test('users show exits 1 for an account that does not exist', async () => {
  const result = await expectExit(['users', 'show', 'nobody-here'], 1);
  assert.match(result.stderr, /nobody-here/, `the error should name the missing account: ${result.stderr}`);
});

test('users premium turns Premium on and off, and refuses anything but on or off with exit 2', async () => {
  await cliOk(workspace, ['users', 'create', 'lena']);
  await cliOk(workspace, ['users', 'premium', 'lena', 'on']);
  assert.equal((await showJson('lena')).premium, true, 'Premium should be on after `users premium lena on`');
  await cliOk(workspace, ['users', 'premium', 'lena', 'off']);
  assert.equal((await showJson('lena')).premium, false, 'Premium should be off after `users premium lena off`');

  const result = await expectExit(['users', 'premium', 'lena', 'maybe'], 2);
  assert.match(result.stderr, /on|off/, `the error should say the accepted values: ${result.stderr}`);
  assert.equal((await showJson('lena')).premium, false, 'a refused premium command must not change the account');
});

test('users premium exits 1 for an account that does not exist', async () => {
  const result = await expectExit(['users', 'premium', 'nobody-here', 'on'], 1);
  assert.match(result.stderr, /nobody-here/, `the error should name the missing account: ${result.stderr}`);
});

test('users delete removes the account, and exits 1 for an account that does not exist', async () => {
  await cliOk(workspace, ['users', 'create', 'mona']);
  await cliOk(workspace, ['users', 'delete', 'mona']);
  const names = (await listJson()).map((account) => account.username);
  assert.ok(!names.includes('mona'), `a deleted account should not be listed: ${names.join(', ')}`);

  const again = await expectExit(['users', 'delete', 'mona'], 1);
  assert.match(again.stderr, /mona/, `the error should name the missing account: ${again.stderr}`);
});

test('keys create prints the key alone on stdout and the advice on stderr', async () => {
  await cliOk(workspace, ['users', 'create', 'nils', '--premium']);
  const result = await expectExit(['keys', 'create', 'nils'], 0);
  const lines = result.stdout.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `stdout should hold exactly one line, the key: ${JSON.stringify(result.stdout)}`);
  assert.match(lines[0]!, LIVE_KEY, `the key should be aapi_live_ and 50 base62 characters: ${lines[0]}`);
  assert.equal(result.stdout.trim(), lines[0], 'nothing but the key may be on stdout');
  assert.notEqual(result.stderr.trim(), '', 'keys create should advise on stderr that the key is shown only once');
  assert.ok(!result.stderr.includes(lines[0]!), 'the advice on stderr should not repeat the secret key');
});

test('two keys for the same account are different', async () => {
  await cliOk(workspace, ['users', 'create', 'olga', '--premium']);
  const first = (await cliOk(workspace, ['keys', 'create', 'olga'])).trim();
  const second = (await cliOk(workspace, ['keys', 'create', 'olga'])).trim();
  assert.notEqual(first, second);
  assert.notEqual(keyIdOf(first), keyIdOf(second), 'each key should have its own key id');
});

test('keys create refuses an account that does not exist with exit 1', async () => {
  const result = await expectExit(['keys', 'create', 'nobody-here'], 1);
  assert.equal(result.stdout, '', 'no key may be printed for a missing account');
  assert.match(result.stderr, /nobody-here/, `the error should name the missing account: ${result.stderr}`);
});

test('keys list shows id, label, created, last used and prefix, and never the secret', async () => {
  await cliOk(workspace, ['users', 'create', 'pia', '--premium']);
  const key = (await cliOk(workspace, ['keys', 'create', 'pia', '--label', 'ci-runner'])).trim();
  const keyId = keyIdOf(key);

  const listed = JSON.parse(await cliOk(workspace, ['keys', 'list', 'pia', '--json']));
  assert.equal(listed.length, 1, `pia should have exactly one key: ${JSON.stringify(listed)}`);
  const entry = listed[0];
  assert.equal(entry.key_id, keyId, 'the listed key id should be the 12 characters after the prefix');
  assert.equal(entry.label, 'ci-runner', 'the label given with --label should be listed');
  assert.equal(entry.prefix, `aapi_live_${keyId}`, 'the non-secret prefix should be aapi_live_ followed by the key id');
  assert.equal(entry.last_used_at, null, 'a key never sent should have no last-used time');
  assert.equal(entry.revoked_at, null, 'a new key should not be revoked');
  assert.ok(!Number.isNaN(Date.parse(entry.created_at)), `created_at should be a timestamp: ${entry.created_at}`);

  const table = await cliOk(workspace, ['keys', 'list', 'pia']);
  const row = table.split('\n').find((line) => line.includes(keyId));
  assert.ok(row !== undefined, `keys list should show the key id ${keyId}:\n${table}`);
  assert.ok(row.includes(`aapi_live_${keyId}`), `the row should show the prefix: ${row}`);
  assert.ok(row.includes('ci-runner'), `the row should show the label: ${row}`);
  assert.ok(row.includes(entry.created_at), `the row should show when the key was created: ${row}`);
  assert.match(row, /\bnever\b/, `a key never sent should be shown as last used 'never': ${row}`);

  for (const [what, output] of [
    ['keys list', table],
    ['keys list --json', JSON.stringify(listed)],
  ] as const) {
    assert.ok(!output.includes(key), `${what} must never print the secret key`);
    assert.ok(!output.includes(key.slice(-38)), `${what} must never print the secret part of the key`);
  }
});

test('keys revoke marks the key revoked in keys list', async () => {
  await cliOk(workspace, ['users', 'create', 'quinn', '--premium']);
  const key = (await cliOk(workspace, ['keys', 'create', 'quinn'])).trim();
  const keyId = keyIdOf(key);
  const stdout = await cliOk(workspace, ['keys', 'revoke', keyId]);
  assert.match(stdout, new RegExp(keyId), `keys revoke should confirm which key it revoked: ${stdout}`);

  const listed = JSON.parse(await cliOk(workspace, ['keys', 'list', 'quinn', '--json']));
  const entry = listed.find((candidate: { key_id: string }) => candidate.key_id === keyId);
  assert.ok(entry !== undefined, `the revoked key should still be listed: ${JSON.stringify(listed)}`);
  assert.equal(typeof entry.revoked_at, 'string', `revoked_at should be set after keys revoke: ${JSON.stringify(entry)}`);
  assert.ok(!Number.isNaN(Date.parse(entry.revoked_at)), `revoked_at should be a timestamp: ${entry.revoked_at}`);
});

test('keys revoke exits 1 for a well-formed id that does not exist and 2 for a string that is not a key id', async () => {
  const unknown = await expectExit(['keys', 'revoke', 'AAAAAAAAAAAA'], 1);
  assert.match(unknown.stderr, /AAAAAAAAAAAA/, `the error should name the unknown key id: ${unknown.stderr}`);
  const notAnId = await expectExit(['keys', 'revoke', 'not-a-key-id'], 2);
  assert.match(notAnId.stderr, /key id/i, `the error should say a key id was expected: ${notAnId.stderr}`);
});

test('--json failures print a JSON error with a code on stderr and nothing on stdout', async () => {
  await cliOk(workspace, ['users', 'create', 'Rosa']);
  const cases: Array<[readonly string[], number, string]> = [
    [['users', 'create', 'rosa', '--json'], 1, 'username_taken'],
    [['users', 'create', 'bad:name', '--json'], 2, 'invalid_username'],
    [['users', 'delete', 'nobody-here', '--json'], 1, 'account_not_found'],
    [['keys', 'revoke', 'AAAAAAAAAAAA', '--json'], 1, 'key_not_found'],
  ];
  for (const [args, exit, code] of cases) {
    const result = await expectExit(args, exit);
    assert.equal(result.stdout, '', `a failed --json command should print nothing on stdout; ${describeRun(args, result)}`);
    const error = jsonError(result);
    assert.equal(error.code, code, `account-api ${args.join(' ')} should fail with code ${code}`);
    assert.notEqual(error.message.trim(), '', 'the JSON error should carry a message a person can act on');
  }
});

test('an unknown command exits 2 and prints the usage', async () => {
  const result = await expectExit(['frobnicate'], 2);
  assert.match(result.stderr, /frobnicate/, `the error should name the unknown command: ${result.stderr}`);
  assert.match(result.stderr, /users create/, `the usage should be printed with the error: ${result.stderr}`);
});

test("an unknown flag exits 2 with one line naming it, the command, and the command's --help", async () => {
  const result = await expectExit(['users', 'list', '--frobnicate'], 2);
  assert.equal(result.stderr, "account-api: unknown option --frobnicate for 'users list'; see 'account-api users list --help'\n");
  assert.equal(result.stdout, '');
});

test('--help exits 0 and prints the usage of every command', async () => {
  const result = await expectExit(['--help'], 0);
  for (const command of ['serve', 'migrate', 'users create', 'users list', 'users show', 'users premium', 'users delete', 'keys create', 'keys list', 'keys revoke']) {
    assert.ok(result.stdout.includes(command), `--help should describe '${command}':\n${result.stdout}`);
  }
});

/** Every migration this build has, by version: 1, 2, ... */
const VERSIONS = loadMigrations(join(import.meta.dirname, '../../src/store/sqlite/migrations')).map((migration) => migration.version);

test('migrate applies every migration to a fresh database, then says the schema is up to date', async () => {
  const fresh = freshWorkspace();
  const first = await cliOk(fresh, ['migrate']);
  assert.ok(first.includes(VERSIONS.join(', ')), `the first migrate should report versions ${VERSIONS.join(', ')}: ${first}`);
  assert.doesNotMatch(first, /up to date/i, `the first migrate on a fresh database has work to do: ${first}`);
  assert.match(first, /live database/, `the first migrate should say it recorded the database as live: ${first}`);
  const second = await cliOk(fresh, ['migrate']);
  assert.match(second, /up to date/i, `a second migrate should say the schema is up to date: ${second}`);
});

test('migrate --json prints {applied, current, environment, environment_recorded}', async () => {
  const fresh = freshWorkspace();
  assert.deepEqual(JSON.parse(await cliOk(fresh, ['migrate', '--json'])), {
    applied: VERSIONS,
    current: VERSIONS.at(-1),
    environment: 'live',
    environment_recorded: 'migrator',
  });
  assert.deepEqual(JSON.parse(await cliOk(fresh, ['migrate', '--json'])), {
    applied: [],
    current: VERSIONS.at(-1),
    environment: 'live',
    environment_recorded: null,
  });
  const sandbox = JSON.parse(await cliOk(fresh, ['migrate', '--json', '--sandbox']));
  assert.equal(sandbox.environment, 'sandbox', 'the sandbox database should be recorded as the sandbox');
});

test('--record-environment applies to migrate only', async () => {
  const result = await expectExit(['users', 'list', '--record-environment'], 2);
  assert.match(result.stderr, /--record-environment/, `the error should name the flag: ${result.stderr}`);
});

test('--sandbox issues aapi_sandbox_ keys and keeps its accounts out of the live database', async () => {
  await cliOk(workspace, ['users', 'create', 'sami', '--premium', '--sandbox']);
  const key = (await cliOk(workspace, ['keys', 'create', 'sami', '--sandbox'])).trim();
  assert.match(key, SANDBOX_KEY, `a sandbox key should be aapi_sandbox_ and 50 base62 characters: ${key}`);

  const sandboxNames = (await listJson(workspace, ['--sandbox'])).map((account) => account.username);
  assert.ok(sandboxNames.includes('sami'), `users list --sandbox should show sami: ${sandboxNames.join(', ')}`);
  const liveNames = (await listJson()).map((account) => account.username);
  assert.ok(!liveNames.includes('sami'), `an account created with --sandbox must not be in the live users list: ${liveNames.join(', ')}`);
  const liveKeys = await expectExit(['keys', 'list', 'sami'], 1);
  assert.match(liveKeys.stderr, /sami/, `the live database should not know sami: ${liveKeys.stderr}`);

  const sandboxKeys = JSON.parse(await cliOk(workspace, ['keys', 'list', 'sami', '--sandbox', '--json']));
  assert.equal(sandboxKeys[0]?.prefix, `aapi_sandbox_${keyIdOf(key)}`, 'the sandbox key prefix should be aapi_sandbox_ + key id');
});

test('ACCOUNT_API_SANDBOX=1 works on the sandbox database as --sandbox does, and issues sandbox keys there', async () => {
  const env = { ACCOUNT_API_SANDBOX: '1' };
  const created = await runCli(workspace, ['users', 'create', 'sol'], env);
  assert.equal(created.code, 0, describeRun(['users', 'create', 'sol'], created));
  const key = await runCli(workspace, ['keys', 'create', 'sol'], env);
  assert.match(key.stdout.trim(), SANDBOX_KEY, `a key made for the sandbox database should be a sandbox key: ${key.stdout}${key.stderr}`);
  const sandboxNames = (await listJson(workspace, ['--sandbox'])).map((account) => account.username);
  assert.ok(sandboxNames.includes('sol'), `ACCOUNT_API_SANDBOX=1 should work on the sandbox database: ${sandboxNames.join(', ')}`);
});

test('the package bin runs the CLI: bin/account-api.js --help exits 0 with the usage', async () => {
  const result = await runCommand(process.execPath, [join(REPO_ROOT, 'bin/account-api.js'), '--help'], { cwd: REPO_ROOT, env: workspace.env });
  assert.equal(result.code, 0, `bin/account-api.js --help should exit 0: ${result.stderr}`);
  assert.match(result.stdout, /account-api users create/, `bin/account-api.js --help should print the usage:\n${result.stdout}`);
});

test('the package declares the account-api bin, and npm start serves', () => {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  assert.equal(manifest.bin?.['account-api'], 'bin/account-api.js', 'package.json should expose bin/account-api.js as account-api');
  // With a young generation of 2 x 32 MB (docs/operations.md, Memory); the bench and the systemd unit read the flag from here.
  assert.equal(manifest.scripts?.start, 'node --max-semi-space-size=32 src/main.ts serve', 'npm start should run the server');
  assert.equal(manifest.scripts?.sandbox, 'node --max-semi-space-size=32 src/main.ts serve --sandbox', 'npm run sandbox too');
});

test("npm start's Node flags reach the server and the workers of --workers", async (t) => {
  if (process.platform !== 'linux') return t.skip('reads /proc/PID/cmdline');
  assert.deepEqual(SERVICE_NODE_FLAGS, ['--max-semi-space-size=32']);
  const served = await startServer(workspace, ['--workers', '2'], { LOG_LEVEL: 'info' }, [process.execPath, ...SERVICE_NODE_FLAGS, MAIN]);
  try {
    // The primary's ready line is on stdout, the listening line that startServer waits for on stderr: either may come first.
    const ready = await waitForLog<{ msg: string; workerPids?: number[] }>(
      served,
      "'account-api ready' with the workers' pids",
      (line) => line.msg === 'account-api ready' && line.workerPids !== undefined,
    );
    const pids = [served.child.pid!, ...ready.workerPids!];
    assert.equal(pids.length, 3);
    for (const pid of pids) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.deepEqual(argv.slice(1, argv.indexOf(MAIN)), SERVICE_NODE_FLAGS, `process ${pid}'s Node flags: ${argv.join(' ')}`);
    }
    assert.equal((await call('GET', `${served.api}/hello`)).status, 200);
  } finally {
    await served.stop();
  }
});

test('on an empty database the server prints the commands that create an account, and they work', async () => {
  await waitForOutput(server, 'npx account-api users create');
  const commands = server.output
    .map((line) => /\bnpx account-api (.+)$/.exec(line)?.[1])
    .filter((command): command is string => command !== undefined)
    .map(shellWords);
  assert.ok(commands.some((words) => words[0] === 'users' && words[1] === 'create'), `no users create command printed:\n${server.output.join('\n')}`);
  assert.ok(
    commands.some((words) => words[0] === 'keys' && words[1] === 'create'),
    `no keys create command printed, so the operator cannot get a key:\n${server.output.join('\n')}`,
  );

  let key: string | undefined;
  let username: string | undefined;
  for (const words of commands) {
    const stdout = await cliOk(workspace, words);
    if (words[0] === 'keys' && words[1] === 'create') {
      key = stdout.trim();
      username = words[2];
    }
  }
  assert.ok(key !== undefined && username !== undefined);
  assert.match(key, LIVE_KEY, `the printed keys create command should print a live key: ${key}`);

  const result = await call('GET', `${server.api}/user`, { auth: { username, key } });
  assert.equal(result.status, 200, `the account the printed commands create should be able to call GET /user: ${result.text}`);
  assert.equal(result.body?.data?.username, username);
});
