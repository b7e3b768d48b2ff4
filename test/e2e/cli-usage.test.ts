// The account-api command line's own surface: each command's --help, --version, and which exit status each kind of mistake gets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliJsonError, createWorkspace, describeRun, expectCliExit, REPO_ROOT, runCli, type CliResult, type Workspace } from '../support/server-process.ts';

const VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;

const DATABASE = ['--database-url', '--sandbox', '--json'];
const CONNECTION = ['--base-url', '--username', '--api-key', '--sandbox', '--timeout-ms', '--retries', '--json'];

/** Every command, and exactly the flags it takes (besides -h, --help). */
const COMMANDS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['serve', ['--sandbox', '--port', '--host', '--workers', '--database-url', '--store-fail-fast', '--json']],
  ['migrate', ['--record-environment', ...DATABASE]],
  ['users create', ['--name', '--timezone', '--premium', ...DATABASE]],
  ['users list', ['--prefix', ...DATABASE]],
  ['users show', DATABASE],
  ['users premium', DATABASE],
  ['users delete', DATABASE],
  ['keys create', ['--label', '--scope', '--expires-in', '--expires-at', ...DATABASE]],
  ['keys roll', ['--overlap', ...DATABASE]],
  ['keys list', DATABASE],
  ['keys usage', DATABASE],
  ['keys revoke', DATABASE],
  ['audit', ['--user', '--actor', '--action', '--since', ...DATABASE]],
  ['backup', ['--force', ...DATABASE]],
  ['call hello', ['--name', ...CONNECTION]],
  ['call user get', CONNECTION],
  ['call user set', ['--name', ...CONNECTION]],
  ['call settings get', CONNECTION],
  ['call settings set', ['--timezone', ...CONNECTION]],
  ['call timezones', ['--search', ...CONNECTION]],
];

let workspace: Workspace;

before(() => {
  workspace = createWorkspace();
});

after(() => workspace.cleanup());

const expectExit = (args: readonly string[], code: number, env: NodeJS.ProcessEnv = {}) => expectCliExit(workspace, args, code, env);
const jsonError = cliJsonError;

/** The flags an --help lists in its Options section: the first word of each option line. */
function listedFlags(help: string): string[] {
  const options = help.split('\nOptions:\n')[1]?.split('\n\n')[0] ?? '';
  return [...options.matchAll(/^ {2}(-[\w-]+)/gm)].map((match) => match[1]!);
}

describe('help', () => {
  for (const [command, flags] of COMMANDS) {
    test(`${command} --help prints its usage, exactly the flags it takes, and an example; so does help ${command}`, async () => {
      const words = command.split(' ');
      const result = await expectExit([...words, '--help'], 0);
      assert.equal(result.stderr, '');
      assert.ok(result.stdout.startsWith(`Usage: account-api ${command}`), `--help should open with the usage of ${command}:\n${result.stdout}`);
      assert.deepEqual(listedFlags(result.stdout).sort(), [...flags, '-h'].sort(), `the flags ${command} --help lists:\n${result.stdout}`);
      assert.match(result.stdout, /\nExamples?:\n {2}.*npx account-api /, `--help should end with an example:\n${result.stdout}`);
      assert.equal((await expectExit(['help', ...words], 0)).stdout, result.stdout, `help ${command} should print the same`);
      assert.equal((await expectExit([...words, '-h'], 0)).stdout, result.stdout, `${command} -h should print the same`);
    });
  }

  test('users --help and keys --help list the commands of their group; call --help every call', async () => {
    for (const group of ['users', 'keys', 'call']) {
      const result = await expectExit([group, '--help'], 0);
      for (const [command] of COMMANDS.filter(([name]) => name.startsWith(`${group} `))) {
        assert.ok(result.stdout.includes(`account-api ${command}`), `${group} --help should list ${command}:\n${result.stdout}`);
      }
    }
  });

  test('call user --help and call settings --help exit 0 and list the commands those words start, as users --help does', async () => {
    for (const words of [['call', 'user'], ['call', 'settings']]) {
      const result = await expectExit([...words, '--help'], 0);
      assert.equal(result.stderr, '', describeRun([...words, '--help'], result));
      const listed = COMMANDS.filter(([name]) => name.startsWith(`${words.join(' ')} `)).map(([name]) => name);
      assert.equal(listed.length, 2, `the table above has the get and set of ${words.join(' ')}`);
      for (const command of listed) assert.ok(result.stdout.includes(`account-api ${command}`), `${words.join(' ')} --help should list ${command}:\n${result.stdout}`);
      assert.doesNotMatch(result.stdout, /call hello|call timezones/, `only the commands ${words.join(' ')} starts:\n${result.stdout}`);
      assert.equal((await expectExit(['help', ...words], 0)).stdout, result.stdout, `help ${words.join(' ')} should print the same`);
    }
  });

  test('--version and -v print the version in package.json, and nothing else', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await expectExit([flag], 0);
      assert.equal(result.stdout, `${VERSION}\n`, describeRun([flag], result));
      assert.equal(result.stderr, '');
    }
  });
});

describe('exit statuses', () => {
  test('every wrong command line exits 2; with --json, as {"error": {"code": "usage"}}', async () => {
    const cases: Array<[readonly string[], RegExp]> = [
      [[], /which command/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['help', 'frobnicate'], /unknown command 'frobnicate'/],
      [['users'], /which users command/],
      [['keys', 'frobnicate'], /frobnicate/],
      [['users', 'create'], /<username>/],
      [['users', 'show', 'alice', 'bob'], /'bob'/],
      [['backup'], /<file>/],
      [['keys', 'create', 'alice', '--label'], /--label needs a value/],
      [['users', 'list', '--json=yes'], /--json takes no value/],
      [['keys', 'create', 'alice', '--foo'], /unknown option --foo for 'keys create'/],
      [['users', 'list', '--premium'], /unknown option --premium for 'users list'/],
      [['migrate', '--force'], /unknown option --force for 'migrate'/],
      [['serve', '--port', 'abc'], /--port/],
      [['serve', '--port', '70000'], /--port/],
      [['serve', '--workers', '0'], /--workers/],
      [['users', 'list', '--database-url', 'mysql://db/accounts'], /--database-url/],
      [['users', 'premium', 'alice', 'maybe'], /on|off/],
      [['users', 'list', '-v'], /unknown option -v for 'users list'/],
    ];
    for (const [args, said] of cases) {
      const result = await expectExit(args, 2);
      assert.match(result.stderr, said, describeRun(args, result));
      assert.ok(result.stderr.startsWith('account-api: '), describeRun(args, result));
      assert.equal(result.stdout, '', describeRun(args, result));
      const json = await expectExit([...args, '--json'], 2);
      assert.equal(jsonError(json).code, 'usage', describeRun([...args, '--json'], json));
      assert.match(jsonError(json).message, said, describeRun([...args, '--json'], json));
    }
  });

  test("a wrong flag is one line on stderr that names it and the command's --help", async () => {
    const cases: Array<[readonly string[], string]> = [
      [['keys', 'create', 'alice', '--foo'], "account-api: unknown option --foo for 'keys create'; see 'account-api keys create --help'"],
      [['serve', '--port', 'abc'], "account-api: --port (PORT) must be a whole number from 0 to 65535; got 'abc'; see 'account-api serve --help'"],
      [['users', 'create'], "account-api: 'users create' needs <username>; see 'account-api users create --help'"],
    ];
    for (const [args, line] of cases) {
      const result = await expectExit(args, 2);
      assert.equal(result.stderr, `${line}\n`, describeRun(args, result));
    }
  });

  test('a wrong environment variable exits 1 with code config, naming the variable', async () => {
    const cases: Array<[readonly string[], NodeJS.ProcessEnv, RegExp]> = [
      [['serve'], { PORT: 'abc' }, /^PORT must/],
      [['serve'], { WORKERS: '0' }, /^WORKERS must/],
      [['serve'], { HOST: 'not a host!' }, /^HOST must be an IP address or a host name/],
      [['users', 'list'], { DATABASE_URL: 'mysql://db/accounts' }, /^DATABASE_URL 'mysql/],
    ];
    for (const [args, env, said] of cases) {
      const result = await expectExit([...args, '--json'], 1, env);
      const error = jsonError(result);
      assert.equal(error.code, 'config', describeRun(args, result));
      assert.match(error.message, said, describeRun(args, result));
      assert.doesNotMatch(error.message, /--help/, 'a variable is not fixed on the command line');
    }
  });

  test('a refusal exits 1 with its own code', async () => {
    const result = await expectExit(['users', 'show', 'nobody-here', '--json'], 1);
    assert.equal(jsonError(result).code, 'account_not_found');
  });
});
