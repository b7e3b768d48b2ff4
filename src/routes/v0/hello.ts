// GET and POST /hello: public endpoints for testing a client's GET and POST calls (and its credentials).
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/envelope.ts';
import { bodyOf, helloSchema, successOf } from '../../http/schemas.ts';

const ANONYMOUS_NAME = 'World';

export async function helloRoutes(app: FastifyInstance) {
  app.get('/hello', {
    config: { access: 'public' },
    schema: { response: { 200: successOf(helloSchema) } },
    handler: async (request) => success({ name: request.caller?.name ?? ANONYMOUS_NAME }),
  });

  app.post<{ Body: { name: string } }>('/hello', {
    config: { access: 'public' },
    schema: {
      body: bodyOf({ name: { description: 'A name to be echoed back, exactly as sent' } }),
      response: { 200: successOf(helloSchema) },
    },
    handler: async (request) => success({ name: request.body.name }),
  });
}
