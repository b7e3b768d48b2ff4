// `account-api call ...` against real servers: each call's output, --json envelopes, failures, sandbox, retries and the README.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { call, failureMessage } from '../support/http.ts';
import {
  describeRun,
  expectCliExit,
  createAccount,
  createWorkspace,
  MAIN,
  REPO_ROOT,
  runCli,
  startServer,
  type Account,
  type CliResult,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

let workspace: Workspace;
let live: ServerProcess;
let sandbox: ServerProcess;
let alice: Account;
let basic: Account;

before(async () => {
  workspace = createWorkspace();
  [alice, basic] = await Promise.all([
    createAccount(workspace, 'alice', { name: 'Alice' }),
    createAccount(workspace, 'basic', { name: 'Basic Bob', premium: false }),
  ]);
  [live, sandbox] = await Promise.all([startServer(workspace), startServer(workspace, ['--sandbox'])]);
});

after(async () => {
  await Promise.all([live.stop(), sandbox.stop()]);
  workspace.cleanup();
});

/** The environment that points `call` at the live server, as `account` when given. */
function envFor(account?: Account): NodeJS.ProcessEnv {
  return {
    ACCOUNT_API_URL: live.url,
    ...(account === undefined ? {} : { ACCOUNT_API_USERNAME: account.username, ACCOUNT_API_KEY: account.key }),
  };
}

const expectExit = (args: readonly string[], code: number, env: NodeJS.ProcessEnv) => expectCliExit(workspace, args, code, env);

/** Runs a call that must succeed and returns its stdout, lines split. */
async function lines(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const result = await expectExit(args, 0, env);
  assert.equal(result.stderr, '', `a successful call prints nothing on stderr; ${describeRun(args, result)}`);
  return result.stdout.split('\n').slice(0, -1);
}

/** The one `{error: {...}}` object that --json promises on stderr. */
function jsonError(result: CliResult): unknown {
  try {
    return JSON.parse(result.stderr);
  } catch {
    throw new Error(`--json error output is not JSON: ${result.stderr}`);
  }
}

const auth = (account: Account) => ({ username: account.username, key: account.key });

function demoKey(username: string): string {
  const found = demoAccounts().find((account) => account.username === username);
  if (found === undefined) throw new Error(`demoAccounts() has no account named ${username}`);
  return found.key.token;
}

describe('each call prints its data for people', () => {
  test('call hello says World without credentials and the display name with them; --name posts and echoes', async () => {
    assert.deepEqual(await lines(['call', 'hello'], envFor()), ['name: World']);
    assert.deepEqual(await lines(['call', 'hello'], envFor(alice)), ['name: Alice']);
    assert.deepEqual(await lines(['call', 'hello'], envFor(basic)), ['name: Basic Bob'], 'a non-Premium account may call /hello');
    assert.deepEqual(await lines(['call', 'hello', '--name', 'Ada Lovelace & co = 1+1 ✓'], envFor()), ['name: Ada Lovelace & co = 1+1 ✓']);
  });

  test('call user get prints the account as field: value lines', async () => {
    const userId = (await call('GET', `${live.api}/user`, { auth: auth(alice) })).body.data.user_id;
    assert.deepEqual(await lines(['call', 'user', 'get'], envFor(alice)), [`user_id: ${userId}`, 'username: alice', 'name: Alice', 'timezone: UTC']);
  });

  test('call user set --name changes the display name and prints the updated account', async () => {
    const carol = await createAccount(workspace, 'carol', { name: 'Carol' });
    const userId = (await call('GET', `${live.api}/user`, { auth: auth(carol) })).body.data.user_id;
    const printed = await lines(['call', 'user', 'set', '--name', 'Carol Danvers'], envFor(carol));
    assert.deepEqual(printed, [`user_id: ${userId}`, 'username: carol', 'name: Carol Danvers', 'timezone: UTC']);
    assert.equal((await call('GET', `${live.api}/user`, { auth: auth(carol) })).body.data.name, 'Carol Danvers', 'the server keeps the new name');
  });

  test('call settings get and call settings set --timezone', async () => {
    const dana = await createAccount(workspace, 'dana', { timezone: 'Asia/Tokyo' });
    assert.deepEqual(await lines(['call', 'settings', 'get'], envFor(dana)), ['timezone: Asia/Tokyo']);
    assert.deepEqual(await lines(['call', 'settings', 'set', '--timezone', 'Europe/Paris'], envFor(dana)), ['timezone: Europe/Paris']);
    assert.equal((await call('GET', `${live.api}/settings`, { auth: auth(dana) })).body.data.timezone, 'Europe/Paris', 'the server keeps the new timezone');
    assert.deepEqual(await lines(['call', 'settings', 'get'], envFor(dana)), ['timezone: Europe/Paris']);
  });

  test('call timezones prints the whole list, one name per line, in the server order', async () => {
    const listed = (await call('GET', `${live.api}/settings/timezones`, { auth: auth(alice) })).body.data;
    assert.deepEqual(await lines(['call', 'timezones'], envFor(alice)), listed);
  });

  test('call timezones --search par keeps the names containing "par", ignoring case', async () => {
    const found = await lines(['call', 'timezones', '--search', 'par'], envFor(alice));
    assert.ok(found.includes('Europe/Paris'), `--search par should find Europe/Paris: ${found.join(', ')}`);
    assert.ok(found.includes('America/Paramaribo'), `--search par should find America/Paramaribo: ${found.join(', ')}`);
    assert.ok(!found.includes('Europe/Berlin'), `--search par must not list Europe/Berlin: ${found.join(', ')}`);
    for (const zone of found) assert.match(zone, /par/i, `every match should contain "par": ${zone}`);
    assert.deepEqual(await lines(['call', 'timezones', '--search', 'PAR'], envFor(alice)), found, 'the search ignores case');
  });

  test('call timezones --search with no match prints nothing on stdout, says so on stderr, and exits 0', async () => {
    const result = await expectExit(['call', 'timezones', '--search', 'no-such-zone'], 0, envFor(alice));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /no-such-zone/, `the note should repeat the search: ${result.stderr}`);
  });
});

describe('--json prints the envelope the server sent', () => {
  async function envelope(args: readonly string[], env: NodeJS.ProcessEnv): Promise<unknown> {
    const result = await expectExit([...args, '--json'], 0, env);
    return JSON.parse(result.stdout);
  }

  test('each GET call: the envelope equals the one a direct HTTP call receives', async () => {
    const cases: Array<[readonly string[], string, NodeJS.ProcessEnv, Account | undefined]> = [
      [['call', 'hello'], '/hello', envFor(), undefined],
      [['call', 'hello'], '/hello', envFor(alice), alice],
      [['call', 'user', 'get'], '/user', envFor(alice), alice],
      [['call', 'settings', 'get'], '/settings', envFor(alice), alice],
      [['call', 'timezones'], '/settings/timezones', envFor(alice), alice],
    ];
    for (const [args, path, env, account] of cases) {
      const direct = await call('GET', `${live.api}${path}`, account === undefined ? {} : { auth: auth(account) });
      assert.equal(direct.status, 200, `GET ${path}: ${direct.text}`);
      assert.deepEqual(await envelope(args, env), direct.body, `account-api ${args.join(' ')} --json should print GET ${path}'s envelope`);
    }
  });

  test('each POST call: the envelope equals the one the same direct POST receives', async () => {
    const erin = await createAccount(workspace, 'erin', { name: 'Erin' });
    const cases: Array<[readonly string[], string, Record<string, string>]> = [
      [['call', 'hello', '--name', 'Ada'], '/hello', { name: 'Ada' }],
      [['call', 'user', 'set', '--name', 'Erin Brockovich'], '/user', { name: 'Erin Brockovich' }],
      [['call', 'settings', 'set', '--timezone', 'Europe/Kyiv'], '/settings', { timezone: 'Europe/Kyiv' }],
    ];
    for (const [args, path, form] of cases) {
      const printed = await envelope(args, envFor(erin));
      // The same request again changes nothing more, so it answers what the CLI's request answered.
      const direct = await call('POST', `${live.api}${path}`, { auth: auth(erin), form });
      assert.equal(direct.status, 200, `POST ${path}: ${direct.text}`);
      assert.deepEqual(printed, direct.body, `account-api ${args.join(' ')} --json should print POST ${path}'s envelope`);
    }
  });

  test('call timezones --search par --json keeps the envelope and narrows data to the matches', async () => {
    const direct = (await call('GET', `${live.api}/settings/timezones`, { auth: auth(alice) })).body;
    const printed = await envelope(['call', 'timezones', '--search', 'par'], envFor(alice));
    const matches = direct.data.filter((zone: string) => zone.toLowerCase().includes('par'));
    assert.deepEqual(printed, { ...direct, data: matches });
  });
});

describe('a refused call exits 1 with the server message', () => {
  test('a wrong timezone: exit 2 (a wrong flag value), the server sentence with its suggestion, the code and the field, on stderr', async () => {
    const direct = failureMessage(await call('POST', `${live.api}/settings`, { auth: auth(alice), form: { timezone: 'europe/paris' } }));
    const args = ['call', 'settings', 'set', '--timezone', 'europe/paris'];
    const result = await expectExit(args, 2, envFor(alice));
    assert.equal(result.stdout, '', 'a failed call prints nothing on stdout');
    assert.ok(result.stderr.includes(direct.message), `stderr should carry the server's sentence "${direct.message}": ${result.stderr}`);
    assert.match(result.stderr, /Did you mean Europe\/Paris\?/);
    assert.match(result.stderr, /\b400 invalid_timezone\b/, `stderr should name the status and code: ${result.stderr}`);
    assert.match(result.stderr, /\bfield timezone\b/, `stderr should name the field: ${result.stderr}`);
    assert.match(result.stderr, /request id [0-9a-f-]{36}/, `stderr should quote the request id: ${result.stderr}`);

    const json = await expectExit([...args, '--json'], 2, envFor(alice));
    assert.equal(json.stdout, '');
    assert.deepEqual(jsonError(json), { error: { status: 400, code: 'invalid_timezone', field: 'timezone', message: direct.message } });
  });

  test('a non-Premium account: 403 premium_required on every private call', async () => {
    const calls = [
      ['call', 'user', 'get'],
      ['call', 'user', 'set', '--name', 'B'],
      ['call', 'settings', 'get'],
      ['call', 'settings', 'set', '--timezone', 'UTC'],
      ['call', 'timezones'],
    ];
    const direct = failureMessage(await call('GET', `${live.api}/user`, { auth: auth(basic) }));
    assert.equal(direct.code, 'premium_required');
    for (const args of calls) {
      const result = await expectExit(args, 1, envFor(basic));
      assert.ok(result.stderr.includes(direct.message), `stderr should carry the server's sentence; ${describeRun(args, result)}`);
      assert.match(result.stderr, /\b403 premium_required\b/, describeRun(args, result));
    }
    const json = await expectExit(['call', 'user', 'get', '--json'], 1, envFor(basic));
    assert.deepEqual(jsonError(json), { error: { status: 403, code: 'premium_required', field: null, message: direct.message } });
  });

  test('no credentials: every call but hello exits 2 before sending, saying in one line how to give them', async () => {
    const calls = [
      ['call', 'user', 'get'],
      ['call', 'user', 'set', '--name', 'B'],
      ['call', 'settings', 'get'],
      ['call', 'settings', 'set', '--timezone', 'UTC'],
      ['call', 'timezones'],
    ];
    // Nothing listens at port 9: a call that were sent would fail with network_error, not with this.
    for (const args of calls) {
      const result = await expectExit(args, 2, { ACCOUNT_API_URL: 'http://127.0.0.1:9' });
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line; ${describeRun(args, result)}`);
      for (const way of ['--username', '--api-key', 'ACCOUNT_API_USERNAME', 'ACCOUNT_API_KEY']) {
        assert.ok(result.stderr.includes(way), `the message should name ${way}; ${describeRun(args, result)}`);
      }
      assert.doesNotMatch(result.stderr, /network_error/, `nothing may be sent without credentials; ${describeRun(args, result)}`);
    }
    const json = await expectExit(['call', 'user', 'get', '--json'], 2, envFor());
    const error = (jsonError(json) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'usage');
    assert.match(error.message, /ACCOUNT_API_USERNAME/);
  });

  test('a wrong key: 401 invalid_credentials', async () => {
    const result = await expectExit(['call', 'user', 'get', '--api-key', basic.key], 1, envFor(alice));
    assert.match(result.stderr, /\b401 invalid_credentials\b/, result.stderr);
  });

  test('no server: exit 1 with network_error, without retrying', async () => {
    const result = await expectExit(['call', 'hello', '--base-url', 'http://127.0.0.1:9'], 1, {});
    assert.match(result.stderr, /network_error/, result.stderr);
    assert.match(result.stderr, /127\.0\.0\.1:9/, `the message should say which server could not be reached: ${result.stderr}`);
    const json = await expectExit(['call', 'hello', '--base-url', 'http://127.0.0.1:9', '--json'], 1, {});
    assert.deepEqual(Object.keys((jsonError(json) as { error: object }).error), ['status', 'code', 'field', 'message']);
    // What "at once" means, counted rather than timed: a server that drops every connection sees exactly one.
    let connections = 0;
    const dropping = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => dropping.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`;
      const dropped = await expectExit(['call', 'hello', '--base-url', url], 1, {});
      assert.match(dropped.stderr, /network_error/, dropped.stderr);
      assert.equal(connections, 1, `a dropped connection was tried ${connections} times; without --retries it is reported after one`);
    } finally {
      dropping.close();
    }
  });
});

describe('connection settings', () => {
  test('flags win over the environment', async () => {
    const env = { ACCOUNT_API_URL: 'http://127.0.0.1:9', ACCOUNT_API_USERNAME: 'basic', ACCOUNT_API_KEY: basic.key };
    const printed = await lines(['call', 'hello', '--base-url', live.url, '--username', 'alice', '--api-key', alice.key], env);
    assert.deepEqual(printed, ['name: Alice']);
  });

  test('call opens no database: a DATABASE_URL that the other commands refuse does not matter to it', async () => {
    const env = { ...envFor(alice), DATABASE_URL: 'mysql://nowhere/accounts', SANDBOX_DATABASE_URL: 'mysql://nowhere/sandbox' };
    assert.deepEqual(await lines(['call', 'settings', 'get'], env), ['timezone: UTC']);
    const other = await runCli(workspace, ['users', 'list'], env);
    assert.equal(other.code, 1, `users list should refuse that DATABASE_URL, or this test proves nothing; ${describeRun(['users', 'list'], other)}`);
  });

  test('a flag with a wrong value or without its other half: exit 2 with what to fix, naming the flag', async () => {
    const cases: Array<[readonly string[], NodeJS.ProcessEnv, RegExp]> = [
      [['call', 'user', 'get', '--username', 'alice'], { ACCOUNT_API_URL: live.url }, /--api-key/],
      [['call', 'user', 'get', '--api-key', alice.key], { ACCOUNT_API_URL: live.url }, /--username/],
      [['call', 'user', 'get', '--username', 'a:b', '--api-key', alice.key], { ACCOUNT_API_URL: live.url }, /:/],
      [['call', 'hello', '--base-url', 'localhost:8080'], {}, /--base-url/],
      [['call', 'hello', '--timeout-ms', 'soon'], envFor(), /--timeout-ms/],
      [['call', 'hello', '--retries', 'many'], envFor(), /--retries/],
    ];
    for (const [args, env, said] of cases) {
      const result = await expectExit(args, 2, env);
      assert.match(result.stderr, said, describeRun(args, result));
      assert.match(result.stderr, /see 'account-api call (hello|user get) --help'/, describeRun(args, result));
    }
  });

  test('the same mistakes in the environment: exit 1 with what to fix, naming the variable', async () => {
    const cases: Array<[readonly string[], NodeJS.ProcessEnv, RegExp]> = [
      [['call', 'user', 'get'], { ACCOUNT_API_URL: live.url, ACCOUNT_API_USERNAME: 'alice' }, /ACCOUNT_API_KEY/],
      [['call', 'user', 'get'], { ACCOUNT_API_URL: live.url, ACCOUNT_API_KEY: alice.key }, /ACCOUNT_API_USERNAME/],
      [['call', 'hello'], { ACCOUNT_API_URL: 'localhost:8080' }, /ACCOUNT_API_URL/],
    ];
    for (const [args, env, said] of cases) {
      const result = await expectExit([...args, '--json'], 1, env);
      assert.match(result.stderr, said, describeRun(args, result));
      assert.equal((jsonError(result) as { error: { code: string } }).error.code, 'config', describeRun(args, result));
    }
  });

  test('--sandbox with the sandbox base URL and the demo key reaches the sandbox', async () => {
    const args = ['call', 'user', 'get', '--sandbox', '--base-url', sandbox.url, '--username', 'demo', '--api-key', demoKey('demo')];
    const printed = await lines(args, {});
    const direct = (await call('GET', `${sandbox.api}/user`, { auth: { username: 'demo', key: demoKey('demo') } })).body;
    assert.deepEqual(printed, [`user_id: ${direct.data.user_id}`, 'username: demo', 'name: Demo Premium', 'timezone: Europe/Paris']);
    assert.deepEqual(JSON.parse((await expectExit([...args, '--json'], 0, {})).stdout), direct);
  });

  test('--sandbox reads ACCOUNT_API_SANDBOX_URL, so one environment names both servers', async () => {
    const env = { ACCOUNT_API_URL: live.url, ACCOUNT_API_SANDBOX_URL: sandbox.url };
    const args = ['call', 'hello', '--username', 'demo', '--api-key', demoKey('demo')];
    assert.deepEqual(await lines([...args, '--sandbox'], env), ['name: Demo Premium']);
    assert.deepEqual(await lines(['call', 'hello'], env), ['name: World'], 'without --sandbox, ACCOUNT_API_URL is called');
  });

  test('a key of the other environment is refused before it is sent', async () => {
    const liveKeyInSandbox = await expectExit(['call', 'user', 'get', '--sandbox', '--base-url', sandbox.url], 1, envFor(alice));
    assert.match(liveKeyInSandbox.stderr, /wrong_environment/);
    assert.match(liveKeyInSandbox.stderr, /--sandbox/, `the advice should name the flag: ${liveKeyInSandbox.stderr}`);
    // Given as --api-key, the key contradicts the command line's own (absent) --sandbox: a wrong command line, exit 2.
    const sandboxKeyLive = await expectExit(['call', 'user', 'get', '--username', 'demo', '--api-key', demoKey('demo')], 2, envFor());
    assert.match(sandboxKeyLive.stderr, /wrong_environment/);
    assert.doesNotMatch(sandboxKeyLive.stderr, /\b401\b/, `the client refuses before sending, so no server answered: ${sandboxKeyLive.stderr}`);
  });
});

describe('retries, counted at a server that always answers 429', () => {
  test('without --retries a 429 is reported after one request; --retries 1 sends exactly one more', async () => {
    let requests = 0;
    const busy = createHttpServer((_request, response) => {
      requests++;
      const body = { status: 'fail', messages: [{ code: 'rate_limited', message: 'Wait.' }], meta: {}, data: null };
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(body));
    });
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    try {
      const env = { ACCOUNT_API_URL: `http://127.0.0.1:${(busy.address() as AddressInfo).port}`, ACCOUNT_API_USERNAME: 'frank', ACCOUNT_API_KEY: alice.key };
      const once = await expectExit(['call', 'user', 'get'], 1, env);
      assert.match(once.stderr, /\b429 rate_limited\b/, once.stderr);
      assert.equal(requests, 1, `without --retries ${requests} requests were sent for one call`);
      const twice = await expectExit(['call', 'user', 'get', '--retries', '1'], 1, env);
      assert.match(twice.stderr, /\b429 rate_limited\b/, twice.stderr);
      assert.equal(requests, 3, `--retries 1 should send one request and one retry; the server saw ${requests - 1}`);
    } finally {
      busy.close();
    }
  });
});

describe('retries', () => {
  let limited: Workspace;
  let server: ServerProcess;
  let frank: Account;

  before(async () => {
    // One request per key every 10 s: the second call in a row is refused with Retry-After of about 10 s.
    limited = createWorkspace({ RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_WINDOW_MS: '10000' });
    frank = await createAccount(limited, 'frank');
    server = await startServer(limited);
  });

  after(async () => {
    await server.stop();
    limited.cleanup();
  });

  test('by default a 429 is reported at once with its Retry-After; --retries 1 waits it out and succeeds', async () => {
    const env = { ACCOUNT_API_URL: server.url, ACCOUNT_API_USERNAME: 'frank', ACCOUNT_API_KEY: frank.key };
    // On a slow machine a window may turn between two calls, so one call more is made until a refusal comes (a fresh
    // window's second call always is one); each attempt is counted, never timed.
    const answered: CliResult[] = [];
    while (answered.length < 4 && answered.at(-1)?.code !== 1) answered.push(await runCli(limited, ['call', 'user', 'get'], env));
    assert.equal(answered[0]!.code, 0, `the first call of the window is answered; ${describeRun(['call', 'user', 'get'], answered[0]!)}`);
    const refused = answered.at(-1)!;
    assert.equal(refused.code, 1, describeRun(['call', 'user', 'get'], refused));
    assert.match(refused.stderr, /\b429 rate_limited\b/, refused.stderr);
    const retryAfter = Number(/retry after (\d+) s/.exec(refused.stderr)?.[1]);
    assert.ok(retryAfter >= 1, `stderr should say how long to wait: ${refused.stderr}`);

    const patient = await runCli(limited, ['call', 'user', 'get', '--retries', '1'], env);
    assert.equal(patient.code, 0, `--retries 1 should wait for the window and then succeed; ${describeRun(['call', 'user', 'get', '--retries', '1'], patient)}`);
    assert.match(patient.stdout, /^username: frank$/m);
  });
});

describe('the command line', () => {
  test('words that name no call exit 2 with the usage of call', async () => {
    const cases: Array<[readonly string[], RegExp]> = [
      [['call'], /which call/],
      [['call', 'frobnicate'], /frobnicate/],
      [['call', 'user'], /call user/],
    ];
    for (const [args, said] of cases) {
      const result = await expectExit(args, 2, envFor(alice));
      assert.match(result.stderr, said, describeRun(args, result));
      assert.match(result.stderr, /account-api call hello/, `the usage of call should be printed; ${describeRun(args, result)}`);
      assert.equal(result.stdout, '');
    }
  });

  test("a wrong flag or argument exits 2 with one line naming it and the call's --help", async () => {
    const cases: Array<[readonly string[], RegExp, string]> = [
      [['call', 'user', 'get', 'extra'], /'extra'/, 'call user get'],
      [['call', 'user', 'set'], /--name/, 'call user set'],
      [['call', 'settings', 'set'], /--timezone/, 'call settings set'],
      [['call', 'user', 'get', '--search', 'x'], /unknown option --search for 'call user get'/, 'call user get'],
      [['call', 'timezones', '--timezone', 'UTC'], /unknown option --timezone for 'call timezones'/, 'call timezones'],
      [['call', 'hello', '--port', '1'], /unknown option --port for 'call hello'/, 'call hello'],
      [['call', 'hello', '--frobnicate'], /unknown option --frobnicate for 'call hello'/, 'call hello'],
      [['users', 'list', '--api-key', 'x'], /unknown option --api-key for 'users list'/, 'users list'],
    ];
    for (const [args, said, command] of cases) {
      const result = await expectExit(args, 2, envFor(alice));
      assert.match(result.stderr, said, describeRun(args, result));
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line; ${describeRun(args, result)}`);
      assert.ok(result.stderr.includes(`see 'account-api ${command} --help'`), describeRun(args, result));
      assert.equal(result.stdout, '');
    }
  });

  test('--help lists every call and its connection flags', async () => {
    const result = await expectExit(['--help'], 0, {});
    for (const text of ['call hello', 'call user get', 'call user set', 'call settings get', 'call settings set', 'call timezones', '--base-url', '--api-key', 'ACCOUNT_API_URL', '--retries']) {
      assert.ok(result.stdout.includes(text), `--help should mention '${text}':\n${result.stdout}`);
    }
  });

  test("each call's --help names every flag it takes, with the variables they default to", async () => {
    for (const words of [['hello'], ['user', 'get'], ['user', 'set'], ['settings', 'get'], ['settings', 'set'], ['timezones']]) {
      const result = await expectExit(['call', ...words, '--help'], 0, {});
      for (const text of ['--base-url', '--username', '--api-key', '--timeout-ms', '--retries', '--sandbox', '--json', 'ACCOUNT_API_URL', 'ACCOUNT_API_KEY', 'Example']) {
        assert.ok(result.stdout.includes(text), `call ${words.join(' ')} --help should mention '${text}':\n${result.stdout}`);
      }
    }
  });
});

test("the README's command-line section prints exactly what the README shows", async () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = (heading: string) => {
    const start = readme.indexOf(`\n## ${heading}\n`);
    assert.notEqual(start, -1, `README has no section '## ${heading}'`);
    return readme.slice(start, readme.indexOf('\n## ', start + 1));
  };
  const blocks = [...(section('Start here') + section('Calling the API from the command line')).matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(
    (match) => ({ lang: match[1]!, body: match[2]! }),
  );
  const examples = blocks.flatMap((block, index) => {
    if (block.lang !== 'sh' || block.body.includes('npm install')) return [];
    const next = blocks[index + 1];
    return [{ command: block.body, expected: next !== undefined && next.lang !== 'sh' ? next.body : undefined }];
  });
  assert.ok(examples.filter((example) => example.command.includes('account-api call')).length >= 7, 'the section shows the calls');

  // A fresh database, as a newcomer has: the README's alice is user 1, and the sandbox's demo account too.
  const fresh = createWorkspace({ LOG_LEVEL: 'warn' });
  const [server, sandboxServer] = await Promise.all([startServer(fresh), startServer(fresh, ['--sandbox'])]);
  try {
    const marker = '@@readme-example@@';
    const script = [
      'set -u',
      `npx() { if [ "$1" = account-api ]; then shift; "${process.execPath}" "${MAIN}" "$@"; else command npx "$@"; fi; }`,
      // The README runs ./account-api from the repository; this script runs in the fresh workspace, so it names the launcher whole.
      ...examples.flatMap((example) => [
        `echo '${marker}'`,
        example.command.replaceAll('http://localhost:8080', server.url).replaceAll('./account-api', `"${join(REPO_ROOT, 'account-api')}"`),
      ]),
    ].join('\n');
    const env = { ...fresh.env, ACCOUNT_API_SANDBOX_URL: sandboxServer.url };
    const result = spawnSync('bash', ['-c', script], { cwd: fresh.dir, env, encoding: 'utf8' });
    assert.equal(result.status, 0, `the README's commands failed:\n${result.stderr}`);
    const outputs = result.stdout.split(`${marker}\n`).slice(1);
    const requestIds = (text: string) => text.replace(/request id [0-9a-f-]{36}/g, 'request id <id>');
    let checked = 0;
    examples.forEach((example, index) => {
      if (example.expected === undefined) return;
      assert.equal(requestIds(outputs[index] ?? '').trimEnd(), requestIds(example.expected).trimEnd(), `README example:\n${example.command}`);
      checked++;
    });
    assert.ok(checked >= 7, `expected at least 7 documented outputs, checked ${checked}`);
  } finally {
    await Promise.all([server.stop(), sandboxServer.stop()]);
    fresh.cleanup();
  }
});
