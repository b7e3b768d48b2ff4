// `account-api keys ...`: issue a key (shown once), roll it into a successor, list an account's keys, show one's usage, revoke one by its id.
import { keyState } from '../domain/api-keys.ts';
import { createKey, DEFAULT_OVERLAP, listKeys, MAX_ACTIVE_KEYS, revokeKey, rollKey } from '../operations/keys.ts';
import type { ApiKeyRecord } from '../store/store.ts';
import { keyJson as keyRecordJson, keyUsageJson } from '../operations/representations.ts';
import { readKeyUsage } from '../operations/key-usage.ts';
import { KEY_USAGE_DAYS_SHOWN, KEY_USAGE_OUTCOMES } from '../domain/key-usage.ts';
import { printJson, printLine, printList, printNote, printTable, UsageError } from './cli-context.ts';
import { databaseGroup } from './command-spec.ts';

export const KEYS = databaseGroup({
  name: 'keys',
  summary: "API keys: issued for an account, shown once (only a hash is stored), rolled, listed, their usage shown, and revoked by their id.",
  commands: [
    {
      words: ['keys', 'create'],
      args: ['username'],
      summary:
        'Issues an API key for the account and prints it alone on stdout, this once; with --sandbox (or ACCOUNT_API_SANDBOX=1), a sandbox key. ' +
        `Scope write (the default) allows every endpoint, read only GET. At most ${MAX_ACTIVE_KEYS} keys per account neither expired nor revoked.`,
      flags: {
        label: { type: 'string', value: 'LABEL', help: 'a note to tell keys apart (at most 100 characters)' },
        scope: { type: 'string', value: 'read|write', help: 'what the key may do: write, every endpoint (default); read, GET only' },
        'expires-in': { type: 'string', value: 'DURATION', help: 'expires after 90d, 12h or 30m (days, hours, minutes; at most 10 years)' },
        'expires-at': { type: 'string', value: 'ISO-8601', help: 'expires at this instant, such as 2027-03-01T00:00:00Z (within 10 years)' },
      },
      examples: ['KEY=$(npx account-api keys create alice --label ci-runner)', 'npx account-api keys create alice --scope read --expires-in 90d'],
      run: async (context, { store, actor }, [username]) => {
        const environment = context.flags.sandbox ? 'sandbox' : 'live';
        const { key, token } = await createKey(store, actor, {
          username,
          environment,
          label: context.flags.label ?? null,
          scope: context.flags.scope,
          expiresIn: context.flags['expires-in'],
          expiresAt: context.flags['expires-at'],
        });
        if (context.flags.json) return printJson(context, { ...keyJson(key), key: token });
        // The key alone on stdout, so `KEY=$(account-api keys create alice)` works; the advice goes to stderr.
        printLine(context, token);
        const expiry = key.expiresAt === null ? '' : `, expires ${key.expiresAt}`;
        printNote(context, `Key ${key.keyId} for ${key.username} (scope ${key.scope}${expiry}): store it now, it cannot be shown again.`);
      },
    },
    {
      words: ['keys', 'roll'],
      args: ['key-id'],
      summary:
        'Issues a successor with the same owner, label, scope and lifetime, prints it alone on stdout, this once, and sets the old key ' +
        'to expire when the overlap ends. A key is rolled once; a revoked or expired key cannot be rolled.',
      flags: {
        overlap: { type: 'string', value: 'DURATION', help: `how long the old key keeps working: 24h, 30m, 7d... or 0, not at all (default ${DEFAULT_OVERLAP})` },
      },
      examples: ['NEW_KEY=$(npx account-api keys roll 3kTqv9ZbW2aX --overlap 1h)'],
      run: async (context, { store, actor }, [keyId]) => {
        const environment = context.flags.sandbox ? 'sandbox' : 'live';
        checkKeyIdArgument(keyId);
        const rolled = await rollKey(store, actor, { keyId, environment, overlap: context.flags.overlap });
        if (context.flags.json) return printJson(context, { ...keyJson(rolled.successor), key: rolled.token, rolled_from: keyJson(rolled.old) });
        printLine(context, rolled.token);
        printNote(
          context,
          `Key ${rolled.successor.keyId} for ${rolled.successor.username} replaces ${rolled.old.keyId}, which expires ${rolled.old.expiresAt}: ` +
            'store the new key now, it cannot be shown again.',
        );
      },
    },
    {
      words: ['keys', 'list'],
      args: ['username'],
      summary: "Lists the account's keys: id, prefix, label, scope, state, created, expires, last used, revoked, and the key each was rolled into; never the secret.",
      examples: ['npx account-api keys list alice'],
      run: async (context, { store }, [username]) => {
        const keys = await listKeys(store, { username });
        printList(context, keys, {
          json: keyJson,
          empty: `${username} has no API keys.`,
          columns: ['KEY_ID', 'PREFIX', 'LABEL', 'SCOPE', 'STATE', 'CREATED', 'EXPIRES', 'LAST_USED', 'REVOKED', 'ROLLED_INTO'],
          row: (k) => [
            k.keyId,
            k.displayPrefix,
            k.label ?? '-',
            k.scope,
            keyState(k),
            k.createdAt,
            k.expiresAt ?? 'never',
            k.lastUsedAt ?? 'never',
            k.revokedAt ?? '-',
            k.rolledInto ?? '-',
          ],
        });
      },
    },
    {
      words: ['keys', 'usage'],
      args: ['username', 'key-id'],
      summary:
        `Shows a key's usage over the last ${KEY_USAGE_DAYS_SHOWN} days (UTC), as GET /admin/v0/accounts/{username}/keys/{key_id}/usage ` +
        'does: requests per day by outcome (days without any left out), then the addresses it was last used from, newest first. ' +
        'Each server writes its counts every KEY_USAGE_FLUSH_MS (10 s by default), so the last seconds may not show yet.',
      examples: ['npx account-api keys usage alice 3kTqv9ZbW2aX', 'npx account-api keys usage alice 3kTqv9ZbW2aX --json'],
      run: async (context, { store }, [username, keyId]) => {
        checkKeyIdArgument(keyId!);
        const usage = await readKeyUsage(store, { username, keyId: keyId! });
        if (context.flags.json) return printJson(context, keyUsageJson(usage));
        if (usage.days.length === 0) {
          printLine(context, `No requests with key ${keyId} in the last ${KEY_USAGE_DAYS_SHOWN} days.`);
        } else {
          const outcomes = KEY_USAGE_OUTCOMES.map((outcome) => outcome.toUpperCase());
          printTable(context, ['DAY', ...outcomes], usage.days.map((day) => [day.day, ...KEY_USAGE_OUTCOMES.map((outcome) => String(day[outcome]))]));
        }
        if (usage.addresses.length === 0) return;
        printLine(context, '');
        printTable(context, ['ADDRESS', 'LAST_SEEN'], usage.addresses.map((seen) => [seen.address, seen.lastSeen]));
      },
    },
    {
      words: ['keys', 'revoke'],
      args: ['key-id'],
      summary: "Revokes a key by its id (the 12 characters after the prefix, as 'keys list' shows); servers refuse it from the next request.",
      examples: ['npx account-api keys revoke 3kTqv9ZbW2aX'],
      run: async (context, { store, actor }, [keyId]) => {
        checkKeyIdArgument(keyId);
        const key = await revokeKey(store, actor, { keyId });
        if (context.flags.json) return printJson(context, keyJson(key));
        return printLine(context, `Revoked key ${key.keyId} of ${key.username}; servers refuse it from now on.`);
      },
    },
  ],
});

/** As the admin API shows a key, with its state as of now (the CLI's lists are read by people). */
function keyJson(key: ApiKeyRecord) {
  const { key_id, username, label, prefix, scope, ...rest } = keyRecordJson(key);
  return { key_id, username, label, prefix, scope, state: keyState(key), ...rest };
}

function checkKeyIdArgument(keyId: string): void {
  if (!/^[0-9A-Za-z]{12}$/.test(keyId)) {
    throw new UsageError(`'${keyId}' is not a key id: a key id is the 12 characters after the prefix, as 'keys list' shows`);
  }
}
