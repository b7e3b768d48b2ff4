// Answers every failure (thrown errors, unknown paths, wrong methods) with the failure envelope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isDomainError } from '../../domain/errors.ts';
import { failure } from '../wire/envelope.ts';
import { HttpError } from './http-error.ts';
import { mapError } from './map-error.ts';

/** What a failure answer said, kept on the reply for the response's log line and metrics. */
export interface AnsweredFailure {
  readonly code: string;
  /** A dependency (database, Redis) was unavailable or the server failed: counted in store_errors_total. */
  readonly fault: boolean;
}

declare module 'fastify' {
  interface FastifyReply {
    failure: AnsweredFailure | null;
  }
  interface FastifyInstance {
    /** The 404 or 405 for a request no route matches, for a hook that must answer it before the body is read. */
    unroutedFailure(request: FastifyRequest): HttpError;
  }
}

export interface FailureResponsesOptions {
  /** The version prefix this server serves, e.g. `/api/v0`, for a helpful answer to `/api/v1/...`. */
  readonly apiPrefix: string;
  /** Where a 404 says the endpoints are listed (default: the prefix's openapi.json and /docs). */
  readonly endpointsListedAt?: string;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function isFault(error: unknown, unexpected: boolean): boolean {
  if (error instanceof HttpError) return false;
  if (isDomainError(error)) return error.kind === 'unavailable' || error.kind === 'internal';
  return unexpected;
}

/** What an engine said, for a refusal's warning: a message, never a stack. */
function causeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error ? cause.message : undefined;
}

export function sendFailure(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = mapError(error, request.body);
  if (mapped.unexpected) request.log.error({ err: error }, 'request failed');
  else if (mapped.statusCode >= 500) request.log.warn({ code: mapped.messages[0]?.code, cause: causeOf(error) }, 'request refused');
  reply.failure = { code: mapped.messages[0]?.code ?? 'unknown', fault: isFault(error, mapped.unexpected) };
  return reply
    .code(mapped.statusCode)
    // Also here, not only in an onRequest hook: Fastify runs no hooks for a URL its router cannot decode.
    .header('X-Request-Id', request.id)
    .headers(mapped.headers)
    .type('application/json; charset=utf-8')
    .send(failure(mapped.statusCode, mapped.messages));
}

export const failureResponses = fp(
  async function failureResponses(app: FastifyInstance, options: FailureResponsesOptions) {
    // Methods per path, collected as routes are added, so a wrong method gets 405 with Allow instead of 404.
    const methodsByPath = new Map<string, Set<string>>();
    // Paths with parameters (/accounts/:username), matched segment by segment; the admin API has them, the public one none.
    const patterns: { readonly pattern: RegExp; readonly path: string }[] = [];
    app.decorateReply('failure', null);
    app.addHook('onRoute', (route) => {
      const path = pathOf(route.url ?? route.path);
      if (path.includes(':') && !patterns.some((each) => each.path === path)) {
        patterns.push({ path, pattern: new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}$`) });
      }
      const methods = methodsByPath.get(path) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method);
      methodsByPath.set(path, methods);
    });

    app.setErrorHandler((error, request, reply) => sendFailure(error, request, reply));

    app.decorate('unroutedFailure', (request: FastifyRequest): HttpError => {
      const path = pathOf(request.url);
      const methods = methodsByPath.get(path) ?? methodsByPath.get(patterns.find((each) => each.pattern.test(path))?.path ?? '');
      if (methods !== undefined) {
        const allow = [...methods].sort().join(', ');
        return new HttpError(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; use ${allow}.`, { headers: { Allow: allow } });
      }
      const version = /^\/api\/([^/]+)/.exec(path)?.[1];
      const message =
        version !== undefined && `/api/${version}` !== options.apiPrefix
          ? `API version '${version}' does not exist; this server serves ${options.apiPrefix}.`
          : `Nothing is at ${path}; the endpoints are listed ${options.endpointsListedAt ?? `in ${options.apiPrefix}/openapi.json and at /docs`}.`;
      return new HttpError(404, 'not_found', message);
    });

    app.setNotFoundHandler((request, reply) => sendFailure(app.unroutedFailure(request), request, reply));
  },
  { name: 'failure-responses' },
);
