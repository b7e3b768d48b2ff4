// Accepts POST bodies as forms (what curl -d sends) or JSON objects; every other media type gets 415.
import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { ParameterSettings } from '../../config.ts';
import { parseForm } from './form-encoding.ts';
import { checkParameterLimits } from './parameter-limits.ts';
import { HttpError } from '../failures/http-error.ts';
import { unknownParameter } from '../failures/map-error.ts';

const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface RequestBodiesOptions {
  readonly parameters: ParameterSettings;
}

function emptyBodyAsEmptyForm(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.body === undefined) request.body = {};
  done();
}

/**
 * A misspelt parameter (`timezon=UTC`) is reported as the word that was sent, not as the one then missing: schema validation
 * would stop at the missing required parameter first. The schema still refuses unknown parameters on its own.
 */
function unknownBeforeMissing(allowed: ReadonlySet<string>) {
  return function unknownParameters(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const body = request.body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      for (const name in body) {
        if (!allowed.has(name)) return done(new HttpError(400, 'unknown_parameter', unknownParameter(name).message, { field: name }));
      }
    }
    done();
  };
}

export const requestBodies = fp(
  async function requestBodies(app: FastifyInstance, options: RequestBodiesOptions) {
    // Fastify accepts text/plain by default; this API does not, so a wrong media type is 415, not a confusing 400.
    app.removeContentTypeParser('text/plain');
    await app.register(formBody, { parser: parseForm });
    function limitParameters(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
      try {
        checkParameterLimits(request.body, options.parameters);
      } catch (error) {
        return done(error as Error);
      }
      done();
    }
    // Added to each route that can take a body when it is declared, rather than as hooks every request (every GET) runs:
    // first the body's size, so an oversized body is refused for its size whatever its parameters are named; then a POST
    // with no body at all reads as an empty form, so the answer names the missing parameter.
    app.addHook('onRoute', (route) => {
      const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
      const schema = route.schema?.body as { properties?: Record<string, unknown> } | undefined;
      if (schema !== undefined) {
        const properties = schema.properties ?? {};
        route.preValidation = [limitParameters, emptyBodyAsEmptyForm, unknownBeforeMissing(new Set(Object.keys(properties))), ...own];
      } else if ([route.method].flat().some((method) => !BODYLESS_METHODS.has(method))) {
        route.preValidation = [limitParameters, ...own];
      }
    });
  },
  { name: 'request-bodies' },
);
