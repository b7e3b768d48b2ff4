// GET /openapi.json: the OpenAPI document of this API, generated from the routes' schemas.
import type { FastifyInstance } from 'fastify';
import { precompress, sendPrecompressed, type Precompressed } from '../../http/wire/compression.ts';

export async function openApiRoutes(app: FastifyInstance) {
  // Fixed once the routes are known: serialised, compressed and given a validator on first request, then only sent.
  let document: Precompressed | undefined;
  app.get('/openapi.json', {
    config: { access: 'public' },
    schema: { hide: true },
    handler: async (request, reply) => {
      document ??= precompress(Buffer.from(JSON.stringify(app.swagger())));
      // Clients and caches may keep it, revalidating with the ETag (a 304) rather than fetching it again.
      reply.header('Cache-Control', 'no-cache');
      return sendPrecompressed(request, reply, document, 'application/json; charset=utf-8');
    },
  });
}
