// Accepts POST bodies as forms (what curl -d sends) or JSON objects; every other media type gets 415.
import formBody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ParameterSettings } from '../config.ts';
import { parseForm } from './form-encoding.ts';
import { checkParameterLimits } from './parameter-limits.ts';

export interface RequestBodiesOptions {
  readonly parameters: ParameterSettings;
}

export const requestBodies = fp(
  async function requestBodies(app: FastifyInstance, options: RequestBodiesOptions) {
    // Fastify accepts text/plain by default; this API does not, so a wrong media type is 415, not a confusing 400.
    app.removeContentTypeParser('text/plain');
    await app.register(formBody, { parser: parseForm });
    app.addHook('preValidation', async (request) => {
      // A POST with no body at all reads as an empty form, so the answer names the missing parameter.
      if (request.body === undefined && request.routeOptions.schema?.body !== undefined) request.body = {};
      // Before validation, so an oversized body is refused for its size, whatever its parameters are named.
      checkParameterLimits(request.body, options.parameters);
    });
  },
  { name: 'request-bodies' },
);
