// The shortest path a newcomer takes: create a Premium account with the CLI, then call every kind of endpoint.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

test('an account created with the CLI reads itself through GET /user', async () => {
  const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  const result = await call('GET', `${server.api}/user`, { auth: alice });
  assert.equal(result.status, 200);
  assert.deepEqual(result.body, {
    status: 'success',
    messages: [],
    meta: {},
    data: { user_id: 1, username: 'alice', name: 'Alice', timezone: 'UTC' },
  });
});
