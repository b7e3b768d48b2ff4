// Wrong values on the command line exit 2, as the README says, for the commands the issue named; a refusal by the data (an
// account that does not exist, a name taken) or by the server still exits 1. Every other flag of every command is walked in
// test/unit/cli/flag-values.test.ts; these run the command as an operator does, as a child process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliJsonError, cliOk, createAccount, createWorkspace, describeRun, runCli, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;

before(async () => {
  workspace = createWorkspace({ WEBHOOK_ALLOW_PRIVATE: '1' });
  server = await startServer(workspace);
  await createAccount(workspace, 'alice');
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

const ENDPOINT_ID = 'we_AAAAAAAAAAAAAAAA';
const EVENT_ID = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const TOKEN_ID = 'AAAAAAAAAAAA';

describe('what a status says', () => {
  test("the issue's wrong values exit 2, as serve --port abc does, naming the flag and its --help", async () => {
    const cases: Array<[readonly string[], string | RegExp]> = [
      [['serve', '--port', 'abc'], "account-api: --port (PORT) must be a whole number from 0 to 65535; got 'abc'; see 'account-api serve --help'"],
      [['keys', 'create', 'alice', '--scope', 'admin'], "account-api: --scope: 'admin' is not a scope: a key's scope is 'read' (GET only) or 'write' (every endpoint); see 'account-api keys create --help'"],
      [['keys', 'create', 'alice', '--expires-in', '3w'], /^account-api: --expires-in: '3w' is not a duration.*; see 'account-api keys create --help'\n$/],
      [['audit', '--since', 'yesterday'], "account-api: --since: 'yesterday' is not an ISO 8601 date or time, such as 2026-11-01 or 2026-11-01T08:00:00Z; see 'account-api audit --help'"],
    ];
    for (const [args, line] of cases) {
      const result = await runCli(workspace, args);
      assert.equal(result.code, 2, describeRun(args, result));
      if (line instanceof RegExp) assert.match(result.stderr, line, describeRun(args, result));
      else assert.equal(result.stderr, `${line}\n`, describeRun(args, result));
      assert.equal(result.stdout, '', describeRun(args, result));
    }
  });

  test('a value an operation refuses keeps its own code with --json, and exits 2', async () => {
    const cases: Array<[readonly string[], string]> = [
      [['keys', 'create', 'alice', '--scope', 'admin'], 'invalid_scope'],
      [['keys', 'create', 'alice', '--expires-in', '3w'], 'invalid_duration'],
      [['audit', '--since', 'yesterday'], 'invalid_since'],
      [['users', 'create', 'bad name!'], 'invalid_username'],
      [['admin-tokens', 'revoke', 'nope'], 'invalid_token_id'],
      [['webhooks', 'add', 'ftp://127.0.0.1/hook'], 'invalid_webhook_url'],
    ];
    for (const [args, code] of cases) {
      const result = await runCli(workspace, [...args, '--json']);
      assert.equal(result.code, 2, describeRun(args, result));
      assert.equal(cliJsonError(result).code, code, describeRun(args, result));
    }
  });

  test('a refusal by the data, or by the server for a reason other than a flag, still exits 1', async () => {
    await cliOk(workspace, ['admin-tokens', 'create', '--label', 'ops']);
    const cases: Array<[readonly string[], string]> = [
      [['users', 'show', 'nobody'], 'account_not_found'],
      [['keys', 'create', 'nobody', '--scope', 'read'], 'account_not_found'],
      [['users', 'create', 'alice'], 'username_taken'],
      [['keys', 'revoke', 'AAAAAAAAAAAA'], 'key_not_found'],
      [['admin-tokens', 'revoke', TOKEN_ID], 'admin_token_not_found'],
      [['webhooks', 'remove', ENDPOINT_ID], 'webhook_endpoint_not_found'],
      [['webhooks', 'redeliver', EVENT_ID, '--endpoint', ENDPOINT_ID], 'webhook_event_not_found'],
    ];
    for (const [args, code] of cases) {
      const result = await runCli(workspace, [...args, '--json']);
      assert.equal(result.code, 1, describeRun(args, result));
      assert.equal(cliJsonError(result).code, code, describeRun(args, result));
    }
    const wrongKey = ['call', 'user', 'get', '--base-url', server.url, '--username', 'alice', '--api-key', `aapi_live_${'A'.repeat(50)}`];
    const refused = await runCli(workspace, wrongKey);
    assert.equal(refused.code, 1, `a wrong key is the server's refusal, not a wrong command line; ${describeRun(wrongKey, refused)}`);
  });
});
