// Test support: a TCP relay in front of Redis that counts the commands its clients send, so a test can count one process's
// round trips without MONITOR and without the other clients of a shared Redis.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface RedisCommandCounter {
  /** redis://127.0.0.1:<port> of the relay. */
  readonly url: string;
  /** Commands (RESP arrays) sent through the relay so far. */
  commands(): number;
  /** Chunks the relay read from its clients: one per write the client made, or fewer (loopback may merge two). */
  reads(): number;
  close(): Promise<void>;
}

/** Counts complete top-level RESP arrays in a client's stream (ioredis sends every command as one). */
function commandCounter(onCommand: () => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  // Where we are in the current command: bulk strings left to read, and the bytes of the one being read.
  let left = 0;
  let bulkBytes = -1;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (bulkBytes >= 0) {
        if (pending.length < bulkBytes + 2) return;
        pending = pending.subarray(bulkBytes + 2);
        bulkBytes = -1;
        if (--left === 0) onCommand();
        continue;
      }
      const end = pending.indexOf('\r\n');
      if (end === -1) return;
      const line = pending.subarray(0, end).toString();
      pending = pending.subarray(end + 2);
      if (line.startsWith('*')) {
        left = Number(line.slice(1));
        if (left <= 0) onCommand();
      } else if (line.startsWith('$')) {
        bulkBytes = Number(line.slice(1));
      } else {
        onCommand(); // an inline command
      }
    }
  };
}

export async function countRedisCommands(target: string): Promise<RedisCommandCounter> {
  const { hostname, port } = new URL(target);
  let commands = 0;
  let reads = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port || 6379), hostname);
    sockets.add(client).add(upstream);
    const count = commandCounter(() => commands++);
    client.on('data', (chunk: Buffer) => {
      reads += 1;
      count(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const relayPort = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${relayPort}`,
    commands: () => commands,
    reads: () => reads,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
