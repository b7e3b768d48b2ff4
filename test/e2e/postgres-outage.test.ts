// A PostgreSQL restart under a running instance: 503 with Retry-After while it is down, nothing half-written, recovery on its own.
import assert from 'node:assert/strict';
import { eventually } from '../support/eventually.ts';
import { call, failureMessage } from '../support/http.ts';
import { privatePostgres, privatePostgresSkipReason, type PrivatePostgres } from '../support/private-postgres.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';

const skip = privatePostgresSkipReason();
/** The server's pool size (PG_POOL_MAX, set below): how many dead connections it can hold when the engine comes back. */
const POOL_MAX = 10;
const { after, before, describe, test } = requiring(skip);

describe('a PostgreSQL outage', () => {
  let engine: PrivatePostgres;
  let workspace: Workspace;
  let server: ServerProcess;
  let alice: Account;

  before(async () => {
    engine = await privatePostgres();
    workspace = createWorkspace({ DATABASE_URL: engine.url, PG_CONNECT_TIMEOUT_MS: '1000', PG_POOL_MAX: String(POOL_MAX) });
    server = await startServer(workspace);
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  });

  after(async () => {
    await server.stop();
    engine.cleanup();
    workspace.cleanup();
  });

  test('is answered 503 while it lasts, and service returns on its own once the engine is back', async () => {
    assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200);
    engine.stop();

    for (const [method, path, form] of [
      ['GET', '/user', undefined],
      ['POST', '/user', { name: 'Written during the outage' }],
      ['POST', '/settings', { timezone: 'Asia/Tokyo' }],
    ] as const) {
      const down = await call(method, `${server.api}${path}`, { auth: alice, ...(form === undefined ? {} : { form }) });
      assert.equal(down.status, 503, `${method} ${path} during the outage: ${down.text}`);
      assert.equal(down.body.status, 'error');
      assert.equal(failureMessage(down).code, 'store_unavailable');
      assert.ok(Number(down.headers.get('retry-after')) > 0, 'a 503 says when to retry');
    }
    assert.equal((await call('GET', `${server.api}/hello`)).status, 200, '/hello without credentials needs no database');
    assert.equal((await call('GET', `${server.url}/healthz`)).status, 200);
    assert.equal((await call('GET', `${server.url}/readyz`)).status, 503);

    const restartedAt = performance.now();
    engine.start();
    const engineUpMs = performance.now() - restartedAt;
    // Counted, not timed: the store goes straight to the engine on every call (no back-off once connected), so each failure
    // after the engine answers can only be a dead pooled connection being dropped, at most PG_POOL_MAX of them. A back-off
    // or a store that needs a restart fails many more calls; a loaded machine only makes each one slower.
    const back = performance.now();
    let failures = 0;
    await eventually(
      'the first 200 after PostgreSQL came back',
      async () => (await call('GET', `${server.api}/user`, { auth: alice })).status,
      (status) => status === 200 || (failures++, false),
    );
    console.log(`postgres recovery: engine restart took ${engineUpMs.toFixed(0)} ms, first 200 ${(performance.now() - back).toFixed(0)} ms after it answered`);
    assert.ok(failures <= POOL_MAX, `${failures} requests failed after PostgreSQL came back, more than the pool's ${POOL_MAX} connections: it did not recover on its own`);

    const after = await call('GET', `${server.api}/user`, { auth: alice });
    assert.equal(after.body.data.name, 'Alice', 'a write answered 503 left nothing behind');
    assert.equal(after.body.data.timezone, 'UTC');
    // /readyz shares one check per second among its callers, so it may say not-ready a while longer; that it turns ready
    // is the point, not how soon (the wait's bound is a hang detector).
    await eventually('/readyz ready again after the engine came back', async () => (await call('GET', `${server.url}/readyz`)).status, (status) => status === 200, { everyMs: 100 });
    assert.equal(server.child.exitCode, null, 'the server never exited');
  });
});
