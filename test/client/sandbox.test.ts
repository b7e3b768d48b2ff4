// sandbox: true: the sandbox's base URL, and keys of the other environment refused before anything is sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AccountApiClient, LIVE_BASE_URL, SANDBOX_BASE_URL } from '../../client/src/index.ts';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { expectApiError, recordingFetch } from './recording.ts';

let workspace: Workspace;
let sandbox: ServerProcess;
let live: Account;

function demoKey(username: string): string {
  const found = demoAccounts().find((account) => account.username === username);
  if (found === undefined) throw new Error(`demoAccounts() has no account named ${username}`);
  return found.key.token;
}

before(async () => {
  workspace = createWorkspace();
  live = await createAccount(workspace, 'alice');
  sandbox = await startServer(workspace, ['--sandbox']);
});

after(async () => {
  await sandbox.stop();
  workspace.cleanup();
});

test('with the demo key and sandbox: true, every call reaches the sandbox and sees the demo account', async () => {
  const client = new AccountApiClient({ sandbox: true, baseUrl: sandbox.url, username: 'demo', apiKey: demoKey('demo') });
  const user = await client.getUser();
  assert.ok(Number.isSafeInteger(user.user_id), `user_id should be an integer: ${user.user_id}`);
  assert.deepEqual(user, { user_id: user.user_id, username: 'demo', name: 'Demo Premium', timezone: 'Europe/Paris' });
  assert.deepEqual(await client.hello(), { name: 'Demo Premium' });
  assert.ok((await client.listTimezones()).timezones.includes('Europe/Paris'));
});

test('the non-Premium demo account gets 403 premium_required in the sandbox too', async () => {
  const client = new AccountApiClient({ sandbox: true, baseUrl: sandbox.url, username: 'demo-basic', apiKey: demoKey('demo-basic') });
  await expectApiError(() => client.getSettings(), { status: 403, code: 'premium_required' });
});

test('a live key with sandbox: true is refused before any request', async () => {
  assert.match(live.key, /^aapi_live_/);
  const { fetch, exchanges } = recordingFetch();
  await expectApiError(() => new AccountApiClient({ sandbox: true, baseUrl: sandbox.url, username: 'alice', apiKey: live.key, fetch }), {
    status: 0,
    code: 'wrong_environment',
  });
  assert.equal(exchanges.length, 0, 'nothing was sent');
});

test('a sandbox key in live mode is refused before any request', async () => {
  const { fetch, exchanges } = recordingFetch();
  await expectApiError(() => new AccountApiClient({ baseUrl: sandbox.url, username: 'demo', apiKey: demoKey('demo'), fetch }), {
    status: 0,
    code: 'wrong_environment',
  });
  assert.equal(exchanges.length, 0, 'nothing was sent');
});

test('a live-mode client pointed at the sandbox with a live key is refused by the server: 401 wrong_environment', async () => {
  const client = new AccountApiClient({ baseUrl: sandbox.url, username: 'alice', apiKey: live.key });
  await expectApiError(() => client.getUser(), { status: 401, code: 'wrong_environment' });
});

test('without baseUrl, live mode calls localhost:8080 and sandbox mode localhost:8081', async () => {
  assert.equal(new AccountApiClient().baseUrl, LIVE_BASE_URL);
  assert.equal(LIVE_BASE_URL, 'http://localhost:8080');
  assert.equal(new AccountApiClient({ sandbox: true }).baseUrl, SANDBOX_BASE_URL);
  assert.equal(SANDBOX_BASE_URL, 'http://localhost:8081');
  // Where the requests go, seen by a fetch that records the URL and fails as an unreachable server would.
  const urls: string[] = [];
  const unreachable: typeof globalThis.fetch = async (input) => {
    urls.push(String(input));
    throw new TypeError('fetch failed');
  };
  await expectApiError(() => new AccountApiClient({ sandbox: true, fetch: unreachable, retries: 0 }).hello(), { code: 'network_error' });
  await expectApiError(() => new AccountApiClient({ fetch: unreachable, retries: 0 }).hello(), { code: 'network_error' });
  assert.deepEqual(urls, ['http://localhost:8081/api/v0/hello', 'http://localhost:8080/api/v0/hello']);
  assert.equal(new AccountApiClient({ baseUrl: 'https://api.example.test/prefix//' }).baseUrl, 'https://api.example.test/prefix', 'trailing slashes are dropped');
});
