// A node-postgres connection's socket, so a close the server never completes can be cut (bounded-close.ts).
import { once } from 'node:events';
import type { Socket } from 'node:net';
import type pg from 'pg';
import { closeWithin } from '../bounded-close.ts';

/** node-postgres keeps it on client.connection.stream, which its types do not declare. */
export function socketOf(client: pg.ClientBase): Socket | undefined {
  return (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
}

/** Resolves once the socket is closed. */
export async function socketClosed(socket: Socket): Promise<void> {
  if (!socket.destroyed) await once(socket, 'close');
}

/**
 * client.end() sends Terminate and waits for the server to close the socket, which a paused server or a silent network
 * never does, and the process waits with it: bounded, then cut.
 */
export async function endClient(client: pg.Client): Promise<void> {
  await closeWithin(
    () => client.end(),
    () => socketOf(client)?.destroy(),
  );
}
