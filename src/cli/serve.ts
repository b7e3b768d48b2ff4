// `account-api serve`: runs the HTTP service until SIGTERM or SIGINT, then shuts down gracefully; alone, or as one of --workers.
import cluster from 'node:cluster';
import { Server } from 'node:net';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.ts';
import { startAuditPruning } from '../operations/audit-pruning.ts';
import { startKeyUsagePruning } from '../operations/key-usage-pruning.ts';
import { startConsoleSessionPruning } from '../operations/console-session-pruning.ts';
import { startServer } from '../server.ts';
import { startDeliveryWorker } from '../service/delivery-worker.ts';
import { createWebhookMetrics } from '../service/webhook-metrics.ts';
import { webhookUserAgent } from '../operations/webhooks/send-delivery.ts';
import { announce, announceStore } from './announce.ts';
import type { CliContext } from './cli-context.ts';
import { DATABASE_FLAGS, type CommandGroup } from './command-spec.ts';
import { catchSignals } from './signals.ts';
import { STOP_ACCEPTING, STOPPED_ACCEPTING, STORE_PREPARED, superviseWorkers } from './serve-workers.ts';

export const SERVE: CommandGroup = {
  name: 'serve',
  summary: 'The HTTP service.',
  commands: [
    {
      words: ['serve'],
      args: [],
      summary:
        'Serves the API until SIGTERM or SIGINT, then finishes the requests in flight and exits 0. It migrates the database first. ' +
        'A PostgreSQL that does not answer at start is retried meanwhile (503 store_unavailable) unless --store-fail-fast. ' +
        'Every other setting is an environment variable (README, docs/operations.md).',
      flags: {
        sandbox: { type: 'boolean', help: "the sandbox: its own database and port (8081), sandbox keys only (also ACCOUNT_API_SANDBOX=1)" },
        port: { type: 'string', value: 'PORT', help: 'the port to listen on, 0 for any free one (default: PORT, else 8080; sandbox 8081)' },
        host: { type: 'string', value: 'HOST', help: 'the address to listen on (default: HOST, else 0.0.0.0)' },
        workers: { type: 'string', value: 'N', help: 'processes sharing the port, 1 to 64 (default: WORKERS, else 1)' },
        'database-url': { ...DATABASE_FLAGS['database-url'], shared: false },
        'store-fail-fast': { type: 'boolean', help: 'exit 1 when the database does not answer at start, instead of waiting (also STORE_FAIL_FAST=1)' },
        json: DATABASE_FLAGS.json,
      },
      examples: ['npx account-api serve --port 8080', 'npx account-api serve --sandbox', 'DATABASE_URL=postgres://... npx account-api serve --workers 2'],
    },
  ],
};

/** 0 after a clean shutdown. */
export async function serveCommand(context: CliContext, config: Config): Promise<number> {
  // A worker re-runs this command line (node:cluster forks process.argv).
  if (cluster.isWorker) {
    try {
      return await serve(context, config, true);
    } finally {
  // The primary's channel would keep a worker alive after its server closed.
      cluster.worker?.disconnect();
    }
  }
  if (config.workers > 1) return superviseWorkers(context, config);
  return serve(context, config, false);
}

async function serve(context: CliContext, config: Config, asWorker: boolean): Promise<number> {
  // Before anything starts, so a SIGTERM during start-up still shuts down cleanly.
  const signals = catchSignals();
  // A worker answers the primary's metric requests from the start, so a scrape during start-up is not left to time out.
  if (asWorker && config.metrics.port !== null) new AggregatorRegistry();
  let detachFromProcess = () => {};
  try {
  // The primary migrated (and seeded) a worker's store, and serves METRICS_PORT alone.
    const server = await startServer(asWorker ? { ...config, metrics: { ...config.metrics, port: null } } : config, { prepared: asWorker });
    const { app } = server;
    // The logger buffers (request-log.ts): flushed before any exit; a fatal error is logged, flushed, and ends the process.
    const flushOnExit = () => app.flushLogs();
    const fatal = (error: unknown) => {
      app.log.fatal({ err: error }, 'uncaught error: exiting');
      app.flushLogs();
      process.exit(1);
    };
    process.once('exit', flushOnExit);
    process.on('uncaughtException', fatal);
    detachFromProcess = () => {
      app.flushLogs();
      process.off('exit', flushOnExit);
      process.off('uncaughtException', fatal);
    };
    const waitingForDatabase = server.prepared === null;
    app.log.info(
      { url: server.url, environment: config.environment, database: config.database.engine, metricsUrl: server.metricsUrl, adminUrl: server.adminUrl, waitingForDatabase },
      'account-api ready',
    );
    if (asWorker) {
      process.on('message', (message: unknown) => {
        if (message === STORE_PREPARED) server.retryStoreNow();
        if (message !== STOP_ACCEPTING) return;
        // The listener only; connections and the drain that follows are untouched.
        Server.prototype.close.call(app.server);
        if (server.adminApp !== null) Server.prototype.close.call(server.adminApp.server);
        process.send?.(STOPPED_ACCEPTING);
      });
    }
    if (asWorker && config.metrics.port !== null) AggregatorRegistry.setRegistries(server.metrics.registry);
    if (!asWorker) announce(context, config, { url: server.url, metricsUrl: server.metricsUrl, adminUrl: server.adminUrl, store: server.prepared, workers: 1 });
    // Every serving process prunes: a second DELETE of the same old rows deletes nothing.
    const stopPruning = startAuditPruning({ store: server.store, retentionDays: config.auditRetentionDays, storeReady: server.storeReady, log: app.log });
    const stopUsagePruning = startKeyUsagePruning({ store: server.store, retentionDays: config.keyUsage.retentionDays, storeReady: server.storeReady, log: app.log });
    const { consoleIdleMs: idleMs, consoleMaxMs: maxMs } = config.admin;
    const stopSessionPruning =
      config.admin.port === null ? () => {} : startConsoleSessionPruning({ store: server.store, idleMs, maxMs, storeReady: server.storeReady, log: app.log });
    // Every serving process takes its share of the outbox (leases prevent doubles), bounded by WEBHOOK_CONCURRENCY.
    const webhookMetrics = createWebhookMetrics(server.metrics.registry);
    const delivery =
      config.webhooks.concurrency === 0
        ? null
        : startDeliveryWorker({
            store: server.store,
            settings: config.webhooks,
            storeReady: server.storeReady,
            log: app.log,
            metrics: webhookMetrics,
            userAgent: webhookUserAgent(config.version),
            traced: server.traced,
          });

    return await new Promise<number>((resolve) => {
      let stopping = false;
      const stop = (status: 0 | 1) => {
        stopping = true;
        stopPruning();
        stopUsagePruning();
        stopSessionPruning();
        // Half the shutdown time for deliveries in flight; the rest's leases are let go.
        const deliveryStopped = delivery?.stop(config.shutdownTimeoutMs / 2) ?? Promise.resolve();
        const deadline = setTimeout(() => {
          app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown did not finish within SHUTDOWN_TIMEOUT_MS: exiting now');
          process.exit(1);
        }, config.shutdownTimeoutMs);
        deadline.unref();
        deliveryStopped.then(() => server.close()).then(
          () => {
            clearTimeout(deadline);
            app.log.info('stopped');
            resolve(status);
          },
          (error: unknown) => {
            clearTimeout(deadline);
            app.log.error({ err: error }, 'shutdown failed');
            resolve(1);
          },
        );
      };
      signals.handleWith((signal) => {
        if (stopping) {
          // A worker hears Ctrl-C and then the primary's forwarded signal: the primary decides.
          if (asWorker) return;
          app.log.warn({ signal }, 'second signal: exiting now');
          process.exit(1);
        }
        app.log.info({ signal }, 'shutting down: finishing requests in flight');
        stop(0);
      });
      if (waitingForDatabase) {
        server.storeReady.then(
          (prepared) => {
            if (!asWorker && !stopping) announceStore(context, config, server.url, prepared);
          },
          (error: unknown) => {
            if (stopping) return;
            // As fail-fast would at start: waiting does not cure it (a wrong password, a schema too new).
            app.log.error({ err: error }, 'the database cannot be used: stopping');
            context.stderr.write(`account-api: ${error instanceof Error ? error.message : String(error)}\n`);
            stop(1);
          },
        );
      }
    });
  } finally {
    detachFromProcess();
    // A signal arriving meanwhile (the primary's forward after Ctrl-C) must not kill the worker before its last log lines.
    if (asWorker) signals.handleWith(() => {});
    else signals.release();
  }
}
