// ETag, If-None-Match and If-Match on /user and /settings, over real server processes on SQLite and on PostgreSQL.
import assert from 'node:assert/strict';
import { call, failureMessage, type CallResult } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const postgresSkip = await postgresSkipReason();

const ENGINES = [
  { name: 'SQLite', skip: undefined, database: async () => null },
  { name: 'PostgreSQL', skip: postgresSkip, database: async (): Promise<TestDatabase | null> => createTestDatabase() },
] as const;

function etagOf(result: CallResult, what: string): string {
  const etag = result.headers.get('etag');
  assert.ok(etag !== null && /^"[^"]+"$/.test(etag), `${what} sent no strong ETag: ${[...result.headers].join('; ')}`);
  return etag;
}

function assertPreconditionFailed(result: CallResult, what: string): void {
  assert.equal(result.status, 412, `${what}: expected 412, got ${result.status}: ${result.text}`);
  assert.equal(failureMessage(result).code, 'precondition_failed', `${what}: ${result.text}`);
}

for (const engine of ENGINES) {
  const { after, before, describe, test } = requiring(engine.skip);
  describe(`conditional requests over ${engine.name}`, () => {
    let database: TestDatabase | null;
    let workspace: Workspace;
    let server: ServerProcess;

    before(async () => {
      database = await engine.database();
      workspace = createWorkspace(database === null ? {} : { DATABASE_URL: database.url });
      server = await startServer(workspace);
    });

    after(async () => {
      await server.stop();
      await database?.drop();
      workspace.cleanup();
    });

    const get = (path: string, account: Account, headers: Record<string, string> = {}) => call('GET', `${server.api}${path}`, { auth: account, headers });
    const post = (path: string, account: Account, form: Record<string, string>, headers: Record<string, string> = {}) =>
      call('POST', `${server.api}${path}`, { auth: account, form, headers });

    test('GET /user and GET /settings answer 304 to their own ETag, and 200 with a new one once the answer changes', async () => {
      const alice = await createAccount(workspace, 'alice', { name: 'Alice', timezone: 'UTC' });
      for (const [path, change] of [
        ['/user', { name: 'Alice Two' }],
        ['/settings', { timezone: 'Asia/Tokyo' }],
      ] as const) {
        const first = await get(path, alice);
        const etag = etagOf(first, `GET ${path}`);
        assert.equal(first.headers.get('cache-control'), 'no-store', `GET ${path}: account data is kept by no cache but the client's`);
        const unchanged = await get(path, alice, { 'if-none-match': etag });
        assert.equal(unchanged.status, 304, `GET ${path} with its own ETag: ${unchanged.status} ${unchanged.text}`);
        assert.equal(unchanged.text, '', 'a 304 has no body');
        assert.equal(unchanged.headers.get('etag'), etag);
        assert.equal((await post(path, alice, change)).status, 200);
        const changed = await get(path, alice, { 'if-none-match': etag });
        assert.equal(changed.status, 200, `GET ${path} after a change: ${changed.status}`);
        assert.notEqual(etagOf(changed, `GET ${path} after a change`), etag, `GET ${path}: the ETag did not change with the answer`);
      }
    });

    test("the ETag names the answer's data: equal data, equal ETag, on every request", async () => {
      const bob = await createAccount(workspace, 'bob', { name: 'Bob' });
      const before = etagOf(await get('/user', bob), 'GET /user');
      assert.equal((await post('/user', bob, { name: 'Bobby' })).status, 200);
      assert.equal((await post('/user', bob, { name: 'Bob' })).status, 200);
      assert.equal(etagOf(await get('/user', bob), 'GET /user'), before, 'the same data got another ETag');
    });

    test('POST with the current ETag in If-Match writes, and answers with the next ETag', async () => {
      const carol = await createAccount(workspace, 'carol', { name: 'Carol' });
      const etag = etagOf(await get('/user', carol), 'GET /user');
      const written = await post('/user', carol, { name: 'Carol Two' }, { 'if-match': etag });
      assert.equal(written.status, 200, written.text);
      const next = etagOf(written, 'POST /user');
      assert.equal(next, etagOf(await get('/user', carol), 'GET /user'), 'POST answered another ETag than GET now gives');
      assert.equal((await post('/user', carol, { name: 'Carol Three' }, { 'if-match': next })).status, 200, 'the next ETag was refused');
    });

    test('POST with a stale If-Match is 412 precondition_failed and writes nothing', async () => {
      const dave = await createAccount(workspace, 'dave', { name: 'Dave', timezone: 'UTC' });
      const userTag = etagOf(await get('/user', dave), 'GET /user');
      const settingsTag = etagOf(await get('/settings', dave), 'GET /settings');
      // Another client changes the account after both were read.
      assert.equal((await post('/settings', dave, { timezone: 'Europe/Paris' })).status, 200);
      assertPreconditionFailed(await post('/user', dave, { name: 'Lost update' }, { 'if-match': userTag }), 'POST /user');
      assertPreconditionFailed(await post('/settings', dave, { timezone: 'Asia/Tokyo' }, { 'if-match': settingsTag }), 'POST /settings');
      const now = await get('/user', dave);
      assert.deepEqual([now.body.data.name, now.body.data.timezone], ['Dave', 'Europe/Paris'], 'a refused write was made');
    });

    test('If-Match: * writes; a weak, unknown or malformed If-Match matches nothing (412)', async () => {
      const erin = await createAccount(workspace, 'erin', { name: 'Erin' });
      const etag = etagOf(await get('/user', erin), 'GET /user');
      assert.equal((await post('/user', erin, { name: 'Erin Star' }, { 'if-match': '*' })).status, 200);
      const current = etagOf(await get('/user', erin), 'GET /user');
      assert.notEqual(current, etag);
      for (const ifMatch of [`W/${current}`, '"nope"', current.slice(1, -1), `${current} junk`]) {
        assertPreconditionFailed(await post('/user', erin, { name: 'Nope' }, { 'if-match': ifMatch }), `If-Match: ${ifMatch}`);
      }
      assert.equal((await post('/user', erin, { name: 'Listed' }, { 'if-match': `"other", ${current}` })).status, 200, 'a list naming it');
    });

    test('two clients that read the same version and write at once: exactly one writes, the others get 412', async () => {
      const frank = await createAccount(workspace, 'frank', { name: 'Frank' });
      const etag = etagOf(await get('/user', frank), 'GET /user');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) => post('/user', frank, { name: `Frank ${index}` }, { 'if-match': etag })),
      );
      const written = results.filter((result) => result.status === 200);
      assert.equal(written.length, 1, `${written.length} writes over one version: ${results.map((result) => result.status).join(', ')}`);
      for (const result of results) if (result.status !== 200) assertPreconditionFailed(result, 'a concurrent writer');
      assert.equal((await get('/user', frank)).body.data.name, written[0]!.body.data.name);
    });

    test('without If-Match, writes are as before: the last one wins', async () => {
      const grace = await createAccount(workspace, 'grace', { name: 'Grace' });
      assert.equal((await post('/user', grace, { name: 'Grace One' })).status, 200);
      assert.equal((await post('/user', grace, { name: 'Grace Two' })).status, 200);
      assert.equal((await get('/user', grace)).body.data.name, 'Grace Two');
    });
  });
}
