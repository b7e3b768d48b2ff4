// Starts the HTTP service: configuration -> store -> migrations -> app -> listening socket (PostgreSQL down: migrations later).
import type { FastifyInstance } from 'fastify';
import { buildAdminApp } from './service/admin-port.ts';
import { buildApp } from './app.ts';
import { ConfigError, type Config } from './config.ts';
import { isDomainError } from './domain/errors.ts';
import { loadTimezoneCatalog } from './domain/timezones.ts';
import { KeyUsageCounter } from './http/observability/key-usage.ts';
import { createMetrics, type Metrics } from './http/observability/metrics.ts';
import { listenForMetrics, type MetricsListener } from './http/observability/metrics-listener.ts';
import { seedDemoAccounts, type DemoAccount } from './sandbox/demo-accounts.ts';
import { ConnectingStore, isStoreUnavailable } from './store/connecting-store.ts';
import { PRUNE_INTERVAL_MS, pruneIdempotencyKeysEvery } from './store/idempotency/pruning.ts';
import { describeDatabase, openStore } from './store/open-store.ts';
import { closeRedis, openRedis } from './store/redis-client.ts';
import type { Store } from './store/store.ts';
import { createTracing } from './tracing/start-tracing.ts';
import { untraced, type SpanRunner, type Tracing } from './tracing/tracing.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly url: string;
  /** Null while the database is still awaited (storeReady). */
  readonly prepared: PreparedStore | null;
  /** Resolves once the store serves; rejects on a failure waiting cannot cure; never settles if closed first. */
  readonly storeReady: Promise<PreparedStore>;
  /** The primary of `serve --workers` has just migrated the database: skip the back-off. */
  retryStoreNow(): void;
  readonly metricsUrl: string | null;
  readonly adminUrl: string | null;
  readonly adminApp: FastifyInstance | null;
  readonly metrics: Metrics;
  readonly traced: SpanRunner;
  close(): Promise<void>;
}

const startupLog = {
  warn: (details: object, message: string) => process.stderr.write(`${JSON.stringify({ level: 40, msg: message, ...details })}\n`),
};

/** Once per start, whatever the process count: migrations (which refuse the other environment's database), then demo accounts. */
export async function prepareStore(store: Store, config: Config): Promise<{ demoAccounts: DemoAccount[]; hasAccounts: boolean }> {
  await store.migrate();
  const demoAccounts = config.environment === 'sandbox' ? await seedDemoAccounts(store, startupLog) : [];
  return { demoAccounts, hasAccounts: await store.hasAccounts() };
}

export type PreparedStore = Awaited<ReturnType<typeof prepareStore>>;

/** A worker's share of prepareStore: the primary migrates, so only check. */
async function checkPrepared(store: Store): Promise<PreparedStore> {
  await store.checkSchema();
  return { demoAccounts: [], hasAccounts: await store.hasAccounts() };
}

/**
 * A port another process holds, one this user may not bind, or an address not this machine's, is the operator's to fix: one line naming the port and the
 * setting (run-cli.ts prints a ConfigError without a stack), not an "unexpected failure". Anything else is passed on.
 */
interface Listener {
  readonly host: string;
  readonly port: number;
  /** The variables (and flags) that choose them, named in the line. */
  readonly portSetting: string;
  readonly hostSetting: string;
}

function listenFailure(error: unknown, { host, port, portSetting: setting, hostSetting }: Listener): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRNOTAVAIL') {
    return new ConfigError(`address ${host} is not one of this machine's: set ${hostSetting} to one of its addresses, or 0.0.0.0 for every interface.`);
  }
  if (code === 'EADDRINUSE') {
    return new ConfigError(`port ${port} on ${host} is already in use by another process: stop that process, or set ${setting} to a free port.`);
  }
  if (code === 'EACCES') return new ConfigError(`port ${port} on ${host} needs privileges this user lacks: set ${setting} to a port above 1023.`);
  return error;
}

/** A wildcard host is shown as localhost. */
export function serverUrl(host: string, port: number): string {
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
}

function isSchemaOutdated(error: unknown): boolean {
  return isDomainError(error) && error.code === 'schema_outdated';
}

export interface StartOptions {
  /** The primary of `serve --workers` already ran prepareStore. */
  readonly prepared?: boolean;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const engine = openStore(config);
  let store: Store = engine;
  let tracing: Tracing | null = null;
  try {
    const prepare = options.prepared === true ? checkPrepared : (each: Store) => prepareStore(each, config);
    // A worker whose primary still waits finds the database unmigrated: that too passes by waiting.
    const retryable =
      options.prepared === true ? (error: unknown) => isStoreUnavailable(error) || isSchemaOutdated(error) : isStoreUnavailable;
    let firstFailure: unknown;
    const prepared = await prepare(engine).catch((error: unknown) => {
      // PostgreSQL down at start: listen anyway, answer 503 where it is needed, and keep trying in the background.
      if (config.storeFailFast || !retryable(error)) throw error;
      firstFailure = error;
      return null;
    });
    const connecting = prepared === null ? new ConnectingStore(engine) : null;
    store = connecting ?? engine;
    // Without the endpoint, nothing of OpenTelemetry is loaded and the store is not wrapped.
    tracing = await createTracing(config.tracing, config.version);
    if (tracing !== null) store = tracing.traceStore(store);
    const redis = config.redis === null ? null : await openRedis(config.redis, startupLog);
    const metrics = createMetrics();
    const timezones = loadTimezoneCatalog();
    // Usage per key, counted in this process and written in batches (docs/operations.md, Usage per key).
    const keyUsage = config.keyUsage.flushIntervalMs === 0 ? null : new KeyUsageCounter({ store, flushIntervalMs: config.keyUsage.flushIntervalMs, log: { warn: (fields, message) => app.log.warn(fields, message) } });
    const app = buildApp({ config, store, timezones, redis, metrics, tracing, keyUsage });
    keyUsage?.start();
    let metricsListener: MetricsListener | null = null;
    let adminApp: FastifyInstance | null = null;
    try {
      await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
        throw listenFailure(error, { host: config.host, port: config.port, portSetting: 'PORT (or --port)', hostSetting: 'HOST (or --host)' });
      });
      if (config.metrics.port !== null) {
        const { host, port } = config.metrics;
        metricsListener = await listenForMetrics({ registry: metrics.registry, host, port }).catch((error: unknown) => {
          throw listenFailure(error, { host, port, portSetting: 'METRICS_PORT', hostSetting: 'METRICS_HOST' });
        });
      }
      if (config.admin.port !== null) {
        const { host, port } = config.admin;
        adminApp = buildAdminApp({ config, store, timezones, redis, metrics, tracing });
        await adminApp.listen({ port, host }).catch((error: unknown) => {
          throw listenFailure(error, { host, port, portSetting: 'ADMIN_PORT', hostSetting: 'ADMIN_HOST' });
        });
      }
    } catch (error) {
      await adminApp?.close();
      await metricsListener?.close();
      await app.close();
      await keyUsage?.stop();
      // Open, Redis would keep the process alive after the failure is reported.
      if (redis !== null) await closeRedis(redis);
      throw error;
    }
    const adminAddress = adminApp?.server.address();
    const adminUrl =
      adminApp === null ? null : serverUrl(config.admin.host, typeof adminAddress === 'object' && adminAddress !== null ? adminAddress.port : config.admin.port!);
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const url = serverUrl(config.host, port);
    const stopPruning = pruneIdempotencyKeysEvery(store, PRUNE_INTERVAL_MS, app.log);
    const storeReady =
      prepared !== null
        ? Promise.resolve(prepared)
        : connecting!.connect({ prepare, retryable, log: app.log, target: describeDatabase(config.database), firstFailure });
    return {
      app,
      store,
      url,
      prepared,
      storeReady,
      retryStoreNow: () => connecting?.retryNow(),
      metricsUrl: metricsListener?.url ?? null,
      adminUrl,
      adminApp,
      metrics,
      traced: tracing?.traced ?? untraced,
      close: async () => {
        stopPruning();
        await Promise.all([app.close(), adminApp?.close()]);
        // Once the last answer is counted, before the store closes.
        await keyUsage?.stop();
        await metricsListener?.close();
        await store.close();
        if (redis !== null) await closeRedis(redis);
        // Last, so the spans of closing are exported too.
        await tracing?.shutdown();
      },
    };
  } catch (error) {
    await store.close();
    await tracing?.shutdown();
    throw error;
  }
}
