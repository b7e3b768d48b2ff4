// Two instances over one PostgreSQL database: an admin Idempotency-Key used through one holds for the other, whose retry
// gets the first answer again; while the first request still runs, the other's is 409.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { call, type CallResult } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { requiring } from '../../support/requiring.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure, makeAdminToken } from './admin-support.ts';
import { assertReplayOf } from './idempotency-support.ts';

const { describe, test, before, after } = requiring(await postgresSkipReason());

describe('two instances over PostgreSQL: an admin Idempotency-Key holds across them', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let servers: ServerProcess[] = [];
  let token: string;

  const adminCall = (instance: number, method: string, path: string, key?: string, form?: Record<string, string>): Promise<CallResult> =>
    call(method, `${adminUrlOf(servers[instance]!)}${path}`, {
      auth: bearer(token),
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
      ...(form === undefined ? {} : { form }),
    });
  const keysOf = async (username: string) => expectData(await adminCall(0, 'GET', `/accounts/${username}/keys`)) as { key_id: string }[];

  before(async () => {
    database = await createTestDatabase();
    // The longest statement time allowed: the request held up below waits for the test to let it go, however slow the machine.
    workspace = createWorkspace({ DATABASE_URL: database.url, ADMIN_PORT: '0', PG_STATEMENT_TIMEOUT_MS: '600000' });
    token = await makeAdminToken(workspace);
    servers = await Promise.all([startServer(workspace), startServer(workspace)]);
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    workspace?.cleanup();
    await database?.drop();
  });

  test('a key issued through instance 1, retried through instance 2, is the same key, issued once', async () => {
    expectData(await adminCall(0, 'POST', '/accounts', undefined, { username: 'shared' }), 201);
    const key = randomUUID();
    const first = await adminCall(0, 'POST', '/accounts/shared/keys', key, { label: 'ci' });
    const issued = expectData(first, 201);
    assertReplayOf(await adminCall(1, 'POST', '/accounts/shared/keys', key, { label: 'ci' }), first, 'through the other instance');
    expectFailure(await adminCall(1, 'POST', '/accounts/shared/keys', key, { label: 'cd' }), 422, 'idempotency_key_reused');
    assert.deepEqual((await keysOf('shared')).map((each) => each.key_id), [issued.key_id]);
  });

  test('while an issue runs on instance 1, its key is 409 on instance 2; then both replay its answer', async () => {
    expectData(await adminCall(0, 'POST', '/accounts', undefined, { username: 'slow' }), 201);
    const key = randomUUID();
    // Holds the account's row as a slow writer would: the issue claims its key, then waits for the row (createKey locks it).
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT id FROM accounts WHERE username = 'slow' FOR UPDATE");
      let answered = false;
      const running = adminCall(0, 'POST', '/accounts/slow/keys', key, { label: 'once' }).finally(() => (answered = true));
      // Asked on the blocker's own connection: each statement of its transaction sees what others have committed since.
      const claimed = async () => (await blocker.query('SELECT count(*)::int AS n FROM admin_idempotency_keys WHERE key = $1', [key])).rows[0].n === 1;
      while (!(await claimed())) {
        if (answered) assert.fail(`the first request was answered before it claimed its key: ${(await running).text}`);
        await sleep(20);
      }
      expectFailure(await adminCall(1, 'POST', '/accounts/slow/keys', key, { label: 'once' }), 409, 'idempotency_key_in_use');
      await blocker.query('COMMIT');
      const first = await running;
      expectData(first, 201);
      assertReplayOf(await adminCall(1, 'POST', '/accounts/slow/keys', key, { label: 'once' }), first, 'through the other instance');
      assertReplayOf(await adminCall(0, 'POST', '/accounts/slow/keys', key, { label: 'once' }), first, 'through the same instance');
      assert.equal((await keysOf('slow')).length, 1);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
  });
});
