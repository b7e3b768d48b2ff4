// A PostgreSQL restart under a running instance: 503 with Retry-After while it is down, nothing half-written, recovery on its own.
import assert from 'node:assert/strict';
import { call, failureMessage } from '../support/http.ts';
import { privatePostgres, privatePostgresSkipReason, type PrivatePostgres } from '../support/private-postgres.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';

const skip = privatePostgresSkipReason();
const { after, before, describe, test } = requiring(skip);

describe('a PostgreSQL outage', () => {
  let engine: PrivatePostgres;
  let workspace: Workspace;
  let server: ServerProcess;
  let alice: Account;

  before(async () => {
    engine = await privatePostgres();
    workspace = createWorkspace({ DATABASE_URL: engine.url, PG_CONNECT_TIMEOUT_MS: '1000' });
    server = await startServer(workspace);
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  });

  after(async () => {
    await server.stop();
    engine.cleanup();
    workspace.cleanup();
  });

  test('is answered 503 while it lasts, and service returns within five seconds of the engine coming back', async () => {
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
    const back = performance.now();
    let recovered = false;
    while (performance.now() - back < 5000) {
      if ((await call('GET', `${server.api}/user`, { auth: alice })).status === 200) {
        recovered = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const recoveryMs = performance.now() - back;
    console.log(`postgres recovery: engine restart took ${engineUpMs.toFixed(0)} ms, first 200 ${recoveryMs.toFixed(0)} ms after it answered`);
    assert.ok(recovered, 'service did not recover within five seconds of PostgreSQL coming back');

    const after = await call('GET', `${server.api}/user`, { auth: alice });
    assert.equal(after.body.data.name, 'Alice', 'a write answered 503 left nothing behind');
    assert.equal(after.body.data.timezone, 'UTC');
    // /readyz shares one check per second among its callers, so it may say not-ready for up to a second more.
    const readySince = performance.now();
    while ((await call('GET', `${server.url}/readyz`)).status !== 200) {
      assert.ok(performance.now() - readySince < 3000, '/readyz still not ready three seconds after the engine came back');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(server.child.exitCode, null, 'the server never exited');
  });
});
