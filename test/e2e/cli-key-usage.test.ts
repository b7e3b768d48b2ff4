// `account-api keys usage USERNAME KEY_ID`: the requests a test sent to a real server, counted per day and outcome, as a table
// for people and as the admin API's JSON; the wrong account, key or key id refused as the other `keys` commands refuse them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseKey } from '../../src/domain/api-keys.ts';
import { eventually } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import {
  cliJsonError,
  cliOk,
  createAccount,
  createWorkspace,
  expectCliExit,
  startServer,
  type Account,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.ts';

// Flushed every 50 ms so the test waits little.
const workspace: Workspace = createWorkspace({ KEY_USAGE_FLUSH_MS: '50' });
let server: ServerProcess;
let alice: Account & { keyId: string };
let bob: Account & { keyId: string };

const keyIdOf = (key: string) => {
  const parsed = parseKey(key);
  assert.ok(parsed.ok, `not a key: ${key}`);
  return parsed.key.keyId;
};

before(async () => {
  server = await startServer(workspace);
  const a = await createAccount(workspace, 'alice');
  const b = await createAccount(workspace, 'bob');
  alice = { ...a, keyId: keyIdOf(a.key) };
  bob = { ...b, keyId: keyIdOf(b.key) };
});

after(async () => {
  await server?.stop();
  workspace.cleanup();
});

type Usage = { days: { day: string; success: number; client_error: number; rate_limited: number; refused: number; server_error: number }[]; addresses: { address: string; last_seen: string }[] };

test('keys usage prints the requests sent with the key, per day and outcome, and the address they came from', async () => {
  const auth = { username: alice.username, key: alice.key };
  for (let i = 0; i < 3; i++) assert.equal((await call('GET', `${server.api}/user`, { auth })).status, 200);
  for (let i = 0; i < 2; i++) assert.equal((await call('POST', `${server.api}/settings`, { auth, form: { timezone: 'Mars/Olympus_Mons' } })).status, 400);
  const today = new Date().toISOString().slice(0, 10);
  // The server writes its counts in the background: read until they add up to what was sent (3 answered 200, 2 answered 400).
  const usage = await eventually(
    'the usage of alice\'s key',
    async () => JSON.parse(await cliOk(workspace, ['keys', 'usage', 'alice', alice.keyId, '--json'])) as Usage,
    (read) => read.days.reduce((sum, day) => sum + day.success + day.client_error, 0) === 5,
  );
  // A run across UTC midnight splits the five over two days; each day is one the test ran on.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  assert.ok(usage.days.every((day) => day.day === today || day.day === yesterday), JSON.stringify(usage.days));
  const total = usage.days.reduce(
    (sum, day) => ({ success: sum.success + day.success, client_error: sum.client_error + day.client_error, other: sum.other + day.rate_limited + day.refused + day.server_error }),
    { success: 0, client_error: 0, other: 0 },
  );
  assert.deepEqual(total, { success: 3, client_error: 2, other: 0 });
  assert.deepEqual(usage.addresses.map((seen) => seen.address), ['127.0.0.1']);
  assert.ok(!Number.isNaN(Date.parse(usage.addresses[0]!.last_seen)), 'last_seen is not an instant');

  const table = await cliOk(workspace, ['keys', 'usage', 'alice', alice.keyId]);
  const lines = table.split('\n');
  assert.match(lines[0]!, /^DAY +SUCCESS +CLIENT_ERROR +RATE_LIMITED +REFUSED +SERVER_ERROR$/, table);
  if (usage.days.length === 1) assert.match(lines[1]!, new RegExp(`^${today} +3 +2 +0 +0 +0$`), table);
  assert.ok(lines.some((line) => /^ADDRESS +LAST_SEEN$/.test(line)), `no addresses table:\n${table}`);
  assert.ok(lines.some((line) => line.startsWith('127.0.0.1 ')), `the address is not shown:\n${table}`);
  assert.ok(!table.includes(alice.key), 'the key itself was printed');
});

test('a key without requests says so; its JSON has no days and no addresses', async () => {
  const table = await cliOk(workspace, ['keys', 'usage', 'bob', bob.keyId]);
  assert.equal(table.trim(), `No requests with key ${bob.keyId} in the last 30 days.`);
  assert.deepEqual(JSON.parse(await cliOk(workspace, ['keys', 'usage', 'bob', bob.keyId, '--json'])), { days: [], addresses: [] });
});

test("another account's key, an unknown account or key exit 1 with the store's code; a string that is no key id exits 2", async () => {
  assert.equal(cliJsonError(await expectCliExit(workspace, ['keys', 'usage', 'bob', alice.keyId, '--json'], 1)).code, 'key_not_found');
  assert.equal(cliJsonError(await expectCliExit(workspace, ['keys', 'usage', 'nobody', alice.keyId, '--json'], 1)).code, 'account_not_found');
  assert.equal(cliJsonError(await expectCliExit(workspace, ['keys', 'usage', 'alice', 'AAAAAAAAAAAA', '--json'], 1)).code, 'key_not_found');
  const notAnId = await expectCliExit(workspace, ['keys', 'usage', 'alice', 'not-a-key-id'], 2);
  assert.match(notAnId.stderr, /key id/i, notAnId.stderr);
  const missing = await expectCliExit(workspace, ['keys', 'usage', 'alice'], 2);
  assert.match(missing.stderr, /key-id|usage/i, missing.stderr);
});
