// Graceful close: stop accepting connections, answer late requests with 503 `shutting_down`, let open connections finish.
import type { Server as HttpServer } from 'node:http';
import { Server } from 'node:net';
import type { FastifyReply } from 'fastify';
import { HttpError } from './failures/http-error.ts';

export interface DrainOptions {
  readonly retryAfterSeconds: number;
}

/**
 * Node's `server.close()` also destroys every idle keep-alive connection at once. A client may have just sent its
 * next request on one: that request is then lost to a reset. So the listener is closed alone, every response from
 * then on carries `Connection: close` (the client will not reuse that connection), and closing waits until each
 * connection has ended: after its current response, or at the keep-alive timeout when it stays idle, which a
 * client that honours `Keep-Alive: timeout=` anticipates. Fastify's own close then finds nothing left to cut.
 */
export class Drain {
  readonly #refusalHeaders: Readonly<Record<string, string>>;
  #draining = false;

  constructor(options: DrainOptions) {
    this.#refusalHeaders = { 'Retry-After': String(options.retryAfterSeconds), Connection: 'close' };
  }

  /** A request that arrives while closing: refused, and its connection closed after the answer. */
  refusal(): HttpError | null {
    if (!this.#draining) return null;
    return new HttpError(503, 'shutting_down', 'This server is shutting down; retry, and another instance will answer.', { headers: this.#refusalHeaders });
  }

  /** Every answer sent while closing, including those to requests that arrived before, tells the client not to reuse its connection. */
  markAnswer(reply: FastifyReply): void {
    if (this.#draining) reply.header('Connection', 'close');
  }

  /** Starts draining; resolves once every connection has ended. */
  async close(server: HttpServer): Promise<void> {
    this.#draining = true;
    // net.Server's close, not http.Server's: stops accepting and calls back once every connection has ended.
    await new Promise<void>((resolve) => Server.prototype.close.call(server, () => resolve()));
  }
}
