// GET /openapi.json: the OpenAPI document of this API, generated from the routes' schemas.
import type { FastifyInstance } from 'fastify';

export async function openApiRoutes(app: FastifyInstance) {
  app.get('/openapi.json', {
    config: { access: 'public' },
    schema: { hide: true },
    handler: async () => app.swagger(),
  });
}
