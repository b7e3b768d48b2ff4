// `account-api keys ...`: issue a key (shown once), list an account's keys, revoke one by its id.
import { issueKey, KEY_ID_PATTERN } from '../domain/api-keys.ts';
import { DomainError } from '../domain/errors.ts';
import type { ApiKeyRecord, Store } from '../store/store.ts';
import { printJson, printLine, printTable, UsageError, type CliContext } from './cli-context.ts';
import { DATABASE_FLAGS, type CommandGroup } from './command-spec.ts';

export const KEYS: CommandGroup = {
  name: 'keys',
  summary: "API keys: issued for an account, shown once (only a hash is stored), listed and revoked by their id.",
  commands: [
    {
      words: ['keys', 'create'],
      args: ['username'],
      summary:
        'Issues an API key for the account and prints it alone on stdout, this once; with --sandbox (or ACCOUNT_API_SANDBOX=1), a sandbox key.',
      flags: { label: { type: 'string', value: 'LABEL', help: 'a note to tell keys apart (at most 100 characters)' }, ...DATABASE_FLAGS },
      examples: ['KEY=$(npx account-api keys create alice --label ci-runner)'],
    },
    {
      words: ['keys', 'list'],
      args: ['username'],
      summary: "Lists the account's keys: id, prefix, label, created, last used, revoked; never the secret.",
      flags: DATABASE_FLAGS,
      examples: ['npx account-api keys list alice'],
    },
    {
      words: ['keys', 'revoke'],
      args: ['key-id'],
      summary: "Revokes a key by its id (the 12 characters after the prefix, as 'keys list' shows); servers refuse it from the next request.",
      flags: DATABASE_FLAGS,
      examples: ['npx account-api keys revoke 3kTqv9ZbW2aX'],
    },
  ],
};

const LABEL_MAX_LENGTH = 100;

function keyJson(key: ApiKeyRecord) {
  return {
    key_id: key.keyId,
    username: key.username,
    label: key.label,
    prefix: key.displayPrefix,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
  };
}

export async function keysCommand(command: string | undefined, context: CliContext, store: Store): Promise<void> {
  switch (command) {
    case 'create': {
      const [username] = context.args as [string];
      const label = context.flags.label ?? null;
      if (label !== null && (label.length > LABEL_MAX_LENGTH || /\p{Cc}/u.test(label))) {
        throw new DomainError('invalid', 'invalid_label', `A label is at most ${LABEL_MAX_LENGTH} characters, without control characters.`);
      }
      const issued = issueKey(context.flags.sandbox ? 'sandbox' : 'live');
      const record = await store.createKey(username, {
        keyId: issued.keyId,
        hash: issued.hash,
        displayPrefix: issued.displayPrefix,
        label,
      });
      if (context.flags.json) return printJson(context, { ...keyJson(record), key: issued.token });
      // The key alone on stdout, so `KEY=$(account-api keys create alice)` works; the advice goes to stderr.
      printLine(context, issued.token);
      context.stderr.write(`Key ${record.keyId} for ${record.username}: store it now, it cannot be shown again.\n`);
      return;
    }
    case 'list': {
      const [username] = context.args as [string];
      const keys = await store.listKeys(username);
      if (context.flags.json) return printJson(context, keys.map(keyJson));
      if (keys.length === 0) return printLine(context, `${username} has no API keys.`);
      printTable(
        context,
        ['KEY_ID', 'PREFIX', 'LABEL', 'CREATED', 'LAST_USED', 'REVOKED'],
        keys.map((k) => [k.keyId, k.displayPrefix, k.label ?? '-', k.createdAt, k.lastUsedAt ?? 'never', k.revokedAt ?? '-']),
      );
      return;
    }
    case 'revoke': {
      const [keyId] = context.args as [string];
      if (!KEY_ID_PATTERN.test(keyId)) {
        throw new UsageError(`'${keyId}' is not a key id: a key id is the 12 characters after the prefix, as 'keys list' shows`);
      }
      const key = await store.revokeKey(keyId);
      if (context.flags.json) return printJson(context, keyJson(key));
      return printLine(context, `Revoked key ${key.keyId} of ${key.username}; servers refuse it from now on.`);
    }
    default:
      throw new Error(`keys has no command '${command}'`);
  }
}
