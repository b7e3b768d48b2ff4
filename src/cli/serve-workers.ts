// `account-api serve --workers N`: the primary. Prepares the store once, forks N workers sharing the port, restarts the dead,
// and on SIGTERM or SIGINT lets each drain. With PostgreSQL down at start it forks anyway and prepares in the background.
import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { Config } from '../config.ts';
import { listenForMetrics, type MetricsListener } from '../http/observability/metrics-listener.ts';
import { prepareStore, serverUrl } from '../server.ts';
import { ConnectingStore, isStoreUnavailable } from '../store/connecting-store.ts';
import { describeDatabase, openStore } from '../store/open-store.ts';
import { announce, announceStore } from './announce.ts';
import type { CliContext } from './cli-context.ts';
import { catchSignals } from './signals.ts';

/** A crash loop backs off (doubling up to 10 s) rather than spinning. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
/** A worker that ran this long was not part of a loop: its restart waits the shortest delay again. */
const STABLE_AFTER_MS = 10_000;

/** Primary to worker, and the worker's answer once its listener is closed. */
export const STOP_ACCEPTING = 'account-api:stop-accepting';
export const STOPPED_ACCEPTING = 'account-api:stopped-accepting';
/** Primary to worker: the store is migrated now; retry without waiting out the back-off. */
export const STORE_PREPARED = 'account-api:store-prepared';
const STOP_ACCEPTING_TIMEOUT_MS = 1000;

const LEVELS = { fatal: 60, error: 50, warn: 40, info: 30, debug: 20, trace: 10, silent: Infinity } as const;

type Log = (level: 'info' | 'warn' | 'error', fields: object, message: string) => void;

/** Shaped like the workers' lines (pino's), so whatever reads the one reads the other. */
function primaryLog(context: CliContext, config: Config): Log {
  const host = hostname();
  return (level, fields, msg) => {
    if (LEVELS[level] < LEVELS[config.logLevel]) return;
    context.stdout.write(`${JSON.stringify({ level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: host, ...fields, msg })}\n`);
  };
}

/** Every worker's metrics, asked over the cluster channel and summed. */
class ClusterMetrics extends AggregatorRegistry<PrometheusContentType> {
  override metrics(): Promise<string> {
    return this.clusterMetrics();
  }
}

interface Slot {
  worker: Worker | null;
  listening: boolean;
  startedAt: number;
  quickCrashes: number;
  restart: NodeJS.Timeout | null;
}

/** 0 when every worker drained and exited 0 after the signal. */
export async function superviseWorkers(context: CliContext, config: Config): Promise<number> {
  const log = primaryLog(context, config);
  const signals = catchSignals();
  let metricsListener: MetricsListener | null = null;
  let waiting: ConnectingStore | null = null;
  try {
    // Once, before any worker: migrations never race and the sandbox is seeded once. With the database down, the primary keeps
    // trying while workers serve 503s.
    const engine = openStore(config);
    let firstFailure: unknown;
    let prepared = await prepareStore(engine, config).catch(async (error: unknown) => {
      if (config.storeFailFast || !isStoreUnavailable(error)) {
        await engine.close();
        throw error;
      }
      firstFailure = error;
      return null;
    });
    if (prepared === null) waiting = new ConnectingStore(engine);
    else await engine.close();
    if (signals.pending !== null) return 0;
    if (config.metrics.port !== null) {
      metricsListener = await listenForMetrics({ registry: new ClusterMetrics(), host: config.metrics.host, port: config.metrics.port });
    }
    const metricsUrl = metricsListener?.url ?? null;

    return await new Promise<number>((resolve) => {
      const slots: Slot[] = Array.from({ length: config.workers }, () => ({
        worker: null,
        listening: false,
        startedAt: 0,
        quickCrashes: 0,
        restart: null,
      }));
      let phase: 'starting' | 'serving' | 'stopping' = 'starting';
      let status = 0;
      let forwarded: NodeJS.Signals = 'SIGTERM';
      let deadline: NodeJS.Timeout | undefined;
      let closing: Set<Worker> | null = null;
      let drainTimer: NodeJS.Timeout | undefined;
      let port = config.port;
      // The admin API is served by the first slot's worker alone: one set of per-token budgets without Redis.
      let adminPort = config.admin.port;
      let adminUrl: string | null = null;
      const live = () => slots.flatMap((slot) => (slot.worker === null ? [] : [slot.worker]));

      const fork = (slot: Slot) => {
        slot.restart = null;
        slot.listening = false;
        slot.startedAt = Date.now();
        // Port 0: later workers share the first one's port; one started when none holds it asks for it by name.
        const pin = config.port === 0 && port !== 0 && !slots.some((each) => each.listening);
        cluster.setupPrimary({ args: [...process.argv.slice(2), ...(pin ? ['--port', String(port)] : [])] });
        const servesAdmin = config.admin.port !== null && slot === slots[0];
        const worker = cluster.fork({ ADMIN_PORT: servesAdmin ? String(adminPort) : '' });
        slot.worker = worker;
        let listened = 0;
        worker.on('listening', (address: AddressInfo) => {
          listened++;
          if (listened === 1) return listening(slot, worker, address);
          adminPort = address.port;
          adminUrl = serverUrl(config.admin.host, address.port);
          announceWhenReady();
        });
        // A failed signal to a worker that just died must not bring the primary down.
        worker.on('error', (error: Error) => log('warn', { workerPid: worker.process.pid, err: error.message }, 'worker channel error'));
        worker.on('message', (message: unknown) => {
          if (message === STOPPED_ACCEPTING) stoppedAccepting(worker);
        });
        worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => exited(slot, worker, code, signal));
      };

      const listening = (slot: Slot, worker: Worker, address: AddressInfo) => {
        slot.listening = true;
        port = address.port;
        if (phase === 'serving') log('info', { workerPid: worker.process.pid }, 'worker restarted and listening');
        announceWhenReady();
      };

      const announceWhenReady = () => {
        if (phase !== 'starting' || !slots.every((each) => each.listening)) return;
        if (config.admin.port !== null && adminUrl === null) return;
        phase = 'serving';
        const url = serverUrl(config.host, port);
        const workerPids = live().map((each) => each.process.pid);
        const waitingForDatabase = prepared === null;
        log('info', { url, environment: config.environment, database: config.database.engine, metricsUrl, workerPids, waitingForDatabase }, 'account-api ready');
        announce(context, config, { url, metricsUrl, adminUrl, store: prepared, workers: config.workers });
      };

      const exited = (slot: Slot, worker: Worker, code: number | null, signal: NodeJS.Signals | null) => {
        slot.worker = null;
        slot.listening = false;
        const workerPid = worker.process.pid;
        if (phase === 'stopping') {
          stoppedAccepting(worker);
          // Killed by the forwarded signal itself: not yet started, or letting go of the channel.
          if (code !== 0 && signal !== forwarded) status = 1;
          if (live().length === 0) finish();
          return;
        }
        if (phase === 'starting') {
          log('error', { workerPid, code, signal }, 'a worker exited before it was listening: stopping');
          stop('SIGTERM', 1);
          return;
        }
        if (Date.now() - slot.startedAt >= STABLE_AFTER_MS) slot.quickCrashes = 0;
        const restartInMs = Math.min(FIRST_RESTART_DELAY_MS * 2 ** slot.quickCrashes, MAX_RESTART_DELAY_MS);
        slot.quickCrashes++;
        log('error', { workerPid, code, signal, restartInMs }, 'worker exited unexpectedly: restarting it');
        slot.restart = setTimeout(() => fork(slot), restartInMs);
      };

      const stop = (signal: NodeJS.Signals, failed: 0 | 1) => {
        phase = 'stopping';
        forwarded = signal;
        status = failed;
        for (const slot of slots) if (slot.restart !== null) clearTimeout(slot.restart);
        deadline = setTimeout(() => {
          const workerPids = live().map((worker) => worker.process.pid);
          log('error', { timeoutMs: config.shutdownTimeoutMs, workerPids }, 'shutdown did not finish within SHUTDOWN_TIMEOUT_MS: killing workers');
          status = 1;
          for (const worker of live()) worker.process.kill('SIGKILL');
        }, config.shutdownTimeoutMs);
        // First all stop accepting, so node:cluster closes the port and clients are refused at once; draining straight away
        // would have 503'd clients reconnect and node:cluster reset connections it accepted for stopping workers.
        closing = new Set(slots.flatMap((slot) => (slot.worker?.isConnected() === true && slot.listening ? [slot.worker] : [])));
        for (const worker of closing) worker.send(STOP_ACCEPTING);
        drainTimer = setTimeout(drain, STOP_ACCEPTING_TIMEOUT_MS);
        if (closing.size === 0) drain();
        if (live().length === 0) finish();
      };

      const stoppedAccepting = (worker: Worker) => {
        if (closing?.delete(worker) === true && closing.size === 0) drain();
      };

      const drain = () => {
        if (closing === null) return;
        closing = null;
        clearTimeout(drainTimer);
        for (const worker of live()) worker.process.kill(forwarded);
      };

      const finish = () => {
        clearTimeout(deadline);
        clearTimeout(drainTimer);
        log('info', {}, 'stopped');
        resolve(status);
      };

      const onSignal = (signal: NodeJS.Signals) => {
        if (phase === 'stopping') {
          log('warn', { signal }, 'second signal: exiting now');
          for (const worker of live()) worker.process.kill('SIGKILL');
          process.exit(1);
        }
        log('info', { signal, workerPids: live().map((worker) => worker.process.pid) }, 'shutting down: workers finish requests in flight');
        stop(signal, 0);
      };

      const prepareLater = (store: ConnectingStore) => {
        const connectLog = {
          info: (fields: object, message: string) => log('info', fields, message),
          warn: (fields: object, message: string) => log('warn', fields, message),
        };
        const target = describeDatabase(config.database);
        store.connect({ prepare: (engine) => prepareStore(engine, config), retryable: isStoreUnavailable, log: connectLog, target, firstFailure }).then(
          (result) => {
            prepared = result;
            store.close().catch(() => undefined);
            for (const worker of live()) if (worker.isConnected()) worker.send(STORE_PREPARED);
            if (phase === 'serving') announceStore(context, config, serverUrl(config.host, port), result);
          },
          (error: unknown) => {
            if (phase === 'stopping') return;
            log('error', { err: error instanceof Error ? error.message : String(error) }, 'the database cannot be used: stopping');
            stop('SIGTERM', 1);
          },
        );
      };

      for (const slot of slots) fork(slot);
      signals.handleWith(onSignal);
      if (waiting !== null) prepareLater(waiting);
    });
  } finally {
    await waiting?.close();
    await metricsListener?.close();
    signals.release();
  }
}
