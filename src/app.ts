// Builds the Fastify application from plugins and routes; no I/O of its own, so tests can build as many as they like.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import type { TimezoneCatalog } from './domain/timezones.ts';
import { METRICS_PATH, metricsEndpoint, type Metrics } from './http/observability/metrics.ts';
import { authenticator } from './http/auth/authenticate.ts';
import type { KeyUsageCounter } from './http/observability/key-usage.ts';
import type { AuthenticationStep } from './http/pipeline.ts';
import { buildPort } from './http/port.ts';
import { idempotentWrites } from './http/writes/idempotency.ts';
import { helloRoutes } from './routes/v0/hello.ts';
import { settingsRoutes } from './routes/v0/settings.ts';
import { userRoutes } from './routes/v0/user.ts';
import { openApiRoutes } from './routes/v0/openapi.ts';
import { openApi } from './http/wire/openapi.ts';
import { inputCapsOf } from './http/wire/openapi-document.ts';
import { healthRoutes } from './routes/health.ts';
import { isCluster, onClusterFailover, pingRedis, type RedisClient } from './store/redis-client.ts';
import { announcerOver, versionLifetimeMs } from './store/credentials/credential-versions.ts';
import { announcingAgain, storeAnnouncingTo } from './store/credentials/announcing-store.ts';
import type { Store } from './store/store.ts';
import type { Tracing } from './tracing/tracing.ts';

/** What either port is built from: this one here, the admin port in service/admin-port.ts. */
export interface AppDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: RedisClient | null;
  /** This app's metrics; the caller may also serve them on a listener of their own (METRICS_PORT). */
  readonly metrics: Metrics;
  /** Spans for every request (docs/operations.md, Traces); null or absent: untraced. */
  readonly tracing?: Tracing | null;
  /** Counts each answer to a proven key (the public port only); null or absent: usage is not counted. */
  readonly keyUsage?: KeyUsageCounter | null;
}

/**
 * Calls `reset` each time Redis comes back after losing its connection: a restart from a snapshot, or a failover to a replica
 * that missed the last announcements, can bring back a version older than a change already acknowledged. A cluster stays
 * ready through one master's failover, so there it is also called when a node is lost and when the masters change.
 */
function resetOnReconnect(redis: RedisClient, reset: () => void): void {
  let lost = false;
  redis.on('close', () => {
    lost = true;
  });
  redis.on('ready', () => {
    if (lost) reset();
    lost = false;
  });
  if (isCluster(redis)) onClusterFailover(redis, reset);
}

export function buildApp({ config, store, timezones, redis, metrics, tracing = null, keyUsage = null }: AppDependencies): FastifyInstance {
  // PostgreSQL + Redis: credentials cached in this process, tagged with the version the key's charge reads (issue 28).
  const cachesCredentials = redis !== null && config.database.engine === 'postgres' && config.credentialCacheMaxAgeMs > 0 && config.credentialCacheSize > 0;
  const keyCharge = { touchIntervalMs: config.keyTouchIntervalMs, versionLifetimeMs: cachesCredentials ? versionLifetimeMs(config.credentialCacheMaxAgeMs) : 0 };
  // What the routes change, they change through this: every credential change is announced to the other instances' caches.
  const announcer = redis === null ? null : announcerOver(redis, config);
  const changes = storeAnnouncingTo(store, announcer, config);
  // One per app for POST /user and /settings: its unreleased keys (unreleased-keys.ts) are this app's. A replayed 200 names
  // a change to the caller's account (its name or timezone), which cached credentials carry: announced again.
  const announceAgain = announcingAgain(announcer, config);
  const accountWrites = idempotentWrites({
    store: changes,
    ...(announceAgain === null ? {} : { beforeReplay: (request: FastifyRequest) => announceAgain(request.caller!.username) }),
  });
  // The port itself, as the admin port's: src/http/port.ts. Every per-request step is in src/http/pipeline.ts.
  const app = buildPort({
    config,
    metrics,
    redis,
    prefix: config.apiPrefix,
    rateLimits: {
      settings: config.rateLimits,
      keyPrefix: config.redis?.keyPrefix ?? '',
      addressIsConnection: config.trustProxy === false,
      ...(redis === null ? {} : { keyCharge }),
    },
    authentication: (rateBudgets) =>
      authenticator(rateBudgets, {
        store,
        environment: config.environment,
        realm: config.environment === 'sandbox' ? 'account-api sandbox' : 'account-api',
        touchIntervalMs: config.keyTouchIntervalMs,
        credentialCache: cachesCredentials
          ? { maxAgeMs: config.credentialCacheMaxAgeMs, maxEntries: config.credentialCacheSize, resetOnReconnect: (reset) => resetOnReconnect(redis!, reset) }
          : null,
        onFailure: (reason) => metrics.authFailed(reason),
      }) as AuthenticationStep,
    accessRule: 'access',
    maxEventLoopDelayMs: config.maxEventLoopDelayMs,
    alwaysServed: ['/healthz', METRICS_PATH],
    corsOrigins: config.corsOrigins,
    tracing,
    keyUsage,
  });
  app.addHook('onClose', async () => accountWrites.close());
  // After the pipeline, so that GET /metrics gets its facts (never counted, never shed) like every other route.
  app.register(metricsEndpoint, { metrics, token: config.metrics.token });

  // Before the routes: the document is built from each route's schema as it is added.
  app.register(openApi, { environment: config.environment, sandboxUrl: config.sandboxUrl, version: config.version, inputCaps: inputCapsOf(config) });

  app.register(
    async (v0) => {
      v0.register(openApiRoutes);
      v0.register(helloRoutes);
      v0.register(settingsRoutes, { store: changes, timezones, idempotency: accountWrites });
      v0.register(userRoutes, { store: changes, apiPrefix: config.apiPrefix, idempotency: accountWrites });
    },
    { prefix: config.apiPrefix },
  );

  app.register(healthRoutes, {
    timeoutMs: 2000,
    checks: [
      { name: 'store', check: () => store.ping() },
      ...(redis === null ? [] : [{ name: 'redis', check: () => pingRedis(redis) }]),
    ],
  });

  return app;
}
