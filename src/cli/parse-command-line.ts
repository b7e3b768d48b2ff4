// Reads argv against the commands' declarations: which command, its arguments and flags, or a request for help or the version.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import type { CliFlags } from './cli-context.ts';
import { UsageError } from './cli-context.ts';
import { commandHelp, commandName, groupHelp, groupUsage, wordsHelp, type CommandGroup, type CommandSpec, type FlagSpec } from './command-spec.ts';

export type CommandLine =
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly group: CommandGroup; readonly command: CommandSpec; readonly flags: CliFlags; readonly args: readonly string[] };

/** What a flag not given reads as: booleans false, strings absent. */
const DEFAULTS: CliFlags = { json: false, sandbox: false, premium: false, 'store-fail-fast': false, 'record-environment': false, force: false };

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

function optionsOf(flags: Iterable<[string, FlagSpec]>): ParseArgsOptionsConfig {
  return Object.fromEntries([...flags].map(([name, flag]) => [name, { type: flag.type }]));
}

/** Without strictness, so that an unknown flag is reported by us, in one line naming the command, not by parseArgs. */
function scan(argv: readonly string[], options: ParseArgsOptionsConfig): { positionals: string[]; tokens: Token[] } {
  const { positionals, tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  return { positionals, tokens };
}

/**
 * `overview` is printed for `--help` alone and after an unknown command. Throws a UsageError for anything the declarations
 * do not allow: an unknown command or flag, a flag without its value, a missing or extra argument, a required flag left out.
 */
export function parseCommandLine(argv: readonly string[], groups: readonly CommandGroup[], overview: string): CommandLine {
  // First pass, with every flag any command takes (so a value is never mistaken for a word): find the command.
  const everyFlag = groups.flatMap((group) => group.commands.flatMap((command) => Object.entries(command.flags) as [string, FlagSpec][]));
  const first = scan(argv, { ...optionsOf(everyFlag), ...HELP, version: { type: 'boolean', short: 'v' } });
  const asked = (name: string) => first.tokens.some((token) => token.kind === 'option' && token.name === name);
  let words = first.positionals;
  let help = asked('help');
  if (words[0] === 'help') {
    help = true;
    words = words.slice(1);
  }

  const groupName = words[0];
  if (groupName === undefined) {
    if (help) return { kind: 'help', text: overview };
    if (asked('version')) return { kind: 'version' };
    throw new UsageError('which command?', { usage: overview });
  }
  const group = groups.find((candidate) => candidate.name === groupName);
  if (group === undefined) throw new UsageError(`unknown command '${groupName}'`, { usage: overview });
  const command = group.commands
    .filter((candidate) => candidate.words.every((word, index) => words[index] === word))
    .sort((a, b) => b.words.length - a.words.length)[0];
  if (command === undefined) {
    if (help && words.length === 1) return { kind: 'help', text: groupHelp(group) };
    const partial = help ? wordsHelp(group, words) : undefined;
    if (partial !== undefined) return { kind: 'help', text: partial };
    throw wrongWords(group, words);
  }
  if (help) return { kind: 'help', text: commandHelp(command) };

  // Second pass, with this command's flags only.
  const name = commandName(command);
  const see = { command: name };
  const flags: Record<string, string | boolean> = { ...DEFAULTS };
  const declared = new Map(Object.entries(command.flags) as [string, FlagSpec][]);
  const { positionals, tokens } = scan(argv, { ...optionsOf(declared), ...HELP });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const flag = declared.get(token.name);
    if (flag === undefined) throw new UsageError(`unknown option ${token.rawName} for '${name}'`, see);
    const shown = `--${token.name}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}`;
    if (flag.type === 'boolean' && token.inlineValue === true) throw new UsageError(`option --${token.name} takes no value`, see);
    // As parseArgs in strict mode: `--label --json` is a forgotten value, not a label; `--label=-x` is a label.
    if (flag.type === 'string' && (token.value === undefined || (token.inlineValue === false && token.value.startsWith('-')))) {
      throw new UsageError(`option --${token.name} needs a value: ${shown}${token.value === undefined ? '' : ` (a value starting with '-' as --${token.name}=${token.value})`}`, see);
    }
    flags[token.name] = flag.type === 'string' ? token.value! : true;
  }

  const args = positionals.slice(command.words.length);
  // Every option here is this command's (any other was refused above), so the positionals are the first pass's words and the arguments.
  const expected = command.args.map((arg) => (arg.includes('|') ? arg : `<${arg}>`));
  if (args.length < command.args.length) throw new UsageError(`'${name}' needs ${expected.slice(args.length).join(' ')}`, see);
  if (args.length > command.args.length) {
    const extra = args.slice(command.args.length).map((arg) => `'${arg}'`).join(' ');
    throw new UsageError(`unexpected ${extra}: '${name}' takes ${expected.length === 0 ? 'no arguments' : `only ${expected.join(' ')}`}`, see);
  }
  for (const [flagName, flag] of declared) {
    if (flag.required === true && flags[flagName] === undefined) throw new UsageError(`'${name}' needs --${flagName} ${flag.value ?? 'VALUE'}`, see);
  }
  return { kind: 'run', group, command, flags: flags as unknown as CliFlags, args };
}

/** Words that name no command of the group: the group's usage lists the ones that do. */
function wrongWords(group: CommandGroup, words: readonly string[]): UsageError {
  const usage = { usage: groupUsage(group) };
  if (words.length === 1) return new UsageError(`which ${group.name} command?`, usage);
  // `call user`: the start of commands that need one more word.
  const next = new Set(
    group.commands
      .filter((command) => command.words.length > words.length && words.every((word, index) => command.words[index] === word))
      .map((command) => command.words[words.length]),
  );
  if (next.size > 0) return new UsageError(`'${words.join(' ')}' needs one more word: ${[...next].join(' or ')}`, usage);
  return new UsageError(`unknown ${group.name} command '${words.slice(1).join(' ')}'`, usage);
}
