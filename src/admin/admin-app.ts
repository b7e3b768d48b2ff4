// Builds the admin API's Fastify instance (ADMIN_PORT) from the public app's building blocks; no I/O of its own.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { TimezoneCatalog } from '../domain/timezones.ts';
import { answerClientErrors } from '../http/client-errors.ts';
import { connectionOptions } from '../http/connection-limits.ts';
import { drainOnClose } from '../http/drain-on-close.ts';
import { failureResponses, sendFailure } from '../http/failure-responses.ts';
import type { Metrics } from '../http/metrics.ts';
import { answerRecords, recordAnswer } from '../http/answer-records.ts';
import { rateLimits } from '../http/rate-limits.ts';
import { requestBodies } from '../http/request-bodies.ts';
import { requestFraming } from '../http/request-framing.ts';
import { requestIdFor, requestIds } from '../http/request-id.ts';
import { loggingOptions } from '../http/request-log.ts';
import { everyAnswerHeaders, securityHeaders } from '../http/security-headers.ts';
import type { Store } from '../store/store.ts';
import { adminAuthenticate } from './admin-auth.ts';
import { adminOpenApi, adminOpenApiRoute } from './admin-openapi.ts';
import { adminAccountRoutes } from './routes/accounts.ts';
import { adminAuditRoutes } from './routes/audit.ts';
import { adminKeyRoutes } from './routes/keys.ts';

export const ADMIN_PREFIX = '/admin/v0';

export interface AdminAppDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: Redis | null;
  /** The process's metrics; this app records into them labelled port="admin". */
  readonly metrics: Metrics;
}

export function buildAdminApp({ config, store, timezones, redis, metrics: shared }: AdminAppDependencies): FastifyInstance {
  const metrics = shared.forPort('admin');
  const answerHeaders = everyAnswerHeaders({ hstsMaxAgeSeconds: config.hstsMaxAgeSeconds }, config.environment === 'sandbox' ? { 'X-Environment': 'sandbox' } : {});
  // The same limits on sizes, time-outs and bad input as the public port: the same options, the same plugins.
  const app = Fastify({
    ...loggingOptions(config.logLevel),
    requestIdHeader: false,
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    bodyLimit: config.bodyLimitBytes,
    // The admin port is reached directly (loopback by default): X-Forwarded-For is believed only from the same proxies.
    trustProxy: config.trustProxy === false ? false : typeof config.trustProxy === 'number' ? (_address, hop) => hop < (config.trustProxy as number) : [...config.trustProxy],
    routerOptions: { ignoreTrailingSlash: true },
    // allowUnionTypes: premium is a boolean in JSON and a string in a form.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, allowUnionTypes: true } },
    frameworkErrors: (error, request, reply) => {
      reply.headers(answerHeaders);
      reply.raw.once('close', () => recordAnswer(request, reply, metrics));
      sendFailure(error, request, reply);
    },
    ...connectionOptions(config.connections),
    clientErrorHandler: answerClientErrors({ lingerMs: 1000, headers: answerHeaders }),
    return503OnClosing: false,
  });
  app.server.maxConnections = config.connections.maxConnections;

  app.register(failureResponses, { apiPrefix: ADMIN_PREFIX, endpointsListedAt: `in ${ADMIN_PREFIX}/openapi.json` });
  app.register(requestIds);
  app.register(answerRecords, { metrics });
  app.register(securityHeaders, { headers: answerHeaders });
  app.register(drainOnClose, { retryAfterSeconds: 1 });
  app.register(requestFraming, { versions: ['1.1'] });
  app.register(requestBodies, { parameters: config.parameters });
  // Per admin token (ADMIN_RATE_LIMIT_PER_TOKEN), counted apart from any API key; failed attempts per address as on the public port.
  app.register(rateLimits, {
    settings: { ...config.rateLimits, perKey: config.admin.perToken },
    redis,
    keyPrefix: `${config.redis?.keyPrefix ?? ''}admin:`,
    onRejected: (budget) => metrics.rateLimited(budget),
  });
  app.register(adminAuthenticate, { store, touchIntervalMs: config.keyTouchIntervalMs, onFailure: (reason) => metrics.authFailed(reason) });
  app.register(adminOpenApi, { version: config.version });

  app.register(
    async (admin) => {
      admin.register(adminOpenApiRoute);
      admin.register(adminAccountRoutes, { store, timezones });
      admin.register(adminKeyRoutes, { store, environment: config.environment });
      admin.register(adminAuditRoutes, { store });
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
