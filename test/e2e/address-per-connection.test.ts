// Protects the per-connection cache of budget address keys (rate-limits.ts, addressIsConnection) on one keep-alive
// connection: without TRUST_PROXY X-Forwarded-For buys no fresh budget; with TRUST_PROXY=loopback each forwarded address
// has its own, request by request, on the same socket.
//
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, describe, test } from 'node:test';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

function hello(agent: Agent, url: string, forwardedFor: string): Promise<{ status: number; port: number }> {
  return new Promise((done, fail) => {
    const req = request(`${url}/api/v0/hello`, { agent, headers: { 'x-forwarded-for': forwardedFor } }, (response) => {
      response.resume();
      response.on('end', () => done({ status: response.statusCode!, port: req.socket!.localPort! }));
    });
    req.on('error', fail);
    req.end();
  });
}

for (const trustProxy of [undefined, 'loopback']) {
  describe(`TRUST_PROXY=${trustProxy ?? '(unset)'}`, () => {
    let workspace: Workspace;
    let server: ServerProcess;
    after(async () => {
      await server?.stop();
      workspace?.cleanup();
    });

    test('on one keep-alive connection', async () => {
      workspace = createWorkspace({ RATE_LIMIT_PER_ADDRESS: '2', ...(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy }) });
      server = await startServer(workspace);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const answers = [];
        for (const address of ['198.51.100.1', '198.51.100.1', '198.51.100.1', '198.51.100.2', '198.51.100.3']) {
          answers.push(await hello(agent, server.url, address));
        }
        assert.equal(new Set(answers.map((answer) => answer.port)).size, 1, 'the requests did not share one connection');
        const statuses = answers.map((answer) => answer.status);
        if (trustProxy === undefined) assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
        else assert.deepEqual(statuses, [200, 200, 429, 200, 200]);
      } finally {
        agent.destroy();
      }
    });
  });
}
