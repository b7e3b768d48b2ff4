// Builds the admin API's Fastify instance (ADMIN_PORT) on the same port factory as the public app; no I/O of its own.
import type { FastifyInstance } from 'fastify';
import type { AppDependencies } from '../app.ts';
import type { AuthenticationStep } from '../http/pipeline.ts';
import { buildPort } from '../http/port.ts';
import { storeAnnouncingTo } from '../store/credentials/announcing-store.ts';
import { announcerOver } from '../store/credentials/credential-versions.ts';
import { adminAuthenticator } from '../http/auth/admin-auth.ts';
import { adminIdempotency } from '../admin/admin-idempotency.ts';
import { adminOpenApi, adminOpenApiRoute } from '../admin/admin-openapi.ts';
import { inputCapsOf } from '../http/wire/openapi-document.ts';
import { adminAccountRoutes } from '../admin/routes/accounts.ts';
import { adminAuditRoutes } from '../admin/routes/audit.ts';
import { adminKeyRoutes } from '../admin/routes/keys.ts';
import { adminWebhookRoutes } from '../admin/routes/webhooks.ts';
import { webhookUserAgent } from '../operations/webhooks/send-delivery.ts';
import { operatorConsole } from '../console/console-app.ts';

export const ADMIN_PREFIX = '/admin/v0';

/** The same as the public port's; `metrics` are the process's, which this app records into labelled port="admin". */
export type AdminAppDependencies = AppDependencies;

export function buildAdminApp({ config, store, timezones, redis, metrics: shared, tracing = null }: AdminAppDependencies): FastifyInstance {
  const metrics = shared.forPort('admin');
  // Every credential change made here is announced to the instances that cache credentials (PostgreSQL + Redis).
  const changes = storeAnnouncingTo(store, redis === null ? null : announcerOver(redis, config), config);
  // How a token is judged, by the Bearer header and by the console's sign-in alike.
  const adminTokenOptions = { store, environment: config.environment, touchIntervalMs: config.keyTouchIntervalMs, onFailure: (reason: string) => metrics.authFailed(reason) };
  // The same port as the public one (src/http/port.ts): the same limits on sizes, time-outs and bad input, the same pipeline.
  const app = buildPort({
    config,
    metrics,
    redis,
    prefix: ADMIN_PREFIX,
    endpointsListedAt: `in ${ADMIN_PREFIX}/openapi.json`,
    // Per admin token (ADMIN_RATE_LIMIT_PER_TOKEN), counted apart from any API key; failed attempts per address as on the public port.
    rateLimits: { settings: { ...config.rateLimits, perKey: config.admin.perToken }, keyPrefix: `${config.redis?.keyPrefix ?? ''}admin:` },
    // Bearer admin tokens for authentication.
    authentication: (rateBudgets) => adminAuthenticator(rateBudgets, adminTokenOptions) as AuthenticationStep,
    accessRule: 'adminAccess',
    // The admin port is for a few provisioning systems: it is not shed, so an overloaded public port cannot lock them out.
    maxEventLoopDelayMs: 0,
    alwaysServed: [],
    corsOrigins: [],
    tracing,
    // premium is a boolean in JSON and a string in a form.
    allowUnionTypes: true,
  });
  app.decorateRequest('adminTokenId', null);
  app.register(adminOpenApi, { version: config.version, environment: config.environment, inputCaps: inputCapsOf(config) });

  app.register(
    async (admin) => {
      // Before the routes: every write among them takes an Idempotency-Key, per admin token (admin-idempotency.ts).
      adminIdempotency(admin, { store });
      admin.register(adminOpenApiRoute);
      admin.register(adminAccountRoutes, { store: changes, timezones });
      admin.register(adminKeyRoutes, { store: changes, environment: config.environment });
      admin.register(adminAuditRoutes, { store });
      admin.register(adminWebhookRoutes, { store, settings: config.webhooks, userAgent: webhookUserAgent(config.version) });
    },
    { prefix: ADMIN_PREFIX },
  );

  // The operator console (src/console/): pages over the same operations, on this listener only, never the public port.
  app.register(operatorConsole, {
    prefix: '/console',
    store: changes,
    timezones,
    environment: config.environment,
    sessions: { idleMs: config.admin.consoleIdleMs, maxMs: config.admin.consoleMaxMs },
    tokens: adminTokenOptions,
    webhooks: config.webhooks,
    userAgent: webhookUserAgent(config.version),
  });

  return app;
}
