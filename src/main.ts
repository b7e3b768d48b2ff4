// Process entry: runs the account-api command line (serve, migrate, users, keys, backup, call) and exits with its status.
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';

// Node's compile cache (docs/operations.md, "Start-up and the compile cache"): every module's code, its types stripped and
// compiled, kept on disk, so that the next start neither strips nor parses it again: faster, and without the memory type
// stripping takes. Enabled before the command's modules load, hence the import() below. NODE_COMPILE_CACHE (Node's own
// variable, which Node reads before this line, and alone: a directory it cannot use is not swapped for ours) puts it elsewhere,
// and NODE_DISABLE_COMPILE_CACHE=1 turns it off; where it cannot be written, nothing changes.
if (process.env.NODE_COMPILE_CACHE === undefined) enableCompileCache(join(import.meta.dirname, '..', 'node_modules', '.cache', 'account-api'));

const { runCli } = await import('./cli/run-cli.ts');

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
});
