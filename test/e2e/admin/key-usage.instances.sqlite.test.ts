// Usage per key across processes on one SQLite file (WAL): two `serve` instances, and `serve --workers 2`. Each process counts
// in its own memory and flushes into the shared file on its own, and the figures add up to exactly the requests sent to all of
// them, per outcome and day; a flush that meets another process's write lock is kept and written later; SIGTERM flushes first.
import assert from 'node:assert/strict';
import { describe, test, before, after } from 'node:test';
import { parseKey } from '../../../src/domain/api-keys.ts';
import { call } from '../../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { holdWriteLock } from '../../support/sqlite-lock-holder.ts';
import { adminUrlOf, bearer, expectData, makeAdminToken } from './admin-support.ts';
import { NONE, send, sendSeeing, usageAddingUpTo, type Caller } from './key-usage-support.ts';

// Without Redis each process keeps its own budgets: 3 a day per key, per process, so which answers are 429 is known from
// which process each request went to.
const BUDGET = { RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_WINDOW_MS: '86400000' };

describe('two instances on one SQLite file: usage per key adds up', () => {
  let workspace: Workspace;
  let servers: ServerProcess[] = [];
  let token: string;

  const adminCall = (instance: number, method: string, path: string, form?: Record<string, string>) =>
    call(method, `${adminUrlOf(servers[instance]!)}${path}`, { auth: bearer(token), ...(form === undefined ? {} : { form }) });
  // Made through instance 2, whose writes wait up to 30 s for the lock (instance 1 gives up after 1 s, below).
  const newKey = async (username: string, premium: boolean): Promise<Caller & { keyId: string }> => {
    expectData(await adminCall(1, 'POST', '/accounts', { username, premium: String(premium) }), 201);
    const issued = expectData(await adminCall(1, 'POST', `/accounts/${username}/keys`, {}), 201);
    return { username, key: issued.key, keyId: issued.key_id };
  };
  const read = (username: string, keyId: string) => async () => expectData(await adminCall(0, 'GET', `/accounts/${username}/keys/${keyId}/usage`));

  before(async () => {
    // The admin token's own budget would count every poll of the usage within the same day-long window: off.
    workspace = createWorkspace({ ADMIN_PORT: '0', ADMIN_RATE_LIMIT_PER_TOKEN: '0', ...BUDGET });
    token = await makeAdminToken(workspace);
    // Instance 1 flushes every 50 ms and waits at most 1 s for the write lock (so a write under another process's lock is a
    // 503, and a flush under it fails and is kept); instance 2 flushes only at shutdown (an hour's interval), so its SIGTERM
    // flush is what counts.
    servers = await Promise.all([
      startServer(workspace, [], { KEY_USAGE_FLUSH_MS: '50', SQLITE_BUSY_TIMEOUT_MS: '1000' }),
      startServer(workspace, [], { KEY_USAGE_FLUSH_MS: '3600000' }),
    ]);
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    workspace?.cleanup();
  });

  test('requests sent to both instances are counted once each, per outcome, including a 503 under a held lock', async () => {
    const [one, two] = servers.map((server) => server.api) as [string, string];
    const alice = await newKey('alice', true);
    const bob = await newKey('bob', false);
    const carol = await newKey('carol', true);

    // Another process holds the write lock while instance 1 answers: its flushes (every 50 ms) cannot commit meanwhile.
    const hold = await holdWriteLock(workspace, 0);
    try {
      await send(one, alice, 'bad-timezone', 1, 400);
      await send(one, alice, 'user', 2, 200);
      // Instance 1's budget of 3 for alice is spent; instance 2's is not.
      await send(one, alice, 'user', 1, 429);
      await send(one, bob, 'user', 1, 403);
      // Writes that cannot get the lock within instance 1's SQLITE_BUSY_TIMEOUT_MS: 503 store_busy, server errors. Two, one
      // after another, so the lock is held past the 1 s that instance 1's flush of alice's figures waits for it: that flush
      // gives up, and what it held must be kept for the next.
      for (let i = 0; i < 2; i++) {
        const busy = await call('POST', `${one}/settings`, { auth: { username: 'carol', key: carol.key }, form: { timezone: 'Europe/Paris' } });
        assert.equal(busy.status, 503, `carol's settings #${i + 1} under another process's lock: ${busy.text}`);
      }
      await send(one, carol, 'user', 1, 200);
      assert.deepEqual(await read('alice', alice.keyId)(), { days: [], addresses: [] }, 'usage written while another process held the write lock');
    } finally {
      hold.release();
      await hold.exited;
    }

    await send(two, alice, 'bad-timezone', 1, 400);
    await send(two, alice, 'user', 2, 200);
    await send(two, alice, 'user', 2, 429);
    await send(two, bob, 'user', 2, 403);
    // Bob's third request on instance 2: within its budget there (403s spend it too), so counted as a success.
    await send(two, bob, 'hello', 1, 200);

    // Instance 1's share, kept through the failed flushes, is written once the lock is free; instance 2's waits for its shutdown.
    await usageAddingUpTo("alice's usage from instance 1 alone", read('alice', alice.keyId), { ...NONE, client_error: 1, success: 2, rate_limited: 1 });
    await usageAddingUpTo("carol's usage from instance 1", read('carol', carol.keyId), { ...NONE, server_error: 2, success: 1 });
    assert.equal(await servers[1]!.stop(), 0, 'instance 2 did not shut down cleanly');
    const alices = await usageAddingUpTo("alice's usage from both", read('alice', alice.keyId), { ...NONE, client_error: 2, success: 4, rate_limited: 3 });
    await usageAddingUpTo("bob's usage from both", read('bob', bob.keyId), { ...NONE, refused: 3, success: 1 });
    assert.deepEqual(alices.addresses.map((seen: { address: string }) => seen.address), ['127.0.0.1'], 'one address, seen by both instances, listed once');
  });
});

describe('serve --workers 2 on one SQLite file: usage per key adds up', () => {
  let workspace: Workspace;
  let server: ServerProcess;

  before(async () => {
    workspace = createWorkspace({ ...BUDGET, LOG_LEVEL: 'info' });
    // Flushed only at shutdown (an hour's interval): every figure below is written by each worker's SIGTERM flush.
    server = await startServer(workspace, ['--workers', '2'], { KEY_USAGE_FLUSH_MS: '3600000' });
  });

  after(async () => {
    await server?.stop();
    workspace?.cleanup();
  });

  test("every worker's answers are counted once, as the client saw them, written at shutdown", async (t) => {
    const dave = await createAccount(workspace, 'dave');
    const parsed = parseKey(dave.key);
    assert.ok(parsed.ok, 'the CLI issued no key');
    // Each request on a new connection: the primary hands connections to the workers in turn, and each worker enforces its own
    // budget of 3, so which answers are 429 depends on that order; the figures must match what the client was answered.
    const seen = await sendSeeing(server.api, dave, 12, [200, 429]);
    t.diagnostic(`answered: ${JSON.stringify(seen)}`);
    const answeredBy = new Set(server.output.filter((line) => line.includes('"msg":"request completed"') && line.includes('"path":"/api/v0/user"')).map((line) => JSON.parse(line).pid));
    assert.equal(answeredBy.size, 2, `expected both workers to answer, answered by ${[...answeredBy].join(', ')}`);
    assert.ok(seen.success >= 3 && seen.success <= 6, `two workers of 3 each allow 3 to 6 successes: ${JSON.stringify(seen)}`);
    assert.equal(await server.stop(), 0, 'the primary did not shut down cleanly');
    const usage = await usageAddingUpTo(
      "dave's usage from both workers",
      async () => JSON.parse(await cliOk(workspace, ['keys', 'usage', 'dave', parsed.key.keyId, '--json'])),
      seen,
    );
    assert.deepEqual(usage.addresses.map((each: { address: string }) => each.address), ['127.0.0.1']);
  });
});
