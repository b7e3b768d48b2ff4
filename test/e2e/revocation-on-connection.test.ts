// Protects that a key answered from SQLite's credential cache (the synchronous path) is refused on the very next request
// of the same keep-alive connection once another process (the CLI) revokes or rolls it with --overlap 0.
//
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import { basic } from '../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
});
after(async () => {
  await server?.stop();
  workspace?.cleanup();
});

function getUser(agent: Agent, authorization: string): Promise<{ status: number; code: string | undefined; port: number }> {
  return new Promise((done, fail) => {
    const req = request(`${server.api}/user`, { agent, headers: { authorization } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode!, code: JSON.parse(text).messages?.[0]?.code, port: req.socket!.localPort! }));
    });
    req.on('error', fail);
    req.end();
  });
}

for (const change of ['revoke', 'roll --overlap 0'] as const) {
  test(`keys ${change} by the CLI holds from the next request on the same connection`, async () => {
    const account = await createAccount(workspace, change === 'revoke' ? 'revokee' : 'rollee');
    const keyId = account.key.slice('aapi_live_'.length, 'aapi_live_'.length + 12);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const auth = basic(account.username, account.key);
      const first = await getUser(agent, auth);
      const cached = await getUser(agent, auth); // now answered from the cache, synchronously
      assert.deepEqual([first.status, cached.status], [200, 200]);
      await cliOk(workspace, change === 'revoke' ? ['keys', 'revoke', keyId] : ['keys', 'roll', keyId, '--overlap', '0']);
      const next = await getUser(agent, auth);
      assert.equal(next.port, first.port, 'not the same connection');
      assert.equal(next.status, 401);
      assert.equal(next.code, change === 'revoke' ? 'key_revoked' : 'key_expired');
    } finally {
      agent.destroy();
    }
  });
}
