// An API key's row as both engines select it (joined to its account's username), and its one mapping to an ApiKeyRecord.
import { textOrNull, type Row, type Values } from '../rows.ts';
import type { ApiKeyRecord, KeyScope } from './key-store.ts';

export const KEY_COLUMNS =
  'k.key_id, a.username, k.label, k.display_prefix, k.scope, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.rolled_into';

export function toKey(row: Row, values: Values): ApiKeyRecord {
  return {
    keyId: String(row.key_id),
    username: String(row.username),
    label: textOrNull(row.label),
    displayPrefix: String(row.display_prefix),
    scope: String(row.scope) as KeyScope,
    createdAt: values.time(row.created_at),
    expiresAt: values.timeOrNull(row.expires_at),
    lastUsedAt: values.timeOrNull(row.last_used_at),
    revokedAt: values.timeOrNull(row.revoked_at),
    rolledInto: textOrNull(row.rolled_into),
  };
}
