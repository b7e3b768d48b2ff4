// The account-api command line: finds the command argv names, opens what it needs (the store, not for `call`), runs it, returns an exit status.
import packageJson from '../../package.json' with { type: 'json' };
import { ConfigError, loadConfig } from '../config.ts';
import { userInfo } from 'node:os';
import { isDomainError } from '../domain/errors.ts';
import { cliActor } from '../operations/actor.ts';
import { openStore } from '../store/open-store.ts';
import { ADMIN_TOKENS } from './admin-tokens.ts';
import { AUDIT } from './audit.ts';
import { BACKUP, backupCommand } from './backup.ts';
import { CALL, callCommand } from './call.ts';
import { CLOSED_OUTPUT_STATUS, onClosedOutput } from './closed-output.ts';
import { withCredentialNotices } from './credential-notices.ts';
import { UsageError, type CliContext, type CliFlags, type CliIo } from './cli-context.ts';
import { commandName, synopsis, type CommandGroup, type DatabaseCommand, type PositionalArgs } from './command-spec.ts';
import { KEYS } from './keys.ts';
import { MIGRATE, migrateCommand } from './migrate.ts';
import { parseCommandLine } from './parse-command-line.ts';
import { SERVE, serveCommand } from './serve.ts';
import { USERS } from './users.ts';
import { WEBHOOKS } from './webhooks.ts';
import { terminalJson, terminalText } from './terminal-text.ts';

/** Every command, in the order --help lists them. */
export const COMMAND_GROUPS: readonly CommandGroup[] = [SERVE, MIGRATE, USERS, KEYS, ADMIN_TOKENS, AUDIT, WEBHOOKS, BACKUP, CALL];

export const OVERVIEW = `account-api ${packageJson.version}: the account API server and the commands that run it.

Usage:
${COMMAND_GROUPS.flatMap((group) => group.commands.map((command) => `  ${synopsis(command)}`)).join('\n')}

Every command takes --json (machine output) and --sandbox (the sandbox's database and keys; for call, the sandbox server).
Every command but call takes --database-url URL (default: DATABASE_URL, else sqlite:./data/account-api.db).
call takes --base-url URL, --username NAME with --api-key KEY, --timeout-ms MS and --retries N
(default: ACCOUNT_API_URL, ACCOUNT_API_USERNAME, ACCOUNT_API_KEY).
Exit status: 0 done; 1 refused (the message says why); 2 a wrong command line (a flag's or argument's value included);
141 the output was closed before it was all written (as 'account-api audit | head -1').

'account-api <command> --help' (or 'account-api help <command>') shows a command's flags and an example;
'account-api --version' its version.`;

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // serve keeps serving when its output is closed (those lines are lost); every other command stops there, quietly.
  let serving = false;
  onClosedOutput([io.stdout, io.stderr], () => {
    if (!serving) io.exit(CLOSED_OUTPUT_STATUS);
  });
  let line: ReturnType<typeof parseCommandLine>;
  try {
    line = parseCommandLine(argv, COMMAND_GROUPS, OVERVIEW);
  } catch (error) {
    // The flags could not be read, so --json is taken as written.
    return reportFailure(error, io, argv.includes('--json'), undefined);
  }
  if (line.kind === 'help') {
    io.stdout.write(`${line.text}\n`);
    return 0;
  }
  if (line.kind === 'version') {
    io.stdout.write(argv.includes('--json') ? `${JSON.stringify({ version: packageJson.version })}\n` : `${packageJson.version}\n`);
    return 0;
  }

  const { group, command, args } = line;
  serving = group === SERVE;
  try {
    // Before loadConfig: call needs neither the server's configuration nor its database.
    if (group === CALL) return await callCommand({ ...io, flags: line.flags, args }, command);
    const config = loadConfig(
      io.env,
      {
        sandbox: line.flags.sandbox,
        databaseUrl: line.flags['database-url'],
        port: line.flags.port,
        host: line.flags.host,
        workers: line.flags.workers,
        storeFailFast: line.flags['store-fail-fast'],
      },
      io.cwd,
    );
    // ACCOUNT_API_SANDBOX=1 selects the sandbox as --sandbox does: its keys must be sandbox keys too, not live keys in its database.
    const context: CliContext = { ...io, flags: { ...line.flags, sandbox: config.environment === 'sandbox' }, args };
    if (group === SERVE) return await serveCommand({ ...io, flags: line.flags, args }, config);
    if (group === BACKUP) {
      await backupCommand(context, config);
      return 0;
    }
    const engine = openStore(config);
    // Only the commands that change credentials tell the instances' caches (and wait for Redis to do so).
    const noticed = group === USERS || group === KEYS ? await withCredentialNotices(engine, config, context) : null;
    const store = noticed?.store ?? engine;
    try {
      if (group === MIGRATE) {
        await migrateCommand(context, store);
        return 0;
      }
      // The other commands bring a fresh database up to date too, so the first `users create` just works.
      await store.migrate();
      // What is left is a group of DatabaseCommands (users, keys, admin-tokens, audit, webhooks): each runs itself.
      await (command as DatabaseCommand).run(context, { store, config, actor: cliActor(operatingSystemUser()) }, args as unknown as PositionalArgs);
      return 0;
    } finally {
      await store.close();
      await noticed?.close();
    }
  } catch (error) {
    return reportFailure(error, io, line.flags.json, commandName(command), line.flags);
  }
}

/** Who runs the command, as the audit trail records it; a uid when the system has no name for it (a container's). */
function operatingSystemUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

/**
 * A value the command line gave that a rule refuses: a flag's, checked by the configuration, or one an operation checks before
 * it reads any data (kind 'invalid', naming its field: a scope, a duration, --since, a username). The database's state (an
 * account that does not exist, a name taken) is a refusal instead; so is an 'invalid' naming no field (backup of PostgreSQL).
 */
function isCommandLineValue(error: unknown): boolean {
  if (error instanceof ConfigError) return error.flag !== undefined;
  return isDomainError(error) && error.kind === 'invalid' && error.field !== undefined;
}

/**
 * Usage errors (a refused value on the command line included) exit 2, refusals 1. Each is one line, pointing to the command's
 * --help; words that name no command are followed by the ones that do. A refused value keeps its own code (invalid_scope).
 */
function reportFailure(error: unknown, io: CliIo, json: boolean, command: string | undefined, flags?: CliFlags): number {
  const usage = error instanceof UsageError || isCommandLineValue(error);
  const known = usage || error instanceof ConfigError || isDomainError(error);
  const code = isDomainError(error) ? error.code : usage ? 'usage' : error instanceof ConfigError ? 'config' : 'internal_error';
  let message = known ? (error as Error).message : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
  // An operator at a terminal needs the engine's own words (refused, unknown host, bad password), not only ours.
  if (isDomainError(error) && error.kind === 'unavailable' && error.cause instanceof Error && error.cause.message) {
    message += ` (${error.cause.message})`;
  }
  // The operations name the field in the API's words (expires_in); the command line's are its flags (--expires-in).
  const flag = isDomainError(error) && usage ? error.field?.replaceAll('_', '-') : undefined;
  if (flag !== undefined && flags?.[flag as keyof CliFlags] !== undefined) message = `--${flag}: ${message}`;
  const shownUsage = error instanceof UsageError ? error.usage : undefined;
  const helpFor = error instanceof UsageError ? (error.command ?? command) : command;
  if (usage && shownUsage === undefined && helpFor !== undefined) message = `${message.replace(/(?<!\.)\.$/, '')}; see 'account-api ${helpFor} --help'`;
  // A message may quote a value (the command line's, or a stored one): escaped as any printed text (terminal-text.ts).
  if (json) io.stderr.write(`${terminalJson(JSON.stringify({ error: { code, message } }))}\n`);
  else io.stderr.write(`account-api: ${known ? terminalText(message) : message}\n${shownUsage === undefined ? '' : `\n${shownUsage}\n`}`);
  return usage ? 2 : 1;
}
