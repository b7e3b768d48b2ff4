// Process entry: runs the account-api command line (serve, migrate, users, keys, backup, call) and exits with its status.
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';

// Node keeps what it compiled (our TypeScript with its types stripped, and every module's bytecode) on disk and reuses it, so
// a command starts in about two thirds of the time (docs/operations.md#start-up). Turned on before the rest is imported, so it
// covers all of it. In the installation's own node_modules/.cache, never the shared temporary directory, where another user
// could plant compiled code first; where it cannot be written (a read-only installation) Node carries on without it.
// NODE_COMPILE_CACHE names another directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache(join(import.meta.dirname, '..', 'node_modules', '.cache', 'node-compile-cache'));
const { runCli } = await import('./cli/run-cli.ts');

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  exit: (status) => process.exit(status),
});
