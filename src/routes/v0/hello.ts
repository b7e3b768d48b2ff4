// GET and POST /hello: public endpoints for testing a client's GET and POST calls (and its credentials).
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/wire/envelope.ts';
import { BODY_MEDIA_TYPES, bodyOf, failuresFor, OPTIONAL_SECURITY, successOf } from '../../http/wire/schemas.ts';

const ANONYMOUS_NAME = 'World';

export async function helloRoutes(app: FastifyInstance) {
  app.get('/hello', {
    config: { access: 'public' },
    schema: {
      operationId: 'hello',
      summary: 'Say hello (test a GET call)',
      description: 'Answers with the display name of the caller when credentials are sent (Premium or not), else "World". Wrong credentials answer 401, so a client can test them here.',
      tags: ['Test'],
      security: OPTIONAL_SECURITY,
      response: { 200: successOf('HelloEnvelope', 'The display name of the caller, or "World"'), ...failuresFor({ premium: false, body: false }) },
    },
    // Synchronous, as every read here: an async handler costs a promise and a microtask turn per answer.
    handler: (request) => success({ name: request.caller?.name ?? ANONYMOUS_NAME }),
  });

  app.post<{ Body: { name: string } }>('/hello', {
    config: { access: 'public' },
    schema: {
      operationId: 'sayHello',
      summary: 'Echo a name (test a POST call)',
      description: 'Answers with the submitted name exactly as sent.',
      tags: ['Test'],
      security: OPTIONAL_SECURITY,
      consumes: BODY_MEDIA_TYPES,
      body: bodyOf({ name: { description: 'A name to be echoed back, exactly as sent', example: 'Ada Lovelace' } }),
      response: { 200: successOf('HelloEnvelope', 'The name, exactly as sent'), ...failuresFor({ premium: false, body: true }) },
    },
    handler: async (request) => success({ name: request.body.name }),
  });
}
