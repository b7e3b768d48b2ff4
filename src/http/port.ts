// One Fastify factory for both ports, public and admin: the same limits, logging, failure answers, bodies, budgets and
// per-request pipeline (pipeline.ts). A port says only what differs: its prefix, its authentication, its routes' access rule.
import Fastify, { type FastifyContextConfig, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { answerClientErrors } from './failures/client-errors.ts';
import { failureResponses, sendFailure } from './failures/failure-responses.ts';
import { connectionOptions } from './limits/connection-limits.ts';
import { rateLimits, type RateLimitsOptions } from './limits/rate-limits.ts';
import { recordAnswer } from './observability/answer-records.ts';
import type { Metrics } from './observability/metrics.ts';
import { requestIdFor } from './observability/request-id.ts';
import { loggingOptions } from './observability/request-log.ts';
import { factsOf, pipeline, type PipelineOptions } from './pipeline.ts';
import { requestBodies } from './wire/request-bodies.ts';
import { everyAnswerHeaders } from './wire/security-headers.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes the log lines still buffered, synchronously (request-log.ts): before an exit, and after a fatal error. */
    flushLogs(): void;
  }
}

export interface PortOptions {
  readonly config: Config;
  /** This port's metrics (the admin port's are labelled port="admin"). */
  readonly metrics: Metrics;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: Redis | null;
  /** The versioned prefix of the port's API, e.g. `/api/v0`: a route under it must declare its access and document its answers. */
  readonly prefix: string;
  /** Where a 404 says the endpoints are listed (default: the prefix's openapi.json and /docs). */
  readonly endpointsListedAt?: string;
  readonly rateLimits: Pick<RateLimitsOptions, 'settings' | 'keyPrefix' | 'addressIsConnection' | 'keyCharge'>;
  readonly authentication: PipelineOptions['authentication'];
  /** The name of the route config key holding the access rule (`access`, `adminAccess`), for the start-up check. */
  readonly accessRule: keyof FastifyContextConfig & ('access' | 'adminAccess');
  readonly maxEventLoopDelayMs: number;
  readonly alwaysServed: readonly string[];
  readonly corsOrigins: readonly string[];
  readonly tracing: Tracing | null;
  /** ajv's allowUnionTypes, for a body field that is a boolean in JSON and a string in a form (the admin port's premium). */
  readonly allowUnionTypes?: boolean;
}

/**
 * A port with every per-request step registered; its routes are registered by the caller after this returns. Registration
 * order is the order of the hooks on every request, so it is fixed here, once.
 */
export function buildPort(options: PortOptions): FastifyInstance {
  const { config, metrics } = options;
  // Built once, set by the pipeline on every answer that runs hooks, and by hand on those that do not (a URL the router
  // cannot decode, raw HTTP that never became a request).
  const answerHeaders = everyAnswerHeaders(
    { hstsMaxAgeSeconds: config.hstsMaxAgeSeconds },
    config.environment === 'sandbox' ? { 'X-Environment': 'sandbox' } : {},
  );
  // One line per answer (answer-records.ts) instead of Fastify's two, which would also log the query string.
  const { fastify: logging, flush: flushLogs, lazyRequestLoggers } = loggingOptions(config.logLevel);
  const app = Fastify({
    ...logging,
    requestIdHeader: false,
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    bodyLimit: config.bodyLimitBytes,
    // X-Forwarded-For is believed only from proxies the operator named; anyone else could forge it.
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true },
    // Strict validation: no type coercion, no silently dropped parameters; a wrong body is the caller's to fix.
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        allErrors: false,
        ...(options.allowUnionTypes === true ? { allowUnionTypes: true } : {}),
      },
    },
    frameworkErrors: (error, request, reply) => {
      reply.headers(answerHeaders);
      reply.raw.once('close', () => recordAnswer(request, reply, factsOf(request, metrics), metrics));
      sendFailure(error, request, reply);
    },
    ...connectionOptions(config.connections),
    // Raw HTTP that never became a request (garbage, huge headers, too slow) is answered with the envelope too.
    clientErrorHandler: answerClientErrors({ lingerMs: 1000, headers: answerHeaders }),
    // Requests arriving while closing get our 503 envelope (drainOnClose), not Fastify's own body.
    return503OnClosing: false,
  });
  // Node takes this only as a property: connections past it are closed as soon as they are accepted.
  app.server.maxConnections = config.connections.maxConnections;
  lazyRequestLoggers(app.log);

  app.decorate('flushLogs', flushLogs);
  // Lines still buffered are written before the process goes (serve.ts also flushes on exit and on a fatal error).
  app.addHook('onClose', (_app, done) => {
    flushLogs();
    done();
  });

  app.register(failureResponses, {
    apiPrefix: options.prefix,
    ...(options.endpointsListedAt === undefined ? {} : { endpointsListedAt: options.endpointsListedAt }),
  });
  app.register(requestBodies, { parameters: config.parameters });
  app.register(rateLimits, {
    settings: options.rateLimits.settings,
    redis: options.redis,
    keyPrefix: options.rateLimits.keyPrefix,
    onRejected: (budget) => metrics.rateLimited(budget),
    ...(options.rateLimits.addressIsConnection === undefined ? {} : { addressIsConnection: options.rateLimits.addressIsConnection }),
    ...(options.rateLimits.keyCharge === undefined ? {} : { keyCharge: options.rateLimits.keyCharge }),
  });
  // Every per-request step, in order: src/http/pipeline.ts. Before any route is added, so that every route gets its facts.
  const { accessRule } = options;
  app.register(pipeline, {
    answerHeaders,
    metrics,
    authentication: options.authentication,
    accessOf: (routeConfig) => routeConfig?.[accessRule],
    maxEventLoopDelayMs: options.maxEventLoopDelayMs,
    alwaysServed: options.alwaysServed,
    hostRequiredFor: ['1.1'],
    corsOrigins: options.corsOrigins,
    tracing: options.tracing,
  });

  // A route that forgets its access rule fails at start rather than opening silently; likewise every API route documents its
  // answers, so the OpenAPI document generated from these schemas cannot drift.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(options.prefix)) return;
    if (route.config?.[accessRule] === undefined) throw new Error(`Route ${route.method} ${route.url} declares no access rule (config.${accessRule}).`);
    const documented = route.schema?.hide === true || (route.schema?.summary !== undefined && route.schema.response !== undefined);
    if (!documented) throw new Error(`Route ${route.method} ${route.url} has no summary and response schema for the OpenAPI document.`);
  });
  return app;
}

/**
 * Fastify's trustProxy for the operator's TRUST_PROXY, on every port. A hop count trusts the nearest N hops whoever they are
 * (Fastify itself now refuses to read a bare number, because a client that reaches the server directly can then choose its
 * address); operators who give one are told so in docs/operations.md (Trusted proxies).
 */
export function fastifyTrustProxy(trusted: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trusted === 'number') return (_address, hop) => hop < trusted;
  return trusted === false ? false : [...trusted];
}
