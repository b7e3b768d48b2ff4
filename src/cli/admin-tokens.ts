// `account-api admin-tokens ...`: tokens for the admin API (ADMIN_PORT), made, listed with their last use, and revoked.
import { createAdminToken, revokeAdminToken } from '../operations/admin-tokens.ts';
import type { AdminTokenRecord } from '../store/store.ts';
import { printJson, printLine, printList, printNote } from './cli-context.ts';
import { databaseGroup } from './command-spec.ts';

export const ADMIN_TOKENS = databaseGroup({
  name: 'admin-tokens',
  summary: 'Tokens for the admin API (ADMIN_PORT): shown once (only a hash is stored), listed with their last use, revoked by their id.',
  commands: [
    {
      words: ['admin-tokens', 'create'],
      summary:
        'Makes an admin token (aapi_admin_..., with --sandbox aapi_admin_sandbox_...) and prints it alone on stdout, this once. ' +
        'Callers of the admin API send it as Authorization: Bearer TOKEN.',
      flags: {
        label: { type: 'string', value: 'LABEL', help: 'who holds the token, such as billing (1 to 100 characters)', required: true },
      },
      examples: ['ADMIN_TOKEN=$(npx account-api admin-tokens create --label billing)'],
      run: async (context, { store, actor }) => {
        // A token for the database's server: --sandbox (or ACCOUNT_API_SANDBOX=1) makes a sandbox token.
        const environment = context.flags.sandbox ? 'sandbox' : 'live';
        const { record, token } = await createAdminToken(store, actor, context.flags.label ?? '', environment);
        if (context.flags.json) return printJson(context, { ...tokenJson(record), token });
        // The token alone on stdout, so `ADMIN_TOKEN=$(account-api admin-tokens create --label billing)` works.
        printLine(context, token);
        printNote(context, `Admin token ${record.tokenId} (${record.label}): store it now, it cannot be shown again.`);
      },
    },
    {
      words: ['admin-tokens', 'list'],
      summary: 'Lists the admin tokens: id, prefix, label, made by, created, last used, revoked; never the secret.',
      examples: ['npx account-api admin-tokens list'],
      run: async (context, { store }) => {
        const tokens = await store.listAdminTokens();
        printList(context, tokens, {
          json: tokenJson,
          empty: 'There are no admin tokens.',
          columns: ['TOKEN_ID', 'PREFIX', 'LABEL', 'CREATED_BY', 'CREATED', 'LAST_USED', 'REVOKED'],
          row: (t) => [t.tokenId, t.displayPrefix, t.label, t.createdBy, t.createdAt, t.lastUsedAt ?? 'never', t.revokedAt ?? '-'],
        });
      },
    },
    {
      words: ['admin-tokens', 'revoke'],
      args: ['token-id'],
      summary: "Revokes an admin token by its id (the 12 characters after aapi_admin_ or aapi_admin_sandbox_, as 'admin-tokens list' shows); refused from the next request.",
      examples: ['npx account-api admin-tokens revoke 3kTqv9ZbW2aX'],
      run: async (context, { store, actor }, [tokenId]) => {
        const token = await revokeAdminToken(store, actor, tokenId);
        if (context.flags.json) return printJson(context, tokenJson(token));
        return printLine(context, `Revoked admin token ${token.tokenId} (${token.label}); the admin API refuses it from now on.`);
      },
    },
  ],
});

function tokenJson(token: AdminTokenRecord) {
  return {
    token_id: token.tokenId,
    label: token.label,
    prefix: token.displayPrefix,
    created_by: token.createdBy,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    revoked_at: token.revokedAt,
  };
}

/** `actor` is the CLI's `cli:<os user>`, recorded as the maker and in the audit trail. */
