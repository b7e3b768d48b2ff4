// CORS (@fastify/cors) for an allow-list of exact origins; with none, the plugin is not even registered.
import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface CorsOptions {
  /** Exact origins (scheme://host[:port]) allowed to call the API from a browser, with credentials. */
  readonly origins: readonly string[];
}

const ALLOWED = {
  credentials: true,
  methods: ['GET', 'POST'], // HEAD is always allowed (a CORS-safelisted method)
  allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'If-Match', 'If-None-Match', 'Idempotency-Key'],
  exposedHeaders: [
    'X-Request-Id',
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'Retry-After',
    'ETag',
    'Deprecation',
    'Link',
    'API-Key-Expires',
    'Idempotent-Replayed',
  ],
  maxAge: 600,
} satisfies FastifyCorsOptions;

export const cors = fp(
  async function cors(app: FastifyInstance, options: CorsOptions) {
    if (options.origins.length === 0) return;
    const allowed = new Set(options.origins);
    // Decided per request so that another origin, and an OPTIONS that is no preflight, get no CORS header at all and
    // answer as without CORS (405 with Allow); a static list would still send Allow-Credentials and the preflight to anyone.
    const decide = (request: FastifyRequest): FastifyCorsOptions => {
      const origin = request.headers.origin;
      if (origin === undefined || !allowed.has(origin)) return { origin: false };
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] === undefined) return { origin: false };
      return { ...ALLOWED, origin };
    };
    await app.register(fastifyCors, {
      delegator: (request, callback) => callback(null, decide(request as FastifyRequest)),
    });
  },
  { name: 'cors' },
);
