// Graceful close: stop accepting connections, answer late requests with 503 `shutting_down`, let open connections finish.
import { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from './http-error.ts';

export interface DrainOnCloseOptions {
  readonly retryAfterSeconds: number;
}

/**
 * Node's `server.close()` also destroys every idle keep-alive connection at once. A client may have just sent its
 * next request on one: that request is then lost to a reset. So the listener is closed alone, every response from
 * then on carries `Connection: close` (the client will not reuse that connection), and closing waits until each
 * connection has ended: after its current response, or at the keep-alive timeout when it stays idle, which a
 * client that honours `Keep-Alive: timeout=` anticipates. Fastify's own close then finds nothing left to cut.
 */
export const drainOnClose = fp(
  async function drainOnClose(app: FastifyInstance, options: DrainOnCloseOptions) {
    let draining = false;

    app.addHook('onRequest', (_request, _reply, done) => {
      if (!draining) return done();
      done(
        new HttpError(503, 'shutting_down', 'This server is shutting down; retry, and another instance will answer.', {
          headers: { 'Retry-After': String(options.retryAfterSeconds), Connection: 'close' },
        }),
      );
    });

    app.addHook('onSend', (_request, reply, payload, done) => {
      if (draining) reply.header('Connection', 'close');
      done(null, payload);
    });

    app.addHook('preClose', async () => {
      draining = true;
      // net.Server's close, not http.Server's: stops accepting and calls back once every connection has ended.
      await new Promise<void>((resolve) => Server.prototype.close.call(app.server, () => resolve()));
    });
  },
  { name: 'drain-on-close' },
);
