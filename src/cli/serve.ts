// `account-api serve`: runs the HTTP service until SIGTERM or SIGINT, then shuts down gracefully.
import type { Config } from '../config.ts';
import { startServer } from '../server.ts';
import type { CliContext } from './cli-context.ts';

export async function serveCommand(context: CliContext, config: Config): Promise<void> {
  const server = await startServer(config);
  const { app } = server;
  app.log.info({ url: server.url, environment: config.environment, database: config.database.engine }, 'account-api ready');
  // Also said plainly, whatever LOG_LEVEL is: people and scripts wait for this line.
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

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        app.log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      app.log.info({ signal }, 'shutting down: finishing requests in flight');
      server.close().then(
        () => {
          app.log.info('stopped');
          resolve();
        },
        (error: unknown) => {
          app.log.error({ err: error }, 'shutdown failed');
          process.exitCode = 1;
          resolve();
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
