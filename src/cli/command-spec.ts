// Each command declares its words, arguments, flags and examples once; the parser reads that declaration, and so does --help.
import type { Config } from '../config.ts';
import type { AuditActor, Store } from '../store/store.ts';
import type { CliContext, CliFlags } from './cli-context.ts';

/** Every flag any command takes is a key of CliFlags, so a flag the parser accepts is one a command reads. */
export type FlagName = keyof CliFlags;

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  /** What a string flag's value is, as usage shows it: `--label LABEL`. */
  readonly value?: string;
  /** One line for --help. */
  readonly help: string;
  /** Shared by a family of commands (--json, --database-url, call's connection flags): in --help, not in the one-line usage. */
  readonly shared?: boolean;
  /** The command cannot run without it (`call user set --name NAME`). */
  readonly required?: boolean;
}

export interface CommandSpec {
  /** The words that name it: `['keys', 'create']`. */
  readonly words: readonly string[];
  /** Its positional arguments, in order, as usage shows them: `username` is shown `<username>`; `on|off` as it is. */
  readonly args: readonly string[];
  /** What it does, in a sentence or two. */
  readonly summary: string;
  readonly flags: Readonly<Partial<Record<FlagName, FlagSpec>>>;
  /** Whole command lines, as an operator types them in the repository. */
  readonly examples: readonly string[];
}

/** A command word (`users`) and the commands under it; `serve` is a group of one, named by its word alone. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandSpec[];
}

/** What a command of the database gets besides its command line: the migrated store, the configuration, who runs it. */
export interface DatabaseCommandInput {
  readonly store: Store;
  readonly config: Config;
  /** The CLI's `cli:<os user>`, as the audit trail records it. */
  readonly actor: AuditActor;
}

/** A command that opens the database, declared and implemented in one place: run-cli opens and migrates the store, then runs it. */
export interface DatabaseCommand extends CommandSpec {
  /** `args` are the positional arguments, as many as the command's `args` names (the parser has counted them). */
  run(context: CliContext, input: DatabaseCommandInput, args: PositionalArgs): Promise<void>;
}

export type PositionalArgs = readonly [string, ...string[]];

export interface DatabaseCommandGroup extends CommandGroup {
  readonly commands: readonly DatabaseCommand[];
}

/** A database command as declared: no positional argument unless it says, and only its own flags. */
export type DatabaseCommandEntry = Omit<DatabaseCommand, 'args' | 'flags'> & Partial<Pick<DatabaseCommand, 'args' | 'flags'>>;

/** A group of database commands, each given the flags every command that opens the database takes (DATABASE_FLAGS, after its own). */
export function databaseGroup(group: Omit<DatabaseCommandGroup, 'commands'> & { readonly commands: readonly DatabaseCommandEntry[] }): DatabaseCommandGroup {
  const commands = group.commands.map((command) => ({ ...command, args: command.args ?? [], flags: { ...command.flags, ...DATABASE_FLAGS } }));
  return { ...group, commands };
}

export const JSON_FLAG: FlagSpec = {
  type: 'boolean',
  help: 'machine-readable output; a failure is {"error": {"code", "message"}} on stderr',
  shared: true,
};

/** The flags of every command that opens the database. */
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

/** One line: the words, the arguments, and the command's own flags (shared ones are in --help). */
export function synopsis(command: CommandSpec): string {
  const args = command.args.map((arg) => (arg.includes('|') ? arg : `<${arg}>`));
  const flags = flagEntries(command)
    .filter(([, flag]) => flag.shared !== true)
    .map(([name, flag]) => (flag.required === true ? flagUsage(name, flag) : `[${flagUsage(name, flag)}]`));
  return ['account-api', ...command.words, ...args, ...flags].join(' ');
}

/** `text` broken between words into lines of at most `width` characters (a longer word keeps a line of its own). */
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

/** `account-api keys create --help`: usage, what it does, every flag it takes, examples. */
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

/** `account-api keys --help`: the usage of each command of the group, and where each one's flags are. */
export function groupUsage(group: CommandGroup): string {
  return ['Usage:', ...group.commands.map((command) => `  ${synopsis(command)}`)].join('\n');
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
