// Builds the Fastify application from plugins and routes; no I/O of its own, so tests can build as many as they like.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { TimezoneCatalog } from './domain/timezones.ts';
import { authenticate } from './http/authenticate.ts';
import { failureResponses, sendFailure } from './http/failure-responses.ts';
import { requestBodies } from './http/request-bodies.ts';
import { helloRoutes } from './routes/v0/hello.ts';
import { settingsRoutes } from './routes/v0/settings.ts';
import { userRoutes } from './routes/v0/user.ts';
import { healthRoutes } from './routes/health.ts';
import { rateLimits } from './http/rate-limits.ts';
import type { Redis } from 'ioredis';
import type { Store } from './store/store.ts';

export interface AppDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  /** Shared rate-limit counters; null keeps them per instance. */
  readonly redis: Redis | null;
}

export function buildApp({ config, store, timezones, redis }: AppDependencies): FastifyInstance {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimitBytes,
    // X-Forwarded-For is believed only from proxies the operator named; anyone else could forge it.
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    routerOptions: { ignoreTrailingSlash: true },
    // Strict validation: no type coercion, no silently dropped parameters; a wrong body is the caller's to fix.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    frameworkErrors: (error, request, reply) => {
      sendFailure(error, request, reply);
    },
  });

  if (config.environment === 'sandbox') {
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.header('X-Environment', 'sandbox');
      return payload;
    });
  }

  app.register(failureResponses, { apiPrefix: config.apiPrefix });
  app.register(requestBodies);
  app.register(rateLimits, { settings: config.rateLimits, redis, keyPrefix: config.redis?.keyPrefix ?? '' });
  app.register(authenticate, {
    store,
    environment: config.environment,
    realm: config.environment === 'sandbox' ? 'account-api sandbox' : 'account-api',
    touchIntervalMs: config.keyTouchIntervalMs,
  });

  app.register(
    async (v0) => {
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
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(config.apiPrefix) && route.config?.access === undefined) {
      throw new Error(`Route ${route.method} ${route.url} declares no access rule (config.access).`);
    }
  });

  return app;
}
