// The command line's declarations against its parser: what one accepts, the other's --help shows, so the two cannot drift.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UsageError } from '../../../src/cli/cli-context.ts';
import { commandHelp, commandName, synopsis, type CommandSpec, type FlagSpec } from '../../../src/cli/command-spec.ts';
import { parseCommandLine } from '../../../src/cli/parse-command-line.ts';
import { COMMAND_GROUPS, OVERVIEW } from '../../../src/cli/run-cli.ts';

const COMMANDS = COMMAND_GROUPS.flatMap((group) => group.commands);

function flagsOf(command: CommandSpec): [string, FlagSpec][] {
  return Object.entries(command.flags) as [string, FlagSpec][];
}

/** Every flag name any command declares, and some no command does: each is tried on every command. */
const CANDIDATES = [...new Set([...COMMANDS.flatMap((command) => flagsOf(command).map(([name]) => name)), 'frobnicate', 'verbose', 'version', 'output'])];

/** The words, placeholder arguments and required flags that make `command` a complete command line. */
function baseLine(command: CommandSpec, except?: string): string[] {
  const required = flagsOf(command).filter(([name, flag]) => flag.required === true && name !== except);
  return [...command.words, ...command.args.map((arg) => (arg === 'on|off' ? 'on' : 'x')), ...required.flatMap(([name]) => [`--${name}`, 'v'])];
}

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, COMMAND_GROUPS, OVERVIEW);
}

function usageError(argv: readonly string[]): UsageError {
  try {
    parse(argv);
  } catch (error) {
    assert.ok(error instanceof UsageError, `account-api ${argv.join(' ')} threw ${String(error)}, not a UsageError`);
    return error;
  }
  assert.fail(`account-api ${argv.join(' ')} was accepted`);
}

describe('declarations and --help', () => {
  for (const command of COMMANDS) {
    test(`every flag the parser accepts for '${commandName(command)}' is in its --help, and every other one is refused`, () => {
      const help = commandHelp(command);
      for (const name of CANDIDATES) {
        const flag = command.flags[name as keyof typeof command.flags];
        const argv = [...baseLine(command, name), `--${name}`, ...(flag?.type === 'string' ? ['value'] : [])];
        let accepted: boolean;
        try {
          const line = parse(argv);
          accepted = line.kind === 'run';
        } catch (error) {
          assert.ok(error instanceof UsageError, `account-api ${argv.join(' ')} threw ${String(error)}`);
          assert.match(error.message, new RegExp(`unknown option --${name} for '${commandName(command)}'`));
          accepted = false;
        }
        assert.equal(accepted, flag !== undefined, `account-api ${argv.join(' ')}: accepted ${accepted}, declared ${flag !== undefined}`);
        if (accepted) assert.match(help, new RegExp(`^ {2}--${name}\\b`, 'm'), `'${commandName(command)} --help' does not list --${name}:\n${help}`);
      }
    });
  }

  test('a flag name means the same kind of value for every command that takes it', () => {
    const types = new Map<string, string>();
    for (const command of COMMANDS) {
      for (const [name, flag] of flagsOf(command)) {
        assert.equal(types.get(name) ?? flag.type, flag.type, `--${name} is a ${types.get(name)} for one command and a ${flag.type} for '${commandName(command)}'`);
        types.set(name, flag.type);
      }
    }
  });

  test('every command has an example that runs it, and the overview lists every command', () => {
    for (const command of COMMANDS) {
      assert.ok(
        command.examples.some((example) => example.includes(`npx account-api ${commandName(command)}`)),
        `'${commandName(command)}' has no example that runs it: ${command.examples.join(' | ')}`,
      );
      assert.ok(OVERVIEW.includes(synopsis(command)), `the overview does not list ${synopsis(command)}`);
    }
  });
});

describe('parsing', () => {
  test('finds the longest command the words name, its arguments and its flags', () => {
    const line = parse(['keys', 'create', 'alice', '--label', 'ci', '--json']);
    assert.equal(line.kind, 'run');
    if (line.kind !== 'run') return;
    assert.equal(commandName(line.command), 'keys create');
    assert.deepEqual(line.args, ['alice']);
    assert.equal(line.flags.label, 'ci');
    assert.equal(line.flags.json, true);
    assert.equal(line.flags.premium, false, 'a boolean not given reads false');
  });

  test('flags may come before the words', () => {
    const line = parse(['--json', '--label', 'ci', 'keys', 'create', 'alice']);
    assert.equal(line.kind === 'run' && commandName(line.command), 'keys create');
  });

  test('help and version', () => {
    assert.deepEqual(parse(['--help']), { kind: 'help', text: OVERVIEW });
    assert.deepEqual(parse(['help']), { kind: 'help', text: OVERVIEW });
    assert.deepEqual(parse(['-v']), { kind: 'version' });
    const keysCreate = COMMANDS.find((command) => commandName(command) === 'keys create')!;
    assert.deepEqual(parse(['keys', 'create', '--help']), { kind: 'help', text: commandHelp(keysCreate) });
    assert.deepEqual(parse(['help', 'keys', 'create']), { kind: 'help', text: commandHelp(keysCreate) });
  });

  test('a string flag followed by another flag has no value, unless given with =', () => {
    assert.match(usageError(['keys', 'create', 'alice', '--label', '--json']).message, /--label needs a value/);
    const line = parse(['keys', 'create', 'alice', '--label=-x']);
    assert.equal(line.kind === 'run' && line.flags.label, '-x');
  });

  test('a mistake in the words shows the right words; a mistake in a flag points to the command', () => {
    const words = usageError(['keys', 'frobnicate']);
    assert.match(words.usage ?? '', /account-api keys revoke <key-id>/);
    const flag = usageError(['keys', 'list', 'alice', '--label', 'x']);
    assert.equal(flag.message, "unknown option --label for 'keys list'");
    assert.equal(flag.command, 'keys list');
    assert.equal(flag.usage, undefined);
  });
});
