// `account-api serve`: runs the HTTP service until SIGTERM or SIGINT, then shuts down gracefully.
import type { Config } from '../config.ts';
import { startServer, type RunningServer } from '../server.ts';
import type { CliContext } from './cli-context.ts';

function announce(context: CliContext, config: Config, server: RunningServer): void {
  server.app.log.info(
    { url: server.url, environment: config.environment, database: config.database.engine, metricsUrl: server.metricsUrl },
    'account-api ready',
  );
  // Also said plainly, whatever LOG_LEVEL is: people and scripts wait for this line.
  if (server.metricsUrl !== null) context.stderr.write(`metrics at ${server.metricsUrl}\n`);
  context.stderr.write(`account-api listening at ${server.url} (${config.environment}, ${config.database.engine})\n`);
  if (config.environment === 'sandbox') {
    const lines = server.demoAccounts.map(
      (demo) => `  ${demo.username.padEnd(11)} ${demo.premium ? 'Premium    ' : 'not Premium'}  ${demo.key.token}`,
    );
    context.stderr.write(`Sandbox at ${server.url}/api/v0 (X-Environment: sandbox). Demo accounts and keys:\n${lines.join('\n')}\n`);
  } else if (server.accountCount === 0) {
    context.stderr.write(
      `No accounts yet. Create a Premium account and a key for it with:\n` +
        `  npx account-api users create alice --name "Alice" --premium\n` +
        `  npx account-api keys create alice\n` +
        `then try: curl -u alice:THE_KEY ${server.url}/api/v0/user\n`,
    );
  }
}

export async function serveCommand(context: CliContext, config: Config): Promise<void> {
  // Listen for signals before anything starts, so a SIGTERM during start-up still ends in a clean shutdown.
  let pending: NodeJS.Signals | null = null;
  let onSignal = (signal: NodeJS.Signals) => {
    pending = signal;
  };
  const handler = (signal: NodeJS.Signals) => onSignal(signal);
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  try {
    const server = await startServer(config);
    const { app } = server;
    announce(context, config, server);

    await new Promise<void>((resolve) => {
      let stopping = false;
      onSignal = (signal) => {
        if (stopping) {
          app.log.warn({ signal }, 'second signal: exiting now');
          process.exit(1);
        }
        stopping = true;
        app.log.info({ signal }, 'shutting down: finishing requests in flight');
        // A request or an engine that never finishes must not keep the process from exiting.
        const deadline = setTimeout(() => {
          app.log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown did not finish within SHUTDOWN_TIMEOUT_MS: exiting now');
          process.exit(1);
        }, config.shutdownTimeoutMs);
        deadline.unref();
        server.close().then(
          () => {
            clearTimeout(deadline);
            app.log.info('stopped');
            resolve();
          },
          (error: unknown) => {
            clearTimeout(deadline);
            app.log.error({ err: error }, 'shutdown failed');
            process.exitCode = 1;
            resolve();
          },
        );
      };
      if (pending !== null) onSignal(pending);
    });
  } finally {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  }
}
