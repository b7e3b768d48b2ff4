// How accounts, keys and audit entries are shown, by the admin API and by the CLI's --json alike: snake_case, never a secret.
import type { Account, ApiKeyRecord, AuditEvent } from '../store/store.ts';

export function accountJson(account: Account) {
  return {
    user_id: account.id,
    username: account.username,
    name: account.name,
    timezone: account.timezone,
    premium: account.premium,
    created_at: account.createdAt,
  };
}

export function keyJson(key: ApiKeyRecord) {
  return {
    key_id: key.keyId,
    username: key.username,
    label: key.label,
    prefix: key.displayPrefix,
    scope: key.scope,
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    rolled_into: key.rolledInto,
  };
}

export function auditJson(event: AuditEvent) {
  return {
    id: event.id,
    occurred_at: event.occurredAt,
    actor: event.actor,
    action: event.action,
    user_id: event.accountId,
    username: event.username,
    changes: event.changes,
    request_id: event.requestId,
    address: event.address,
  };
}
