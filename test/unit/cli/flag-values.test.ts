// Every flag of every command, given a wrong value, exits 2 (a wrong command line) with a message naming what was wrong. The
// flags are read from the commands' own declarations, so a flag added later is walked too, and fails here until it has a wrong
// value below. Run in this process (runCli, as main.ts calls it) against a real server: a hundred and more Node start-ups would
// take minutes on a shared machine; test/e2e/cli-flag-values.test.ts runs the issue's own examples as child processes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { commandName, type CommandSpec, type FlagName, type FlagSpec } from '../../../src/cli/command-spec.ts';
import { COMMAND_GROUPS, runCli } from '../../../src/cli/run-cli.ts';
import {
  createAccount,
  createWorkspace,
  describeRun,
  startServer,
  type Account,
  type CliResult,
  type ServerProcess,
  type Workspace,
} from '../../support/server-process.ts';

/** What a wrong value of a flag is, and what the message must say; for a flag no value of which is wrong, why. */
type Wrong = { readonly value: string; readonly says: RegExp } | { readonly anyValue: string } | 'boolean';

const WRONG: Readonly<Record<FlagName, Wrong>> = {
  json: 'boolean',
  sandbox: 'boolean',
  premium: 'boolean',
  'store-fail-fast': 'boolean',
  'record-environment': 'boolean',
  force: 'boolean',
  'database-url': { value: 'mysql://127.0.0.1/accounts', says: /--database-url/ },
  name: { value: '   ', says: /--name|field name/ },
  timezone: { value: 'Mars/Phobos', says: /--timezone|field timezone/ },
  label: { value: 'x'.repeat(101), says: /--label/ },
  scope: { value: 'admin', says: /--scope: 'admin' is not a scope/ },
  'expires-in': { value: '3w', says: /--expires-in: '3w'/ },
  'expires-at': { value: 'tomorrow', says: /--expires-at: 'tomorrow'/ },
  overlap: { value: '3w', says: /--overlap: '3w'/ },
  user: { anyValue: "names an account, also a deleted one: a name that matches none lists no entries (exit 0)" },
  since: { value: 'yesterday', says: /--since: 'yesterday'/ },
  actor: { value: 'x'.repeat(129), says: /--actor: An actor is 1 to 128 characters/ },
  action: { value: 'account.exploded', says: /--action: 'account\.exploded' is not an audit action; the actions are account\.created, / },
  prefix: { value: 'al ice', says: /--prefix: A username prefix is 1 to 64 characters/ },
  events: { value: 'account.exploded', says: /--events: .*account\.exploded/ },
  description: { value: 'x'.repeat(201), says: /--description/ },
  endpoint: { anyValue: 'names an endpoint: one that does not exist is a refusal by the data (exit 1, webhook_endpoint_not_found)' },
  limit: { value: '0', says: /--limit .*'0'/ },
  port: { value: 'abc', says: /--port .*'abc'/ },
  host: { value: 'not a host!', says: /--host .*'not a host!'/ },
  workers: { value: '0', says: /--workers .*'0'/ },
  'base-url': { value: 'ftp://127.0.0.1/', says: /--base-url .*'ftp:\/\/127\.0\.0\.1\/'/ },
  username: { value: 'al:ice', says: /':'.*'al:ice'/ },
  'api-key': { value: `aapi_sandbox_${'A'.repeat(50)}`, says: /sandbox key .*--sandbox/ },
  'timeout-ms': { value: '0', says: /--timeout-ms .*'0'/ },
  retries: { value: '11', says: /--retries .*'11'/ },
  search: { anyValue: 'a filter on the names the server lists: no text is wrong, one that matches none prints none' },
};

/** Where one command's flag takes what the same flag elsewhere refuses. */
const WRONG_FOR: Readonly<Record<string, Wrong>> = {
  'call hello --name': { anyValue: 'POST /hello echoes any name exactly as sent: the server refuses none' },
};

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;

before(async () => {
  workspace = createWorkspace({ WEBHOOK_ALLOW_PRIVATE: '1' });
  server = await startServer(workspace);
  alice = await createAccount(workspace, 'alice');
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

/** Ids in the right shape; the wrong values are refused before any is looked up. */
const ENDPOINT_ID = 'we_AAAAAAAAAAAAAAAA';
const EVENT_ID = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const TOKEN_ID = 'AAAAAAAAAAAA';

/** A command line each command runs with as it is (arguments and required flags), into which one wrong value is put. */
function validLine(command: CommandSpec): string[] {
  const keyId = alice.key.replace(/^aapi_live_/, '').slice(0, 12);
  const connection = ['--base-url', server.url, '--username', alice.username, '--api-key', alice.key];
  const lines: Record<string, string[]> = {
    serve: [],
    migrate: [],
    'users create': ['carol'],
    'users list': [],
    'users show': ['alice'],
    'users premium': ['alice', 'on'],
    'users delete': ['alice'],
    'keys create': ['alice'],
    'keys roll': [keyId],
    'keys list': ['alice'],
    'keys usage': ['alice', keyId],
    'keys revoke': [keyId],
    'admin-tokens create': ['--label', 'ops'],
    'admin-tokens list': [],
    'admin-tokens revoke': [TOKEN_ID],
    audit: [],
    'webhooks add': ['http://127.0.0.1:9/hook'],
    'webhooks list': [],
    'webhooks remove': [ENDPOINT_ID],
    'webhooks disable': [ENDPOINT_ID],
    'webhooks enable': [ENDPOINT_ID],
    'webhooks deliveries': [ENDPOINT_ID],
    'webhooks redeliver': [EVENT_ID],
    'webhooks test': [ENDPOINT_ID],
    backup: [join(workspace.dir, 'copy.db')],
    'call hello': connection,
    'call user get': connection,
    'call user set': ['--name', 'Alice', ...connection],
    'call settings get': connection,
    'call settings set': ['--timezone', 'Europe/Paris', ...connection],
    'call timezones': connection,
  };
  const line = lines[commandName(command)];
  assert.ok(line !== undefined, `give '${commandName(command)}' a valid command line in validLine()`);
  return [...command.words, ...line];
}

/** The line with --flag set to `value`: replaced where the valid line has it, else added. */
function withFlag(line: readonly string[], flag: string, value: string): string[] {
  const at = line.indexOf(`--${flag}`);
  if (at < 0) return [...line, `--${flag}`, value];
  return [...line.slice(0, at), `--${flag}`, value, ...line.slice(at + 2)];
}

const COMMANDS = COMMAND_GROUPS.flatMap((group) => group.commands);

/** `account-api ARGS`, as main.ts runs it, in this process: the status runCli returns is the process's exit status. */
async function run(args: readonly string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const code = await runCli(args, {
    env: workspace.env,
    cwd: workspace.dir,
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    exit: (status) => assert.fail(`exited ${status} mid-command`),
  });
  return { code, stdout, stderr };
}

describe('every flag of every command, given a wrong value, exits 2', () => {
  for (const command of COMMANDS) {
    for (const [flag, spec] of Object.entries(command.flags) as [FlagName, FlagSpec][]) {
      const name = `${commandName(command)} --${flag}`;
      test(name, async (t) => {
        const wrong = WRONG_FOR[name] ?? WRONG[flag];
        assert.ok(wrong !== undefined, `--${flag} is new: give it a wrong value in WRONG`);
        if (typeof wrong === 'object' && 'anyValue' in wrong) {
          t.diagnostic(`no value of --${flag} is wrong: ${wrong.anyValue}`);
          return;
        }
        assert.equal(wrong === 'boolean', spec.type === 'boolean', `--${flag} is a ${spec.type} flag; WRONG says otherwise`);
        const args = wrong === 'boolean' ? [...validLine(command), `--${flag}=yes`] : withFlag(validLine(command), flag, wrong.value);
        const result = await run(args);
        assert.equal(result.code, 2, describeRun(args, result));
        assert.equal(result.stdout, '', describeRun(args, result));
        assert.ok(result.stderr.startsWith('account-api: '), describeRun(args, result));
        assert.match(result.stderr, wrong === 'boolean' ? new RegExp(`--${flag} takes no value`) : wrong.says, describeRun(args, result));
      });
    }
  }
});
