// `account-api users ...`: create, list, show, grant or remove Premium, delete accounts.
import { accountNotFound } from '../store/store-errors.ts';
import { checkDisplayName, checkUsername } from '../domain/names.ts';
import { checkTimezone } from '../domain/timezone-choice.ts';
import { loadTimezoneCatalog } from '../domain/timezones.ts';
import type { Account, Store } from '../store/store.ts';
import { printJson, printLine, printTable, UsageError, type CliContext } from './cli-context.ts';
import { DATABASE_FLAGS, type CommandGroup } from './command-spec.ts';

export const USERS: CommandGroup = {
  name: 'users',
  summary: 'Accounts in the database the server uses, also while it runs: a change takes effect at once.',
  commands: [
    {
      words: ['users', 'create'],
      args: ['username'],
      summary: 'Creates an account: 1 to 64 letters, digits, ".", "_" or "-", unique ignoring case.',
      flags: {
        name: { type: 'string', value: 'NAME', help: 'its display name (default: the username)' },
        timezone: { type: 'string', value: 'TZ', help: 'an IANA timezone such as Europe/Paris (default: UTC)' },
        premium: { type: 'boolean', help: 'with Premium, which the settings and user endpoints need' },
        ...DATABASE_FLAGS,
      },
      examples: ['npx account-api users create alice --name "Alice" --premium'],
    },
    {
      words: ['users', 'list'],
      args: [],
      summary: 'Lists every account: id, username, Premium, timezone and name.',
      flags: DATABASE_FLAGS,
      examples: ['npx account-api users list --json'],
    },
    {
      words: ['users', 'show'],
      args: ['username'],
      summary: 'Shows one account and how many API keys it has that are not revoked.',
      flags: DATABASE_FLAGS,
      examples: ['npx account-api users show alice'],
    },
    {
      words: ['users', 'premium'],
      args: ['username', 'on|off'],
      summary: "Grants or removes an account's Premium; servers apply it from the next request.",
      flags: DATABASE_FLAGS,
      examples: ['npx account-api users premium alice off'],
    },
    {
      words: ['users', 'delete'],
      args: ['username'],
      summary: 'Deletes an account and all of its API keys.',
      flags: DATABASE_FLAGS,
      examples: ['npx account-api users delete alice'],
    },
  ],
};

function accountJson(account: Account) {
  return {
    user_id: account.id,
    username: account.username,
    name: account.name,
    timezone: account.timezone,
    premium: account.premium,
    created_at: account.createdAt,
  };
}

function describe(account: Account): string {
  return `${account.username} (user_id ${account.id}, ${account.premium ? 'Premium' : 'not Premium'}, name ${JSON.stringify(account.name)}, timezone ${account.timezone})`;
}

export async function usersCommand(command: string | undefined, context: CliContext, store: Store): Promise<void> {
  switch (command) {
    case 'create': {
      const [username] = context.args as [string];
      checkUsername(username);
      const name = checkDisplayName(context.flags.name ?? username, 'name');
      const timezone = checkTimezone(loadTimezoneCatalog(), context.flags.timezone ?? 'UTC', 'timezone');
      const account = await store.createAccount({ username, name, timezone, premium: context.flags.premium });
      if (context.flags.json) return printJson(context, accountJson(account));
      printLine(context, `Created ${describe(account)}.`);
      printLine(context, `Give it an API key with: npx account-api keys create ${account.username}${context.flags.sandbox ? ' --sandbox' : ''}`);
      return;
    }
    case 'list': {
      const accounts = await store.listAccounts();
      if (context.flags.json) return printJson(context, accounts.map(accountJson));
      if (accounts.length === 0) return printLine(context, 'No accounts yet.');
      printTable(
        context,
        ['USER_ID', 'USERNAME', 'PREMIUM', 'TIMEZONE', 'NAME'],
        accounts.map((a) => [String(a.id), a.username, a.premium ? 'yes' : 'no', a.timezone, a.name]),
      );
      return;
    }
    case 'show': {
      const [username] = context.args as [string];
      const account = await store.findAccount(username);
      if (account === null) throw accountNotFound(username);
      const keys = await store.listKeys(username);
      const activeKeys = keys.filter((key) => key.revokedAt === null).length;
      if (context.flags.json) return printJson(context, { ...accountJson(account), active_keys: activeKeys });
      printTable(context, ['FIELD', 'VALUE'], [
        ['user_id', String(account.id)],
        ['username', account.username],
        ['name', account.name],
        ['timezone', account.timezone],
        ['premium', account.premium ? 'yes' : 'no'],
        ['created_at', account.createdAt],
        ['active_keys', String(activeKeys)],
      ]);
      return;
    }
    case 'premium': {
      const [username, state] = context.args as [string, string];
      if (state !== 'on' && state !== 'off') throw new UsageError(`Premium is 'on' or 'off', not '${state}'`);
      const account = await store.setPremium(username, state === 'on');
      if (context.flags.json) return printJson(context, accountJson(account));
      return printLine(context, `Premium is now ${state} for ${account.username}.`);
    }
    case 'delete': {
      const [username] = context.args as [string];
      await store.deleteAccount(username);
      if (context.flags.json) return printJson(context, { deleted: username });
      return printLine(context, `Deleted ${username} and all of its API keys.`);
    }
    default:
      throw new Error(`users has no command '${command}'`);
  }
}
