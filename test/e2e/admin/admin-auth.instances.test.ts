// Two instances sharing PostgreSQL and Redis: the failed-attempt budget an address spends on one instance holds on the other,
// and a valid admin token is served by both all the same, on its very first request to an instance that never saw it.
import assert from 'node:assert/strict';
import { issueAdminToken } from '../../../src/domain/admin-tokens.ts';
import { call, type CallResult } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../../support/redis.ts';
import { requiring } from '../../support/requiring.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure, makeAdminToken } from './admin-support.ts';

const { describe, test, before, after } = requiring((await postgresSkipReason()) ?? (await redisSkipReason()));

const AUTH_FAILURES = 20;

describe('two instances over PostgreSQL and Redis: a valid admin token against a shared failed-attempt budget', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let instances: ServerProcess[] = [];
  let token: string;

  /** GET /accounts on instance `index`, from the address the test plays (X-Forwarded-For from the trusted loopback proxy). */
  const get = (index: number, auth: string, address: string): Promise<CallResult> =>
    call('GET', `${adminUrlOf(instances[index]!)}/accounts`, { auth, headers: { 'x-forwarded-for': address } });

  before(async () => {
    database = await createTestDatabase();
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      ADMIN_PORT: '0',
      RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
      // Long enough that no window ends while a test runs, however slow the machine.
      RATE_LIMIT_WINDOW_MS: '3600000',
      TRUST_PROXY: '127.0.0.1',
    });
    token = await makeAdminToken(workspace, 'billing');
    instances = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    workspace?.cleanup();
    await database?.drop();
  });

  test('locked out through instance A, the address is refused by B too, yet the token is served by B on its first request', async () => {
    const address = '198.51.100.20';
    for (let i = 0; i < AUTH_FAILURES; i++) expectFailure(await get(0, bearer(issueAdminToken().token), address), 401, 'invalid_admin_token');
    expectFailure(await get(0, bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
    // The budget is shared: B refuses the next guess without having seen one.
    expectFailure(await get(1, bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
    // B has never seen the token: it is judged by the store, not by any memory of this process.
    expectData(await get(1, bearer(token), address));
    expectData(await get(0, bearer(token), address));
    // Serving it gave the guessers nothing back, on either instance.
    expectFailure(await get(1, bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
  });

  test('40 concurrent requests with a valid token, spread over both instances of a locked-out address, are all served', async () => {
    const address = '198.51.100.21';
    for (let i = 0; i < AUTH_FAILURES + 1; i++) await get(1, bearer(issueAdminToken().token), address);
    expectFailure(await get(0, bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => get(i % 2, bearer(token), address)));
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.equal(refused.length, 0, `${refused.length} of 40 were refused, such as: ${refused[0]?.text}`);
  });

  test('a token of the other environment is told so by either instance, and spends nothing of the shared budget', async () => {
    const address = '198.51.100.22';
    for (let i = 0; i < AUTH_FAILURES + 5; i++) expectFailure(await get(i % 2, bearer(issueAdminToken('sandbox').token), address), 401, 'wrong_environment');
    for (let i = 0; i < AUTH_FAILURES; i++) expectFailure(await get(i % 2, bearer(issueAdminToken().token), address), 401, 'invalid_admin_token');
    expectFailure(await get(1, bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
  });
});
