// Starts the HTTP service: configuration -> store -> migrations -> app -> listening socket.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { loadTimezoneCatalog } from './domain/timezones.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import { listenForMetrics, type MetricsListener } from './http/metrics-listener.ts';
import { seedDemoAccounts, type DemoAccount } from './sandbox/demo-accounts.ts';
import { openStore } from './store/open-store.ts';
import { openRedis } from './store/redis-client.ts';
import type { Store } from './store/store.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly url: string;
  readonly accountCount: number;
  readonly demoAccounts: readonly DemoAccount[];
  /** Where the separate metrics listener (METRICS_PORT) answers; null when there is none. */
  readonly metricsUrl: string | null;
  readonly metrics: Metrics;
  /** Stops accepting, finishes requests in flight, then closes the store. */
  close(): Promise<void>;
}

// Before the app (and its logger) exists, start-up warnings go to stderr as plain JSON lines.
const startupLog = {
  warn: (details: object, message: string) => process.stderr.write(`${JSON.stringify({ level: 40, msg: message, ...details })}\n`),
};

/**
 * What is done once per start, whatever the number of processes: migrations, which also refuse a database of the other
 * environment (the store was opened for config.environment), then the sandbox's demo accounts.
 */
export async function prepareStore(store: Store, config: Config): Promise<{ demoAccounts: DemoAccount[]; accountCount: number }> {
  await store.migrate();
  const demoAccounts = config.environment === 'sandbox' ? await seedDemoAccounts(store, startupLog) : [];
  return { demoAccounts, accountCount: await store.countAccounts() };
}

/** The address people are told to use: a wildcard host is shown as localhost. */
export function serverUrl(host: string, port: number): string {
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
}

export interface StartOptions {
  /** Another process (the primary of `serve --workers`) already ran prepareStore: only check the schema is current. */
  readonly prepared?: boolean;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const store = openStore(config);
  try {
    if (options.prepared === true) await store.checkSchema();
    const { demoAccounts, accountCount } =
      options.prepared === true ? { demoAccounts: [], accountCount: await store.countAccounts() } : await prepareStore(store, config);
    const redis = config.redis === null ? null : await openRedis(config.redis, startupLog);
    const metrics = createMetrics();
    const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis, metrics });
    await app.listen({ port: config.port, host: config.host });
    let metricsListener: MetricsListener | null = null;
    if (config.metrics.port !== null) {
      try {
        metricsListener = await listenForMetrics({ registry: metrics.registry, host: config.metrics.host, port: config.metrics.port });
      } catch (error) {
        await app.close();
        throw error;
      }
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const url = serverUrl(config.host, port);
    return {
      app,
      store,
      url,
      accountCount,
      demoAccounts,
      metricsUrl: metricsListener?.url ?? null,
      metrics,
      close: async () => {
        await app.close();
        await metricsListener?.close();
        await store.close();
        if (redis !== null) await redis.quit().catch(() => redis.disconnect());
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
