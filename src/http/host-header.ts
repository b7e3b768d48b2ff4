// HTTP/1.1 requests must name a Host (RFC 9112 §3.2): refused with the envelope, where Node's own check answers a bare 400.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from './http-error.ts';

export interface RequireHostOptions {
  /** Protocol versions that must carry Host; HTTP/1.0 predates it. */
  readonly versions: readonly string[];
}

/** Pairs with `requireHostHeader: false` in the server options (connectionOptions), which hands the check to us. */
export const requireHost = fp(
  async function requireHost(app: FastifyInstance, options: RequireHostOptions) {
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.headers.host === undefined && options.versions.includes(request.raw.httpVersion)) {
        return done(new HttpError(400, 'malformed_request', 'An HTTP/1.1 request must carry a Host header.'));
      }
      done();
    });
  },
  { name: 'require-host' },
);
