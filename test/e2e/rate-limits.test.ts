// Rate limits on one instance: per API key on private routes, per address on public ones, and failed-authentication budgets.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, failureMessage } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let bob: Account;
let carol: Account;
let dave: Account;

before(async () => {
  workspace = createWorkspace({
    RATE_LIMIT_PER_KEY: '3',
    RATE_LIMIT_PER_ADDRESS: '3',
    RATE_LIMIT_AUTH_FAILURES: '3',
    // The tests stand in for several clients by sending X-Forwarded-For from the trusted loopback proxy.
    TRUST_PROXY: '127.0.0.1',
  });
  alice = await createAccount(workspace, 'alice');
  bob = await createAccount(workspace, 'bob');
  carol = await createAccount(workspace, 'carol');
  dave = await createAccount(workspace, 'dave');
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

const from = (address: string) => ({ 'x-forwarded-for': address });

describe('per API key on private endpoints', () => {
  test('counts down in RateLimit headers and answers 429 rate_limited with Retry-After past the limit', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await call('GET', `${server.api}/user`, { auth: alice, headers: from('10.0.0.1') });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('ratelimit-limit'), '3');
      assert.ok(Number(ok.headers.get('ratelimit-reset')) > 0, 'RateLimit-Reset should be a positive number of seconds');
      remaining.push(ok.headers.get('ratelimit-remaining')!);
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const limited = await call('GET', `${server.api}/settings`, { auth: alice, headers: from('10.0.0.2') });
    assert.equal(limited.status, 429, 'the fourth request of the key, even from another address, is over its budget');
    assert.equal(failureMessage(limited).code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0, 'a 429 says when to retry');
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  });

  test("another account's key has its own budget", async () => {
    const result = await call('GET', `${server.api}/user`, { auth: bob, headers: from('10.0.0.1') });
    assert.equal(result.status, 200);
  });
});

describe('per address on public endpoints', () => {
  test('an address past its budget on /hello gets 429; another address does not', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', `${server.api}/hello`, { headers: from('10.0.1.1') })).status, 200);
    const limited = await call('POST', `${server.api}/hello`, { form: { name: 'x' }, headers: from('10.0.1.1') });
    assert.equal(limited.status, 429);
    assert.equal(failureMessage(limited).code, 'rate_limited');
    assert.equal((await call('GET', `${server.api}/hello`, { headers: from('10.0.1.2') })).status, 200);
  });

  test('X-Forwarded-For from an untrusted peer is ignored', async () => {
    const workspace2 = createWorkspace({ RATE_LIMIT_PER_ADDRESS: '2' });
    const untrusting = await startServer(workspace2);
    try {
      assert.equal((await call('GET', `${untrusting.api}/hello`, { headers: from('10.9.0.1') })).status, 200);
      assert.equal((await call('GET', `${untrusting.api}/hello`, { headers: from('10.9.0.2') })).status, 200);
      const third = await call('GET', `${untrusting.api}/hello`, { headers: from('10.9.0.3') });
      assert.equal(third.status, 429, 'forged addresses must not buy a fresh budget');
    } finally {
      await untrusting.stop();
      workspace2.cleanup();
    }
  });
});

describe('failed authentication', () => {
  test("a guesser's address is stopped with 429 while the account holder elsewhere is served", async () => {
    const guess = { username: bob.username, key: alice.key };
    for (let i = 0; i < 3; i++) {
      const wrong = await call('GET', `${server.api}/hello`, { auth: guess, headers: from('10.0.2.1') });
      assert.equal(wrong.status, 401, `guess ${i + 1} is answered 401`);
    }
    const blocked = await call('GET', `${server.api}/hello`, { auth: guess, headers: from('10.0.2.1') });
    assert.equal(blocked.status, 429);
    assert.equal(failureMessage(blocked).code, 'too_many_failed_attempts');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.equal(blocked.headers.get('ratelimit-limit'), '3', 'a 429 carries the RateLimit headers too');
    assert.equal(blocked.headers.get('ratelimit-remaining'), '0');
    const uncheckable = await call('GET', `${server.api}/hello`, { auth: carol, headers: from('10.0.2.1') });
    assert.equal(uncheckable.status, 429, 'a key that only the store could vouch for is not checked from a blocked address');
    assert.equal((await call('GET', `${server.api}/hello`, { auth: dave, headers: from('10.0.2.9') })).status, 200);
    const knownKey = await call('GET', `${server.api}/hello`, { auth: dave, headers: from('10.0.2.1') });
    assert.equal(knownKey.status, 200, 'a key the server already knows to be right is not refused by the failed-attempt budget');
    const holder = await call('GET', `${server.api}/hello`, { auth: bob, headers: from('10.0.2.2') });
    assert.equal(holder.status, 200, 'the account holder at another address is not locked out');
  });

  test('calls without credentials spend no failed-authentication budget', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await call('GET', `${server.api}/user`, { headers: from('10.0.3.1') })).status, 401);
    }
    const withKey = await call('GET', `${server.api}/hello`, { auth: bob, headers: from('10.0.3.1') });
    assert.equal(withKey.status, 200);
  });
});
