// GET /openapi.json, on either port: the document @fastify/swagger builds from that port's routes' schemas.
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { precompress, sendPrecompressed, type Precompressed } from './compression.ts';

/** The route as a plugin; `config` says who may read the document (everyone, on both ports). */
export function openApiDocumentRoute(config: FastifyContextConfig) {
  return async function openApiDocument(app: FastifyInstance) {
    // Fixed once the routes are known: serialised, compressed and given a validator on first request, then only sent.
    let document: Precompressed | undefined;
    app.get('/openapi.json', {
      config,
      schema: { hide: true },
      handler: async (request, reply) => {
        document ??= precompress(Buffer.from(JSON.stringify(app.swagger())));
        // Clients and caches may keep it, revalidating with the ETag (a 304) rather than fetching it again.
        reply.header('Cache-Control', 'no-cache');
        return sendPrecompressed(request, reply, document, 'application/json; charset=utf-8');
      },
    });
  };
}
