// The account-api command line: finds the command, opens what it needs (the store, not for `call`), runs it, returns a status.
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

/** In --help's order. */
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
  // serve keeps serving when its output is closed; every other command stops there, quietly.
  let serving = false;
  onClosedOutput([io.stdout, io.stderr], () => {
    if (!serving) io.exit(CLOSED_OUTPUT_STATUS);
  });
  let line: ReturnType<typeof parseCommandLine>;
  try {
    line = parseCommandLine(argv, COMMAND_GROUPS, OVERVIEW);
  } catch (error) {
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
    // call needs neither the server's configuration nor its database.
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
    // ACCOUNT_API_SANDBOX=1 means --sandbox: its keys must be sandbox keys too.
    const context: CliContext = { ...io, flags: { ...line.flags, sandbox: config.environment === 'sandbox' }, args };
    if (group === SERVE) return await serveCommand({ ...io, flags: line.flags, args }, config);
    if (group === BACKUP) {
      await backupCommand(context, config);
      return 0;
    }
    const engine = openStore(config);
    // Only commands that change credentials tell the instances' caches.
    const noticed = group === USERS || group === KEYS ? await withCredentialNotices(engine, config, context) : null;
    const store = noticed?.store ?? engine;
    try {
      if (group === MIGRATE) {
        await migrateCommand(context, store);
        return 0;
      }
    // So the first `users create` on a fresh database just works.
      await store.migrate();
      const status = await (command as DatabaseCommand).run(context, { store, config, actor: cliActor(operatingSystemUser()) }, args as unknown as PositionalArgs);
      return typeof status === 'number' ? status : 0;
    } finally {
      await store.close();
      await noticed?.close();
    }
  } catch (error) {
    return reportFailure(error, io, line.flags.json, commandName(command), line.flags);
  }
}

/** A uid when the system has no name for it (a container's). */
function operatingSystemUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

/**
 * A flag's value the configuration refused, or an 'invalid' naming a field an operation checked before reading data.
 * The database's state (a missing account, a taken name) is a refusal instead.
 */
function isCommandLineValue(error: unknown): boolean {
  if (error instanceof ConfigError) return error.flag !== undefined;
  return isDomainError(error) && error.kind === 'invalid' && error.field !== undefined;
}

/** Usage errors exit 2, refusals 1; one line pointing to --help (unknown words followed by the known ones). */
function reportFailure(error: unknown, io: CliIo, json: boolean, command: string | undefined, flags?: CliFlags): number {
  const usage = error instanceof UsageError || isCommandLineValue(error);
  const known = usage || error instanceof ConfigError || isDomainError(error);
  const code = isDomainError(error) ? error.code : usage ? 'usage' : error instanceof ConfigError ? 'config' : 'internal_error';
  let message = known ? (error as Error).message : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
  // An operator needs the engine's own words (refused, unknown host, bad password), not only ours.
  if (isDomainError(error) && error.kind === 'unavailable' && error.cause instanceof Error && error.cause.message) {
    message += ` (${error.cause.message})`;
  }
  // The API's field names (expires_in) as the command line's flags (--expires-in).
  const flag = isDomainError(error) && usage ? error.field?.replaceAll('_', '-') : undefined;
  if (flag !== undefined && flags?.[flag as keyof CliFlags] !== undefined) message = `--${flag}: ${message}`;
  const shownUsage = error instanceof UsageError ? error.usage : undefined;
  const helpFor = error instanceof UsageError ? (error.command ?? command) : command;
  if (usage && shownUsage === undefined && helpFor !== undefined) message = `${message.replace(/(?<!\.)\.$/, '')}; see 'account-api ${helpFor} --help'`;
  // A message may quote a value: escaped as any printed text (terminal-text.ts).
  if (json) io.stderr.write(`${terminalJson(JSON.stringify({ error: { code, message } }))}\n`);
  else io.stderr.write(`account-api: ${known ? terminalText(message) : message}\n${shownUsage === undefined ? '' : `\n${shownUsage}\n`}`);
  return usage ? 2 : 1;
}
