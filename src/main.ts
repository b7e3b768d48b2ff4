// Process entry: runs the account-api command line (serve, migrate, users, keys, backup, call) and exits with its status.
import { runCli } from './cli/run-cli.ts';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  exit: (status) => process.exit(status),
});
