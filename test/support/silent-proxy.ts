// Test support: a TCP proxy to a real engine that goes silent once the client says goodbye (Redis QUIT, PostgreSQL
// Terminate): the goodbye is never delivered and the sockets stay open, as a paused or cut-off engine would leave them.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface SilentProxy {
  /** host:port to give the client instead of the engine's. */
  readonly port: number;
  /** How many goodbyes were swallowed: the test's proof that the client did try to close. */
  readonly swallowed: () => number;

  close(): Promise<void>;
}

/** `isGoodbye` sees each chunk the client sends; from the first that matches, nothing more passes either way. */
export async function silentProxy(target: { host: string; port: number }, isGoodbye: (chunk: Buffer) => boolean): Promise<SilentProxy> {
  const sockets = new Set<Socket>();
  let swallowed = 0;
  // allowHalfOpen: a client's half-close (its FIN after QUIT or Terminate) is not answered with ours, as a silent peer would not.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const engine = connect({ ...target, allowHalfOpen: true });
    for (const socket of [client, engine]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    let silent = false;
    client.on('data', (chunk: Buffer) => {
      if (!silent && isGoodbye(chunk)) {
        silent = true;
        swallowed += 1;
      }
      if (!silent) engine.write(chunk);
    });
    engine.on('data', (chunk: Buffer) => {
      if (!silent) client.write(chunk);
    });
    // Until silent, an end on either side is passed on; after, the client is left waiting.
    client.on('end', () => {
      if (!silent) engine.end();
    });
    engine.on('end', () => {
      if (!silent) client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    swallowed: () => swallowed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** RESP's QUIT, in whatever case the client spells it. */
export const isRedisQuit = (chunk: Buffer): boolean => /\r\nquit\r\n/i.test(chunk.toString('latin1'));

/** PostgreSQL's Terminate message: 'X' and a length of 4. */
export const isPostgresTerminate = (chunk: Buffer): boolean => chunk.length >= 5 && chunk[0] === 0x58 && chunk.readInt32BE(1) === 4;
