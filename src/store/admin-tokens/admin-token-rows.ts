// An admin token's row as both engines select it (never its hash), and its one mapping to an AdminTokenRecord.
import type { Row, Values } from '../rows.ts';
import type { AdminTokenRecord } from './admin-token-store.ts';

export const ADMIN_TOKEN_COLUMNS = 'token_id, label, display_prefix, created_by, created_at, last_used_at, revoked_at';

export function toAdminToken(row: Row, values: Values): AdminTokenRecord {
  return {
    tokenId: String(row.token_id),
    label: String(row.label),
    displayPrefix: String(row.display_prefix),
    createdBy: String(row.created_by),
    createdAt: values.time(row.created_at),
    lastUsedAt: values.timeOrNull(row.last_used_at),
    revokedAt: values.timeOrNull(row.revoked_at),
  };
}
