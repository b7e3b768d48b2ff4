// The sandbox (`serve --sandbox`): seeded demo accounts and keys, its own database, and no crossing with live keys.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { demoAccounts, type DemoAccount } from '../../src/sandbox/demo-accounts.ts';
import { HANG_MS } from '../support/eventually.ts';
import { call, failureMessage, type CallResult } from '../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let sandbox: ServerProcess;
let demo: { username: string; key: string };
let demoBasic: { username: string; key: string };

function demoAccount(username: string): DemoAccount {
  const found = demoAccounts().find((account) => account.username === username);
  if (found === undefined) throw new Error(`demoAccounts() has no account named ${username}`);
  return found;
}

before(async () => {
  workspace = createWorkspace();
  sandbox = await startServer(workspace, ['--sandbox']);
  demo = { username: 'demo', key: demoAccount('demo').key.token };
  demoBasic = { username: 'demo-basic', key: demoAccount('demo-basic').key.token };
});

after(async () => {
  await sandbox.stop();
  workspace.cleanup();
});

/** The banner goes to stderr right after the ready line, so it may arrive later; the bound is a hang detector, not a timing check. */
async function waitForOutput(server: ServerProcess, text: string, timeoutMs = HANG_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.output.some((line) => line.includes(text))) {
    if (Date.now() > deadline) throw new Error(`server output never contained ${JSON.stringify(text)}:\n${server.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function assertSandboxHeader(result: CallResult, what: string): void {
  assert.equal(result.headers.get('x-environment'), 'sandbox', `${what} (HTTP ${result.status}) should carry X-Environment: sandbox`);
}

test('the sandbox prints both demo accounts and their keys when it starts', async () => {
  for (const account of demoAccounts()) {
    await waitForOutput(sandbox, account.key.token);
    const line = sandbox.output.find((candidate) => candidate.includes(account.key.token))!;
    assert.ok(line.includes(account.username), `the line with ${account.username}'s key should name the account: ${line}`);
    assert.match(account.key.token, /^aapi_sandbox_[0-9A-Za-z]{50}$/, `a demo key should be a sandbox key: ${account.key.token}`);
  }
});

test('every sandbox response carries X-Environment: sandbox, success or failure', async () => {
  const ok = await call('GET', `${sandbox.api}/hello`);
  assert.equal(ok.status, 200, ok.text);
  assertSandboxHeader(ok, 'GET /hello');

  const unauthenticated = await call('GET', `${sandbox.api}/user`);
  assert.equal(unauthenticated.status, 401, unauthenticated.text);
  assertSandboxHeader(unauthenticated, 'GET /user without credentials');

  const missing = await call('GET', `${sandbox.api}/no-such-thing`);
  assert.equal(missing.status, 404, missing.text);
  assertSandboxHeader(missing, 'an unknown path');

  const wrongMethod = await call('DELETE', `${sandbox.api}/user`, { auth: demo });
  assert.equal(wrongMethod.status, 405, wrongMethod.text);
  assertSandboxHeader(wrongMethod, 'DELETE /user');

  const authenticated = await call('GET', `${sandbox.api}/settings`, { auth: demo });
  assert.equal(authenticated.status, 200, authenticated.text);
  assertSandboxHeader(authenticated, 'GET /settings as demo');
});

test('the sandbox challenges with its own realm', async () => {
  const result = await call('GET', `${sandbox.api}/user`);
  assert.equal(result.status, 401);
  assert.equal(result.headers.get('www-authenticate'), 'Basic realm="account-api sandbox", charset="UTF-8"');
});

test('the Premium demo account reads GET /user with the documented name and timezone', async () => {
  const result = await call('GET', `${sandbox.api}/user`, { auth: demo });
  assert.equal(result.status, 200, `demo should be able to call GET /user: ${result.text}`);
  assert.equal(result.body.status, 'success');
  assert.deepEqual(result.body.messages, []);
  assert.deepEqual(result.body.meta, {});
  assert.equal(result.body.data.username, 'demo');
  assert.equal(result.body.data.name, 'Demo Premium');
  assert.equal(result.body.data.timezone, 'Europe/Paris');
  assert.ok(Number.isInteger(result.body.data.user_id), `user_id should be an integer: ${result.text}`);
});

test('the Premium demo account can change its timezone with POST /settings', async () => {
  const changed = await call('POST', `${sandbox.api}/settings`, { auth: demo, form: { timezone: 'Asia/Tokyo' } });
  assert.equal(changed.status, 200, `demo should be able to POST /settings: ${changed.text}`);
  assert.deepEqual(changed.body.data, { timezone: 'Asia/Tokyo' });
  const read = await call('GET', `${sandbox.api}/settings`, { auth: demo });
  assert.deepEqual(read.body.data, { timezone: 'Asia/Tokyo' }, 'GET /settings should show the timezone just set');

  const restored = await call('POST', `${sandbox.api}/settings`, { auth: demo, form: { timezone: 'Europe/Paris' } });
  assert.equal(restored.status, 200, restored.text);
});

test('the non-Premium demo account gets 403 premium_required on /user but its own name from /hello', async () => {
  const user = await call('GET', `${sandbox.api}/user`, { auth: demoBasic });
  assert.equal(user.status, 403, `demo-basic has no Premium, so GET /user should be 403: ${user.text}`);
  assert.equal(failureMessage(user).code, 'premium_required');
  assertSandboxHeader(user, 'a 403');

  const hello = await call('GET', `${sandbox.api}/hello`, { auth: demoBasic });
  assert.equal(hello.status, 200, `demo-basic should be able to call GET /hello: ${hello.text}`);
  assert.deepEqual(hello.body.data, { name: 'Demo Basic' });
});

test('the sandbox refuses a live key with 401 wrong_environment', async () => {
  const live = await createAccount(workspace, 'lou');
  assert.match(live.key, /^aapi_live_/, 'createAccount without --sandbox should give a live key');
  const result = await call('GET', `${sandbox.api}/user`, { auth: live });
  assert.equal(result.status, 401, `a live key sent to the sandbox should be refused: ${result.text}`);
  assert.equal(failureMessage(result).code, 'wrong_environment');
  assertSandboxHeader(result, 'a wrong_environment 401');
});

test('a live server refuses a sandbox demo key with 401 wrong_environment that says it is a sandbox key', async () => {
  const live = await startServer(workspace);
  try {
    const result = await call('GET', `${live.api}/user`, { auth: demo });
    assert.equal(result.status, 401, `a sandbox key sent to a live server should be refused: ${result.text}`);
    const message = failureMessage(result);
    assert.equal(message.code, 'wrong_environment');
    assert.match(message.message, /sandbox/i, `the message should say the key is a sandbox key: ${message.message}`);
    assert.equal(result.headers.get('x-environment'), null, 'a live server must not claim to be the sandbox on a 401');

    const hello = await call('GET', `${live.api}/hello`);
    assert.equal(hello.status, 200, hello.text);
    assert.equal(hello.headers.get('x-environment'), null, 'a live server must not send X-Environment');
  } finally {
    await live.stop();
  }
});

test('the sandbox keeps its accounts in its own database', async () => {
  const live = JSON.parse(await cliOk(workspace, ['users', 'list', '--json'])) as Array<{ username: string }>;
  const liveNames = live.map((account) => account.username);
  assert.ok(!liveNames.includes('demo') && !liveNames.includes('demo-basic'), `demo accounts must not be in the live database: ${liveNames.join(', ')}`);

  const sandboxed = JSON.parse(await cliOk(workspace, ['users', 'list', '--sandbox', '--json'])) as Array<{ username: string; premium: boolean }>;
  const byName = new Map(sandboxed.map((account) => [account.username, account]));
  assert.equal(byName.get('demo')?.premium, true, `the sandbox database should hold demo with Premium: ${JSON.stringify(sandboxed)}`);
  assert.equal(byName.get('demo-basic')?.premium, false, `the sandbox database should hold demo-basic without Premium: ${JSON.stringify(sandboxed)}`);
  assert.ok(!byName.has('lou'), 'a live account must not appear in the sandbox database');
});

test('after a restart the sandbox accepts the same demo keys', async () => {
  const code = await sandbox.stop();
  assert.equal(code, 0, 'the sandbox should stop cleanly');
  sandbox = await startServer(workspace, ['--sandbox']);
  for (const account of demoAccounts()) await waitForOutput(sandbox, account.key.token);

  const user = await call('GET', `${sandbox.api}/user`, { auth: demo });
  assert.equal(user.status, 200, `the demo key should still work after a restart: ${user.text}`);
  assert.equal(user.body.data.username, 'demo');
  const hello = await call('GET', `${sandbox.api}/hello`, { auth: demoBasic });
  assert.equal(hello.status, 200, `the demo-basic key should still work after a restart: ${hello.text}`);
  assert.deepEqual(hello.body.data, { name: 'Demo Basic' });
});
