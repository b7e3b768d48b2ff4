// Builds the admin API's Fastify instance (ADMIN_PORT) from the public app's building blocks; no I/O of its own.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { TimezoneCatalog } from '../domain/timezones.ts';
import { answerClientErrors } from '../http/failures/client-errors.ts';
import { connectionOptions } from '../http/limits/connection-limits.ts';
import { failureResponses, sendFailure } from '../http/failures/failure-responses.ts';
import type { Metrics } from '../http/observability/metrics.ts';
import { fastifyTrustProxy } from '../app.ts';
import { recordAnswer } from '../http/observability/answer-records.ts';
import { factsOf, pipeline, type AuthenticationStep } from '../http/pipeline.ts';
import { rateLimits } from '../http/limits/rate-limits.ts';
import { requestBodies } from '../http/wire/request-bodies.ts';
import { requestIdFor } from '../http/observability/request-id.ts';
import { loggingOptions } from '../http/observability/request-log.ts';
import { everyAnswerHeaders } from '../http/wire/security-headers.ts';
import type { Tracing } from '../tracing/tracing.ts';
import type { Store } from '../store/store.ts';
import { adminAuthenticator } from './admin-auth.ts';
import { adminIdempotency } from './admin-idempotency.ts';
import { adminOpenApi, adminOpenApiRoute } from './admin-openapi.ts';
import { adminAccountRoutes } from './routes/accounts.ts';
import { adminAuditRoutes } from './routes/audit.ts';
import { adminKeyRoutes } from './routes/keys.ts';
import { adminWebhookRoutes } from './routes/webhooks.ts';

export const ADMIN_PREFIX = '/admin/v0';

export interface AdminAppDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: Redis | null;
  /** The process's metrics; this app records into them labelled port="admin". */
  readonly metrics: Metrics;
  /** Spans for every request, as on the public port; null or absent: untraced. */
  readonly tracing?: Tracing | null;
}

export function buildAdminApp({ config, store, timezones, redis, metrics: shared, tracing = null }: AdminAppDependencies): FastifyInstance {
  const metrics = shared.forPort('admin');
  const answerHeaders = everyAnswerHeaders({ hstsMaxAgeSeconds: config.hstsMaxAgeSeconds }, config.environment === 'sandbox' ? { 'X-Environment': 'sandbox' } : {});
  // The same limits on sizes, time-outs and bad input as the public port: the same options, the same plugins.
  const { fastify: logging, flush: flushLogs, lazyRequestLoggers } = loggingOptions(config.logLevel);
  const app = Fastify({
    ...logging,
    requestIdHeader: false,
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    bodyLimit: config.bodyLimitBytes,
    // The admin port is reached directly (loopback by default): X-Forwarded-For is believed only from the same proxies.
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true },
    // allowUnionTypes: premium is a boolean in JSON and a string in a form.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, allowUnionTypes: true } },
    frameworkErrors: (error, request, reply) => {
      reply.headers(answerHeaders);
      reply.raw.once('close', () => recordAnswer(request, reply, factsOf(request, metrics), metrics));
      sendFailure(error, request, reply);
    },
    ...connectionOptions(config.connections),
    clientErrorHandler: answerClientErrors({ lingerMs: 1000, headers: answerHeaders }),
    return503OnClosing: false,
  });
  app.server.maxConnections = config.connections.maxConnections;
  lazyRequestLoggers(app.log);

  app.register(failureResponses, { apiPrefix: ADMIN_PREFIX, endpointsListedAt: `in ${ADMIN_PREFIX}/openapi.json` });
  app.addHook('onClose', (_app, done) => {
    flushLogs();
    done();
  });
  app.register(requestBodies, { parameters: config.parameters });
  // Per admin token (ADMIN_RATE_LIMIT_PER_TOKEN), counted apart from any API key; failed attempts per address as on the public port.
  app.register(rateLimits, {
    settings: { ...config.rateLimits, perKey: config.admin.perToken },
    redis,
    keyPrefix: `${config.redis?.keyPrefix ?? ''}admin:`,
    onRejected: (budget) => metrics.rateLimited(budget),
  });
  // The same per-request pipeline as the public port (src/http/pipeline.ts), with Bearer admin tokens for authentication.
  app.decorateRequest('adminTokenId', null);
  app.register(pipeline, {
    answerHeaders,
    metrics,
    authentication: (rateBudgets) =>
      adminAuthenticator(rateBudgets, { store, environment: config.environment, touchIntervalMs: config.keyTouchIntervalMs, onFailure: (reason) => metrics.authFailed(reason) }) as AuthenticationStep,
    accessOf: (routeConfig) => routeConfig?.adminAccess,
    // The admin port is for a few provisioning systems: it is not shed, so an overloaded public port cannot lock them out.
    maxEventLoopDelayMs: 0,
    alwaysServed: [],
    hostRequiredFor: ['1.1'],
    corsOrigins: [],
    tracing,
  });
  app.register(adminOpenApi, { version: config.version });

  app.register(
    async (admin) => {
      // Before the routes: every write among them takes an Idempotency-Key, per admin token (admin-idempotency.ts).
      adminIdempotency(admin, { store });
      admin.register(adminOpenApiRoute);
      admin.register(adminAccountRoutes, { store, timezones });
      admin.register(adminKeyRoutes, { store, environment: config.environment });
      admin.register(adminAuditRoutes, { store });
      admin.register(adminWebhookRoutes, { store, settings: config.webhooks });
    },
    { prefix: ADMIN_PREFIX },
  );

  // A route that forgets its access rule, or its documentation, fails at start rather than opening silently.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(ADMIN_PREFIX)) return;
    if (route.config?.adminAccess === undefined) throw new Error(`Admin route ${route.method} ${route.url} declares no access rule (config.adminAccess).`);
    const documented = route.schema?.hide === true || (route.schema?.summary !== undefined && route.schema.response !== undefined);
    if (!documented) throw new Error(`Admin route ${route.method} ${route.url} has no summary and response schema for the OpenAPI document.`);
  });

  return app;
}
