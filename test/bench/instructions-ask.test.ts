// The callgrind mode's requests on one keep-alive connection: a server that resets the reused connection (as a service slowed
// down by valgrind may, closing an idle connection as the next request goes out) costs one resend, not the run.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { BENCH_CALLS } from '../../bench/calls.ts';
import { ask } from '../../bench/instructions.ts';
import type { RequestPlan } from '../../bench/load.ts';

const BODY = '{"status":"success"}';

/** Answers the first request on each connection with a keep-alive 200 and resets the connection at its second. */
async function resettingServer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let requests = 0;
    socket.on('data', () => {
      requests++;
      if (requests === 1) {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\nConnection: keep-alive\r\n\r\n${BODY}`);
      } else {
        socket.resetAndDestroy();
      }
    });
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  let made = 0;
  server.on('connection', () => made++);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v0/hello`,
    connections: () => made,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

test('a request on a reused connection that the server resets is sent again on a new one, and answered', async () => {
  const server = await resettingServer();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const call = BENCH_CALLS.find((one) => one.id === 'hello')!;
    const plan: RequestPlan = { call, url: server.url, headers: {}, answers: [BODY], rawHeaders: [] };
    await ask(agent, plan, 0);
    // The second request goes out on the first connection, which the server resets; the resend opens a second one.
    await ask(agent, plan, 1);
    assert.equal(server.connections(), 2, 'one connection for the first request, a second for the resent one');
  } finally {
    agent.destroy();
    await server.close();
  }
});
