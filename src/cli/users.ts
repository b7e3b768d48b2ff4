// `account-api users ...`: create, list, show, grant or remove Premium, delete accounts.
import { accountNotFound } from '../store/store-errors.ts';
import { checkDisplayName, checkUsername } from '../domain/names.ts';
import { checkTimezone } from '../domain/timezone-choice.ts';
import { loadTimezoneCatalog } from '../domain/timezones.ts';
import type { Account, Store } from '../store/store.ts';
import { printJson, printLine, printTable, requireArgs, UsageError, type CliContext } from './cli-context.ts';

export const USERS_USAGE = `account-api users create <username> [--name NAME] [--timezone TZ] [--premium]
account-api users list
account-api users show <username>
account-api users premium <username> on|off
account-api users delete <username>`;

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
      const [username] = requireArgs(context, ['username'], USERS_USAGE) as [string];
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
      requireArgs(context, [], USERS_USAGE);
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
      const [username] = requireArgs(context, ['username'], USERS_USAGE) as [string];
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
      const [username, state] = requireArgs(context, ['username', 'on|off'], USERS_USAGE) as [string, string];
      if (state !== 'on' && state !== 'off') throw new UsageError(`Premium is 'on' or 'off', not '${state}'`);
      const account = await store.setPremium(username, state === 'on');
      if (context.flags.json) return printJson(context, accountJson(account));
      return printLine(context, `Premium is now ${state} for ${account.username}.`);
    }
    case 'delete': {
      const [username] = requireArgs(context, ['username'], USERS_USAGE) as [string];
      await store.deleteAccount(username);
      if (context.flags.json) return printJson(context, { deleted: username });
      return printLine(context, `Deleted ${username} and all of its API keys.`);
    }
    default:
      throw new UsageError(command === undefined ? `which users command?\n${USERS_USAGE}` : `unknown users command '${command}'\n${USERS_USAGE}`);
  }
}
