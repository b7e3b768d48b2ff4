// Accepts POST bodies as forms (what curl -d sends) or JSON objects; every other media type gets 415.
import formBody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { parseForm } from './form-encoding.ts';

export const requestBodies = fp(
  async function requestBodies(app: FastifyInstance) {
    // Fastify accepts text/plain by default; this API does not, so a wrong media type is 415, not a confusing 400.
    app.removeContentTypeParser('text/plain');
    await app.register(formBody, { parser: parseForm });
    // A POST with no body at all reads as an empty form, so the answer names the missing parameter.
    app.addHook('preValidation', async (request) => {
      if (request.body === undefined && request.routeOptions.schema?.body !== undefined) request.body = {};
    });
  },
  { name: 'request-bodies' },
);
