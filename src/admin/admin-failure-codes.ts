// Every failure `code` the admin API answers with, by status: the public table's shared codes plus the admin port's own.
import { FAILURE_CODES, FAILURE_DESCRIPTIONS, forStatuses } from '../http/failures/failure-codes.ts';

export const ADMIN_FAILURE_CODES = {
  400: [
    ...FAILURE_CODES[400],
    'invalid_username',
    'invalid_label',
    'invalid_scope',
    'invalid_expiry',
    'invalid_duration',
    'invalid_key_id',
    'invalid_cursor',
    'invalid_limit',
    'invalid_since',
    'invalid_until',
    'invalid_actor',
    'invalid_action',
    'invalid_username_prefix',
    'invalid_webhook_url',
    'invalid_webhook_events',
    'invalid_description',
  ],
  401: ['admin_token_required', 'malformed_admin_token', 'invalid_admin_token', 'admin_token_revoked', 'wrong_credential_kind', 'wrong_environment'],
  404: ['not_found', 'account_not_found', 'key_not_found', 'webhook_endpoint_not_found', 'webhook_event_not_found'],
  409: ['username_taken', 'key_already_rolled', 'key_inactive', 'too_many_keys', 'too_many_webhook_endpoints', ...FAILURE_CODES[409]],
  // The rest as on the public port (the table keeps numeric keys in ascending order whatever the order here).
  ...forStatuses(FAILURE_CODES, [405, 408, 413, 415, 417, 422, 429, 431, 500, 501, 503]),
} as const satisfies Record<number, readonly string[]>;

export type AdminFailureStatus = keyof typeof ADMIN_FAILURE_CODES;

export const ADMIN_FAILURE_DESCRIPTIONS: Readonly<Record<AdminFailureStatus, string>> = {
  400: 'A parameter, query parameter or cursor is missing, unknown, repeated, too long or invalid; the body or URL is malformed; or Idempotency-Key is not 1 to 255 printable ASCII characters.',
  401: "The admin token is missing, malformed, wrong or revoked, or is the other environment's (live or sandbox), or the credential is an API key (this port takes Bearer admin tokens).",
  404: 'No account, key, webhook endpoint or event by that name or id, or nothing at this path.',
  409: 'The username is taken, the key was rolled already or can no longer be rolled, the account has as many active keys as allowed, or there are as many webhook endpoints as allowed; or another request with this Idempotency-Key is still running (retry once it is answered).',
  422: 'This Idempotency-Key was used in the last 24 hours, with this admin token, for a different request (method, path or body).',
  429: 'A rate limit is spent (per admin token, or failed attempts per address); retry after Retry-After seconds.',
  503: 'The database is unavailable, the server is overloaded or shutting down; retry after Retry-After seconds.',
  // Said as on the public port.
  ...forStatuses(FAILURE_DESCRIPTIONS, [405, 408, 413, 415, 417, 431, 500, 501]),
};
