// Two instances over one PostgreSQL database: a roll, an expiry and a revocation made through either one's admin API are
// seen by both on their very next request, as the CLI's are (test/e2e/key-lifecycle.test.ts).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { HANG_MS } from '../../support/eventually.ts';
import { call, type CallResult } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../../support/redis.ts';
import { requiring } from '../../support/requiring.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure, makeAdminToken } from './admin-support.ts';

const { describe, test, before, after } = requiring(await postgresSkipReason());

describe('two instances over PostgreSQL: key changes through either admin API', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let servers: ServerProcess[] = [];
  let token: string;

  const adminCall = (instance: number, method: string, path: string, form?: Record<string, string>) =>
    call(method, `${adminUrlOf(servers[instance]!)}${path}`, { auth: bearer(token), ...(form === undefined ? {} : { form }) });
  /** GET /user with the key on each instance, in turn. */
  const onBoth = async (key: string): Promise<CallResult[]> => {
    const results: CallResult[] = [];
    for (const server of servers) results.push(await call('GET', `${server.api}/user`, { auth: { username: 'shared', key } }));
    return results;
  };

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({ DATABASE_URL: database.url, ADMIN_PORT: '0' });
    token = await makeAdminToken(workspace);
    servers = await Promise.all([startServer(workspace), startServer(workspace)]);
    expectData(await adminCall(0, 'POST', '/accounts', { username: 'shared', name: 'Shared', premium: 'true' }), 201);
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    workspace?.cleanup();
    await database?.drop();
  });

  test('a key rolled with overlap 0 through instance 1 is refused by both; its successor works on both', async () => {
    const old = expectData(await adminCall(0, 'POST', '/accounts/shared/keys', { label: 'ci' }), 201);
    for (const result of await onBoth(old.key)) assert.equal(result.status, 200, result.text);
    const rolled = expectData(await adminCall(0, 'POST', `/keys/${old.key_id}/roll`, { overlap: '0' }));
    for (const result of await onBoth(old.key)) expectFailure(result, 401, 'key_expired');
    for (const result of await onBoth(rolled.key)) assert.equal(result.status, 200, result.text);
  });

  test('a key revoked through instance 2 is refused by both on their next request', async () => {
    const issued = expectData(await adminCall(0, 'POST', '/accounts/shared/keys', { label: 'to revoke' }), 201);
    for (const result of await onBoth(issued.key)) assert.equal(result.status, 200, result.text);
    expectData(await adminCall(1, 'DELETE', `/keys/${issued.key_id}`));
    for (const result of await onBoth(issued.key)) expectFailure(result, 401, 'key_revoked');
  });

  test('a key issued through instance 2 with an expiry is refused by both once it has passed', async () => {
    // The key must be seen working before it expires: when a loaded machine takes longer than the lead over the two
    // answers, they proved nothing, and the test starts again with twice the lead (a hang detector ends it at HANG_MS).
    for (let leadMs = 4000; ; leadMs *= 2) {
      assert.ok(leadMs <= HANG_MS, `two answers took more than ${HANG_MS / 2} ms each time: taken for a hang`);
      const expiresAt = new Date(Date.now() + leadMs);
      const issued = expectData(await adminCall(1, 'POST', '/accounts/shared/keys', { expires_at: expiresAt.toISOString() }), 201);
      const before = await onBoth(issued.key);
      if (Date.now() >= expiresAt.getTime()) continue;
      for (const result of before) assert.equal(result.status, 200, result.text);
      await sleep(Math.max(0, expiresAt.getTime() - Date.now()) + 100);
      for (const result of await onBoth(issued.key)) expectFailure(result, 401, 'key_expired');
      return;
    }
  });
});

// As scaled out: PostgreSQL and Redis shared. The row decides which roll wins; no instance's memory can.
const scaledOut = requiring((await postgresSkipReason()) ?? (await redisSkipReason()));

scaledOut.describe('two instances over PostgreSQL and Redis: rolls of one key at once', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let servers: ServerProcess[] = [];
  let token: string;

  const adminCall = (instance: number, method: string, path: string, form?: Record<string, string>) =>
    call(method, `${adminUrlOf(servers[instance]!)}${path}`, { auth: bearer(token), ...(form === undefined ? {} : { form }) });

  scaledOut.before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({ DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix(), ADMIN_PORT: '0' });
    token = await makeAdminToken(workspace);
    servers = await Promise.all([startServer(workspace), startServer(workspace)]);
    expectData(await adminCall(0, 'POST', '/accounts', { username: 'racer', premium: 'true' }), 201);
  });

  scaledOut.after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    workspace?.cleanup();
    await database?.drop();
  });

  scaledOut.test('8 rolls through both instances at once: one successor; the account keeps 2 live keys', async () => {
    const original = expectData(await adminCall(0, 'POST', '/accounts/racer/keys', {}), 201);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => adminCall(index % 2, 'POST', `/keys/${original.key_id}/roll`)));
    const won = answers.filter((answer) => answer.status === 200);
    assert.equal(won.length, 1, `${won.length} of 8 concurrent rolls succeeded: ${answers.map((answer) => answer.status).join(' ')}`);
    const successor = expectData(won[0]!);
    for (const answer of answers.filter((each) => each !== won[0])) {
      const refused = expectFailure(answer, 409, 'key_already_rolled');
      assert.ok(refused.message.includes(`'${successor.successor.key_id}'`), `a refusal should name the winner's successor: ${refused.message}`);
    }
    const keys: { key_id: string; expires_at: string | null; revoked_at: string | null }[] = expectData(await adminCall(1, 'GET', '/accounts/racer/keys'));
    const live = keys.filter((key) => key.revoked_at === null && (key.expires_at === null || Date.parse(key.expires_at) > Date.now()));
    assert.deepEqual(live.map((key) => key.key_id).sort(), [original.key_id, successor.successor.key_id].sort(), 'live keys besides the original in its overlap and one successor');
    // Each instance answers for both keys as the database holds them.
    for (const instance of [0, 1]) {
      for (const key of [original.key, successor.key]) {
        const answer = await call('GET', `${servers[instance]!.api}/user`, { auth: { username: 'racer', key } });
        assert.equal(answer.status, 200, answer.text);
      }
    }
  });
});

