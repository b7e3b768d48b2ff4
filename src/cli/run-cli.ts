// The account-api command line: parses words and flags, opens the store (not for `call`), runs one command, returns an exit status.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import type { KeyEnvironment } from '../domain/api-keys.ts';
import { isDomainError } from '../domain/errors.ts';
import type { EnvironmentSource } from '../store/deployment.ts';
import { openStore } from '../store/open-store.ts';
import { callCommand, CALL_FLAGS, CALL_OPTIONS, CALL_USAGE } from './call.ts';
import { UsageError, type CliContext, type CliFlags, type CliIo } from './cli-context.ts';
import { keysCommand, KEYS_USAGE } from './keys.ts';
import { serveCommand } from './serve.ts';
import { usersCommand, USERS_USAGE } from './users.ts';

const USAGE = `Usage:
account-api serve [--sandbox] [--port PORT] [--host HOST] [--workers N] [--database-url URL] [--store-fail-fast]
account-api migrate [--record-environment]
${USERS_USAGE}
${KEYS_USAGE}
${CALL_USAGE}

Every command takes --json (machine output) and --sandbox (the sandbox database and sandbox keys; for call, the sandbox server).
Every command but call takes --database-url URL (default: DATABASE_URL, else sqlite:./data/account-api.db).
serve keeps trying a PostgreSQL that does not answer at start, answering 503 meanwhile; --store-fail-fast (STORE_FAIL_FAST=1) exits instead.
Each database records whether it is live or the sandbox's; a command or server of the other environment refuses it.
migrate --record-environment records this command's environment (live, or the sandbox with --sandbox) in a database that
holds keys of both environments and so could not be told apart; it never replaces an environment already recorded.

${CALL_OPTIONS}`;

/** Flags of the commands that work on the database, which `call` never opens. */
const STORE_FLAGS = ['database-url', 'premium', 'label', 'port', 'host', 'workers', 'store-fail-fast', 'record-environment'] as const;

function parse(argv: readonly string[]): { words: string[]; flags: CliFlags; help: boolean } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      sandbox: { type: 'boolean', default: false },
      'database-url': { type: 'string' },
      name: { type: 'string' },
      timezone: { type: 'string' },
      premium: { type: 'boolean', default: false },
      label: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      'store-fail-fast': { type: 'boolean', default: false },
      'base-url': { type: 'string' },
      username: { type: 'string' },
      'api-key': { type: 'string' },
      'timeout-ms': { type: 'string' },
      retries: { type: 'string' },
      search: { type: 'string' },
      'record-environment': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const { help, ...flags } = values;
  return { words: positionals, flags: flags as CliFlags, help: help === true };
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr.write(`account-api: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const [command, ...rest] = parsed.words;
  if (parsed.help || command === undefined || command === 'help') {
    (command === undefined && !parsed.help ? io.stderr : io.stdout).write(`${USAGE}\n`);
    return command === undefined && !parsed.help ? 2 : 0;
  }

  const json = parsed.flags.json;
  try {
    // One option table serves every command, so each refuses the flags it would silently ignore.
    for (const flag of command === 'call' ? STORE_FLAGS : CALL_FLAGS) {
      const value = parsed.flags[flag];
      if (value !== undefined && value !== false) throw new UsageError(`--${flag} does not apply to '${command}'`);
    }
    // Before loadConfig: call needs neither the server's configuration nor its database.
    if (command === 'call') return await callCommand({ ...io, flags: parsed.flags, args: rest });
    if (parsed.flags['record-environment'] && command !== 'migrate') throw new UsageError(`--record-environment does not apply to '${command}'`);
    const config = loadConfig(io.env, {
      sandbox: parsed.flags.sandbox,
      databaseUrl: parsed.flags['database-url'],
      port: parsed.flags.port,
      host: parsed.flags.host,
      workers: parsed.flags.workers,
      storeFailFast: parsed.flags['store-fail-fast'],
    });
    if (command === 'serve') return await serveCommand({ ...io, flags: parsed.flags, args: rest }, config);
    const grouped = command === 'users' || command === 'keys';
    // ACCOUNT_API_SANDBOX=1 selects the sandbox as --sandbox does: its keys must be sandbox keys too, not live keys in its database.
    const flags = { ...parsed.flags, sandbox: config.environment === 'sandbox' };
    const context: CliContext = { ...io, flags, args: grouped ? rest.slice(1) : rest };
    if (!['migrate', 'users', 'keys'].includes(command)) throw new UsageError(`unknown command '${command}'`);
    const store = openStore(config);
    try {
      if (command === 'migrate') {
        const report = await store.migrate({ recordEnvironment: parsed.flags['record-environment'] });
        if (json) {
          const { applied, current, environment, environmentRecorded } = report;
          io.stdout.write(`${JSON.stringify({ applied, current, environment, environment_recorded: environmentRecorded })}\n`);
        } else {
          io.stdout.write(report.applied.length === 0 ? `Schema is up to date (version ${report.current}).\n` : `Applied migrations ${report.applied.join(', ')}; schema is at version ${report.current}.\n`);
          if (report.environmentRecorded !== null) io.stdout.write(`${RECORDED[report.environmentRecorded](report.environment)}\n`);
        }
        return 0;
      }
      // Commands other than migrate also bring a fresh database up to date, so the first `users create` just works.
      await store.migrate();
      if (command === 'users') await usersCommand(rest[0], context, store);
      else await keysCommand(rest[0], context, store);
      return 0;
    } finally {
      await store.close();
    }
  } catch (error) {
    return reportFailure(error, io, json);
  }
}

/** What migrate tells the operator when it has just recorded the database's environment, by how it decided. */
const RECORDED: Readonly<Record<EnvironmentSource, (environment: KeyEnvironment) => string>> = {
  api_keys: (environment) => `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}: every API key it holds is a ${environment} key.`,
  migrator: (environment) =>
    `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}: it held no API key, so it belongs to whoever migrated it first.`,
  operator: (environment) => `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}, as --record-environment asked.`,
};

function reportFailure(error: unknown, io: CliIo, json: boolean): number {
  const usage = error instanceof UsageError;
  const known = usage || error instanceof ConfigError || isDomainError(error);
  const code = isDomainError(error) ? error.code : usage ? 'usage' : error instanceof ConfigError ? 'config' : 'internal_error';
  let message = known ? (error as Error).message : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
  // An operator at a terminal needs the engine's own words (refused, unknown host, bad password), not only ours.
  if (isDomainError(error) && error.kind === 'unavailable' && error.cause instanceof Error && error.cause.message) {
    message += ` (${error.cause.message})`;
  }
  if (json) io.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  else io.stderr.write(`account-api: ${message}\n${error instanceof UsageError && !message.includes('\n') ? `\n${USAGE}\n` : ''}`);
  return usage ? 2 : 1;
}
