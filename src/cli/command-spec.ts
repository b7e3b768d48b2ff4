// Each command declares its words, arguments, flags and examples once; the parser reads that declaration, and so does --help.
import type { Config } from '../config.ts';
import type { AuditActor, Store } from '../store/store.ts';
import type { CliContext, CliFlags } from './cli-context.ts';

/** So a flag the parser accepts is one a command reads. */
export type FlagName = keyof CliFlags;

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  /** As usage shows it: `--label LABEL`. */
  readonly value?: string;
  readonly help: string;
  /** Shown in --help, not in the one-line usage. */
  readonly shared?: boolean;
  readonly required?: boolean;
}

export interface CommandSpec {
  readonly words: readonly string[];
  /** As usage shows them: `username` as `<username>`; `on|off` as it is. */
  readonly args: readonly string[];
  readonly summary: string;
  readonly flags: Readonly<Partial<Record<FlagName, FlagSpec>>>;
  readonly examples: readonly string[];
}

/** `serve` is a group of one, named by its word alone. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandSpec[];
}

export interface DatabaseCommandInput {
  readonly store: Store;
  readonly config: Config;
  /** `cli:<os user>`, as the audit trail records it. */
  readonly actor: AuditActor;
}

/** run-cli opens and migrates the store, then runs it. */
export interface DatabaseCommand extends CommandSpec {
  /** The parser has counted them against `args`. Resolves with the exit status when it is not 0 (`webhooks test`). */
  run(context: CliContext, input: DatabaseCommandInput, args: PositionalArgs): Promise<void | number>;
}

export type PositionalArgs = readonly [string, ...string[]];

export interface DatabaseCommandGroup extends CommandGroup {
  readonly commands: readonly DatabaseCommand[];
}

export type DatabaseCommandEntry = Omit<DatabaseCommand, 'args' | 'flags'> & Partial<Pick<DatabaseCommand, 'args' | 'flags'>>;

/** Each command gets DATABASE_FLAGS after its own. */
export function databaseGroup(group: Omit<DatabaseCommandGroup, 'commands'> & { readonly commands: readonly DatabaseCommandEntry[] }): DatabaseCommandGroup {
  const commands = group.commands.map((command) => ({ ...command, args: command.args ?? [], flags: { ...command.flags, ...DATABASE_FLAGS } }));
  return { ...group, commands };
}

export const JSON_FLAG: FlagSpec = {
  type: 'boolean',
  help: 'machine-readable output; a failure is {"error": {"code", "message"}} on stderr',
  shared: true,
};

export const DATABASE_FLAGS = {
  'database-url': {
    type: 'string',
    value: 'URL',
    help: 'the database (default: DATABASE_URL, else sqlite:./data/account-api.db; with --sandbox: SANDBOX_DATABASE_URL, else sqlite:./data/sandbox.db)',
    shared: true,
  },
  sandbox: { type: 'boolean', help: "the sandbox's database and sandbox keys (also ACCOUNT_API_SANDBOX=1)", shared: true },
  json: JSON_FLAG,
} as const satisfies Partial<Record<FlagName, FlagSpec>>;

export function commandName(command: CommandSpec): string {
  return command.words.join(' ');
}

function flagUsage(name: string, flag: FlagSpec): string {
  return flag.type === 'string' ? `--${name} ${flag.value ?? 'VALUE'}` : `--${name}`;
}

function flagEntries(command: CommandSpec): [string, FlagSpec][] {
  return Object.entries(command.flags).filter((entry): entry is [string, FlagSpec] => entry[1] !== undefined);
}

/** Shared flags are in --help. */
export function synopsis(command: CommandSpec): string {
  const args = command.args.map((arg) => (arg.includes('|') ? arg : `<${arg}>`));
  const flags = flagEntries(command)
    .filter(([, flag]) => flag.shared !== true)
    .map(([name, flag]) => (flag.required === true ? flagUsage(name, flag) : `[${flagUsage(name, flag)}]`));
  return ['account-api', ...command.words, ...args, ...flags].join(' ');
}

/** A longer word keeps a line of its own. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

const WIDTH = 100;

export function commandHelp(command: CommandSpec): string {
  const rows: [string, string][] = [...flagEntries(command).map(([name, flag]): [string, string] => [flagUsage(name, flag), flag.help]), ['-h, --help', 'this help']];
  const width = Math.max(...rows.map(([left]) => left.length));
  return [
    `Usage: ${synopsis(command)}`,
    '',
    ...wrap(command.summary, WIDTH),
    '',
    'Options:',
    ...rows.map(([left, help]) => `  ${left.padEnd(width)}  ${wrap(help, WIDTH - width - 4).join(`\n${' '.repeat(width + 4)}`)}`),
    '',
    command.examples.length === 1 ? 'Example:' : 'Examples:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}

export function groupUsage(group: CommandGroup): string {
  return ['Usage:', ...group.commands.map((command) => `  ${synopsis(command)}`)].join('\n');
}

/**
 * --help for words that start several commands (`call user`): those commands, each with its summary, and where to look next.
 * Exit 0 as `users --help` does: asking is not a mistake.
 */
export function wordsHelp(group: CommandGroup, words: readonly string[]): string | undefined {
  const commands = group.commands.filter((command) => command.words.length > words.length && words.every((word, index) => command.words[index] === word));
  if (commands.length === 0) return undefined;
  return [
    'Usage:',
    ...commands.flatMap((command) => [`  ${synopsis(command)}`, ...wrap(command.summary, WIDTH - 4).map((line) => `    ${line}`)]),
    '',
    `'account-api ${words.join(' ')} <command> --help' shows a command's flags and an example.`,
  ].join('\n');
}

export function groupHelp(group: CommandGroup): string {
  return [
    groupUsage(group),
    '',
    ...wrap(group.summary, WIDTH),
    '',
    `'account-api ${group.name} <command> --help' shows a command's flags and an example.`,
  ].join('\n');
}
