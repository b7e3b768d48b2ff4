// `account-api migrate`: applies missing migrations and records the database's environment, saying what it did.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { EnvironmentSource } from '../store/deployment.ts';
import type { Store } from '../store/store.ts';
import { printLine, type CliContext } from './cli-context.ts';
import { DATABASE_FLAGS, type CommandGroup } from './command-spec.ts';

export const MIGRATE: CommandGroup = {
  name: 'migrate',
  summary: 'The database schema.',
  commands: [
    {
      words: ['migrate'],
      args: [],
      summary:
        'Applies the migrations the database lacks (servers and the other commands do it too) and records in the database whether ' +
        'it is live or the sandbox\'s; a command or server of the other environment refuses it from then on.',
      flags: {
        'record-environment': {
          type: 'boolean',
          help: "decide the environment of a database that holds keys of both and so could not be told apart: this command's (live, or the sandbox with --sandbox); never replaces one already recorded",
        },
        ...DATABASE_FLAGS,
      },
      examples: ['npx account-api migrate', 'DATABASE_URL=postgres://... npx account-api migrate --json'],
    },
  ],
};

/** What migrate tells the operator when it has just recorded the database's environment, by how it decided. */
const RECORDED: Readonly<Record<EnvironmentSource, (environment: KeyEnvironment) => string>> = {
  api_keys: (environment) => `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}: every API key it holds is a ${environment} key.`,
  migrator: (environment) =>
    `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}: it held no API key, so it belongs to whoever migrated it first.`,
  operator: (environment) => `Recorded in the database that it is ${environment === 'live' ? 'the live database' : "the sandbox's"}, as --record-environment asked.`,
};

export async function migrateCommand(context: CliContext, store: Store): Promise<void> {
  const report = await store.migrate({ recordEnvironment: context.flags['record-environment'] });
  if (context.flags.json) {
    const { applied, current, environment, environmentRecorded } = report;
    context.stdout.write(`${JSON.stringify({ applied, current, environment, environment_recorded: environmentRecorded })}\n`);
    return;
  }
  printLine(
    context,
    report.applied.length === 0
      ? `Schema is up to date (version ${report.current}).`
      : `Applied migrations ${report.applied.join(', ')}; schema is at version ${report.current}.`,
  );
  if (report.environmentRecorded !== null) printLine(context, RECORDED[report.environmentRecorded](report.environment));
}
