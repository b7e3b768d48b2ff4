// One Fastify factory for both ports: the same limits, logging, failures, bodies, budgets and pipeline (pipeline.ts).
// A port says only what differs: its prefix, its authentication, its routes' access rule.
import Fastify, { type FastifyContextConfig, type FastifyInstance } from 'fastify';
import type { RedisClient } from '../store/redis-client.ts';
import type { Config } from '../config.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { answerClientErrors } from './failures/client-errors.ts';
import { failureResponses, sendFailure } from './failures/failure-responses.ts';
import { connectionOptions } from './limits/connection-limits.ts';
import { rateLimits, type RateLimitsOptions } from './limits/rate-limits.ts';
import { recordAnswer } from './observability/answer-records.ts';
import type { KeyUsageCounter } from './observability/key-usage.ts';
import type { Metrics } from './observability/metrics.ts';
import { requestIdFor } from './observability/request-id.ts';
import { loggingOptions } from './observability/request-log.ts';
import { factsOf, pipeline, type PipelineOptions } from './pipeline.ts';
import { requestBodies } from './wire/request-bodies.ts';
import { everyAnswerHeaders } from './wire/security-headers.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Synchronously (request-log.ts): before an exit, and after a fatal error. */
    flushLogs(): void;
  }
}

export interface PortOptions {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly redis: RedisClient | null;
  /** E.g. `/api/v0`: a route under it must declare its access and document its answers. */
  readonly prefix: string;
  readonly endpointsListedAt?: string;
  readonly rateLimits: Pick<RateLimitsOptions, 'settings' | 'keyPrefix' | 'addressIsConnection' | 'keyCharge'>;
  readonly authentication: PipelineOptions['authentication'];
  readonly accessRule: keyof FastifyContextConfig & ('access' | 'adminAccess');
  readonly maxEventLoopDelayMs: number;
  readonly alwaysServed: readonly string[];
  readonly corsOrigins: readonly string[];
  readonly tracing: Tracing | null;
  /** Counts each answer to a proven API key (the public port only); null or absent: not counted. */
  readonly keyUsage?: KeyUsageCounter | null;
  /** For a field boolean in JSON and a string in a form (the admin port's premium). */
  readonly allowUnionTypes?: boolean;
}

/** Registration order is the hooks' order on every request, so it is fixed here; the caller adds routes after. */
export function buildPort(options: PortOptions): FastifyInstance {
  const { config, metrics } = options;
  // Set by the pipeline, and by hand where no hooks run (an undecodable URL, raw HTTP that never became a request).
  const answerHeaders = everyAnswerHeaders(
    { hstsMaxAgeSeconds: config.hstsMaxAgeSeconds },
    config.environment === 'sandbox' ? { 'X-Environment': 'sandbox' } : {},
  );
  // One line per answer instead of Fastify's two, which would also log the query string.
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
    clientErrorHandler: answerClientErrors({ lingerMs: 1000, headers: answerHeaders }),
  // While closing: our 503 envelope (drainOnClose), not Fastify's own body.
    return503OnClosing: false,
  });
  // Node takes this only as a property.
  app.server.maxConnections = config.connections.maxConnections;
  lazyRequestLoggers(app.log);

  app.decorate('flushLogs', flushLogs);
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
  // Every per-request step (pipeline.ts), before any route is added so every route gets its facts.
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
    keyUsage: options.keyUsage ?? null,
  });

  // A route missing its access rule or documented answers fails at start, so nothing opens silently or drifts from the docs.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(options.prefix)) return;
    if (route.config?.[accessRule] === undefined) throw new Error(`Route ${route.method} ${route.url} declares no access rule (config.${accessRule}).`);
    const documented = route.schema?.hide === true || (route.schema?.summary !== undefined && route.schema.response !== undefined);
    if (!documented) throw new Error(`Route ${route.method} ${route.url} has no summary and response schema for the OpenAPI document.`);
  });
  return app;
}

/**
 * A hop count trusts the nearest N hops whoever they are (Fastify refuses a bare number, as a direct client could then
 * choose its address); operators are told so in docs/operations.md (Trusted proxies).
 */
export function fastifyTrustProxy(trusted: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trusted === 'number') return (_address, hop) => hop < trusted;
  return trusted === false ? false : [...trusted];
}
