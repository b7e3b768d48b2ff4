// Builds the Fastify application from plugins and routes; no I/O of its own, so tests can build as many as they like.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config, TrustedProxies } from './config.ts';
import type { TimezoneCatalog } from './domain/timezones.ts';
import { METRICS_PATH, metricsEndpoint, type Metrics } from './http/observability/metrics.ts';
import { requestIdFor } from './http/observability/request-id.ts';
import { recordAnswer } from './http/observability/answer-records.ts';
import { loggingOptions } from './http/observability/request-log.ts';
import { everyAnswerHeaders } from './http/wire/security-headers.ts';
import { answerClientErrors } from './http/failures/client-errors.ts';
import { connectionOptions } from './http/limits/connection-limits.ts';
import { authenticator } from './http/auth/authenticate.ts';
import { factsOf, pipeline, type AuthenticationStep } from './http/pipeline.ts';
import { failureResponses, sendFailure } from './http/failures/failure-responses.ts';
import { requestBodies } from './http/wire/request-bodies.ts';
import { helloRoutes } from './routes/v0/hello.ts';
import { settingsRoutes } from './routes/v0/settings.ts';
import { userRoutes } from './routes/v0/user.ts';
import { openApiRoutes } from './routes/v0/openapi.ts';
import { openApi } from './http/wire/openapi.ts';
import { healthRoutes } from './routes/health.ts';
import { rateLimits } from './http/limits/rate-limits.ts';
import type { Redis } from 'ioredis';
import type { Store } from './store/store.ts';
import type { Tracing } from './tracing/tracing.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes the log lines still buffered, synchronously (request-log.ts): before an exit, and after a fatal error. */
    flushLogs(): void;
  }
}

export interface AppDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: Redis | null;
  /** This app's metrics; the caller may also serve them on a listener of their own (METRICS_PORT). */
  readonly metrics: Metrics;
  /** Spans for every request (docs/operations.md, Traces); null or absent: untraced. */
  readonly tracing?: Tracing | null;
}

/**
 * Fastify's trustProxy for the operator's TRUST_PROXY, on every port. A hop count trusts the nearest N hops whoever they are
 * (Fastify itself now refuses to read a bare number, because a client that reaches the server directly can then choose its
 * address); operators who give one are told so in docs/operations.md (Trusted proxies).
 */
export function fastifyTrustProxy(trusted: TrustedProxies): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trusted === 'number') return (_address, hop) => hop < trusted;
  return trusted === false ? false : [...trusted];
}

export function buildApp({ config, store, timezones, redis, metrics, tracing = null }: AppDependencies): FastifyInstance {
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
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
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

  app.register(failureResponses, { apiPrefix: config.apiPrefix });
  app.register(requestBodies, { parameters: config.parameters });
  app.register(rateLimits, {
    settings: config.rateLimits,
    redis,
    keyPrefix: config.redis?.keyPrefix ?? '',
    onRejected: (budget) => metrics.rateLimited(budget),
    addressIsConnection: config.trustProxy === false,
  });
  // Every per-request step, in order: src/http/pipeline.ts. Before any route is added, so that every route gets its facts.
  app.register(pipeline, {
    answerHeaders,
    metrics,
    authentication: (rateBudgets) =>
      authenticator(rateBudgets, {
        store,
        environment: config.environment,
        realm: config.environment === 'sandbox' ? 'account-api sandbox' : 'account-api',
        touchIntervalMs: config.keyTouchIntervalMs,
        onFailure: (reason) => metrics.authFailed(reason),
      }) as AuthenticationStep,
    accessOf: (routeConfig) => routeConfig?.access,
    maxEventLoopDelayMs: config.maxEventLoopDelayMs,
    alwaysServed: ['/healthz', METRICS_PATH],
    hostRequiredFor: ['1.1'],
    corsOrigins: config.corsOrigins,
    tracing,
  });
  // After the pipeline, so that GET /metrics gets its facts (never counted, never shed) like every other route.
  app.register(metricsEndpoint, { metrics, token: config.metrics.token });

  // Before the routes: the document is built from each route's schema as it is added.
  app.register(openApi, { environment: config.environment, sandboxUrl: config.sandboxUrl, version: config.version });

  app.register(
    async (v0) => {
      v0.register(openApiRoutes);
      v0.register(helloRoutes);
      v0.register(settingsRoutes, { store, timezones });
      v0.register(userRoutes, { store, apiPrefix: config.apiPrefix });
    },
    { prefix: config.apiPrefix },
  );

  app.register(healthRoutes, {
    timeoutMs: 2000,
    checks: [
      { name: 'store', check: () => store.ping() },
      ...(redis === null ? [] : [{ name: 'redis', check: async () => void (await redis.ping()) }]),
    ],
  });

  // Unreachable by design; present so a future route that forgets `access` fails loudly in tests, not silently open.
  // Likewise every API route documents its answers: the OpenAPI document is generated from these schemas and cannot drift.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(config.apiPrefix)) return;
    if (route.config?.access === undefined) {
      throw new Error(`Route ${route.method} ${route.url} declares no access rule (config.access).`);
    }
    const documented = route.schema?.hide === true || (route.schema?.summary !== undefined && route.schema.response !== undefined);
    if (!documented) throw new Error(`Route ${route.method} ${route.url} has no summary and response schema for the OpenAPI document.`);
  });

  return app;
}
