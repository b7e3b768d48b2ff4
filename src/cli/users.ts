// `account-api users ...`: create, list, show, grant or remove Premium, delete accounts.
import { loadTimezoneCatalog } from '../domain/timezones.ts';
import { checkUsernamePrefix } from '../domain/names.ts';
import { createAccount, deleteAccount, findAccount, listAccounts, pageAccounts, setPremium } from '../operations/accounts.ts';
import { listKeys } from '../operations/keys.ts';
import type { Account, Store } from '../store/store.ts';
import { accountJson } from '../operations/representations.ts';
import { printJson, printLine, printList, printTable, UsageError } from './cli-context.ts';
import { databaseGroup } from './command-spec.ts';

export const USERS = databaseGroup({
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
      },
      examples: ['npx account-api users create alice --name "Alice" --premium'],
      run: async (context, { store, actor }, [username]) => {
        const account = await createAccount(store, actor, loadTimezoneCatalog(), {
          username,
          name: context.flags.name,
          timezone: context.flags.timezone,
          premium: context.flags.premium,
        });
        if (context.flags.json) return printJson(context, accountJson(account));
        printLine(context, `Created ${describe(account)}.`);
        printLine(context, `Give it an API key with: npx account-api keys create ${account.username}${context.flags.sandbox ? ' --sandbox' : ''}`);
      },
    },
    {
      words: ['users', 'list'],
      summary: 'Lists every account, oldest first: id, username, Premium, timezone and name; with --prefix, only the matching ones.',
      flags: {
        prefix: { type: 'string', value: 'TEXT', help: "only usernames starting with TEXT, ignoring case ('_' is itself, not a wildcard)" },
      },
      examples: ['npx account-api users list --json', 'npx account-api users list --prefix ali'],
      run: async (context, { store }) => {
        const prefix = context.flags.prefix;
        const accounts = prefix === undefined ? await listAccounts(store) : await accountsStartingWith(store, checkUsernamePrefix(prefix, 'prefix'));
        printList(context, accounts, {
          json: accountJson,
          empty: prefix === undefined ? 'No accounts yet.' : `No username starts with '${prefix}'.`,
          columns: ['USER_ID', 'USERNAME', 'PREMIUM', 'TIMEZONE', 'NAME'],
          row: (a) => [String(a.id), a.username, a.premium ? 'yes' : 'no', a.timezone, a.name],
        });
      },
    },
    {
      words: ['users', 'show'],
      args: ['username'],
      summary: 'Shows one account and how many API keys it has that are neither revoked nor expired.',
      examples: ['npx account-api users show alice'],
      run: async (context, { store }, [username]) => {
        const account = await findAccount(store, { username });
        const keys = await listKeys(store, { username });
        // Keys that still open the account: neither revoked nor expired.
        const now = new Date().toISOString();
        const activeKeys = keys.filter((key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now)).length;
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
      },
    },
    {
      words: ['users', 'premium'],
      args: ['username', 'on|off'],
      summary: "Grants or removes an account's Premium; servers apply it from the next request.",
      examples: ['npx account-api users premium alice off'],
      run: async (context, { store, actor }, [username, state]) => {
        if (state !== 'on' && state !== 'off') throw new UsageError(`Premium is 'on' or 'off', not '${state}'`);
        const account = await setPremium(store, actor, { username, premium: state === 'on' });
        if (context.flags.json) return printJson(context, accountJson(account));
        return printLine(context, `Premium is now ${state} for ${account.username}.`);
      },
    },
    {
      words: ['users', 'delete'],
      args: ['username'],
      summary: 'Deletes an account and all of its API keys.',
      examples: ['npx account-api users delete alice'],
      run: async (context, { store, actor }, [username]) => {
        await deleteAccount(store, actor, { username });
        if (context.flags.json) return printJson(context, { deleted: username });
        return printLine(context, `Deleted ${username} and all of its API keys.`);
      },
    },
  ],
});


function describe(account: Account): string {
  return `${account.username} (user_id ${account.id}, ${account.premium ? 'Premium' : 'not Premium'}, name ${JSON.stringify(account.name)}, timezone ${account.timezone})`;
}

/** Every match, a page at a time as the admin API reads them (the store's one search), so no one statement holds them all. */
async function accountsStartingWith(store: Store, prefix: string): Promise<Account[]> {
  const accounts: Account[] = [];
  for (;;) {
    const page = await pageAccounts(store, { afterId: accounts.at(-1)?.id ?? null, limit: 1000, usernamePrefix: prefix });
    accounts.push(...page);
    if (page.length < 1000) return accounts;
  }
}
