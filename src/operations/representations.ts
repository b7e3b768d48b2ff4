// How accounts, keys and audit entries are shown, by the admin API and by the CLI's --json alike: snake_case, never a secret.
import { accountObject } from '../domain/webhooks/events.ts';
import type { Account, ApiKeyRecord, AuditEvent } from '../store/store.ts';

/** As a webhook event carries it: the same fields in the same order. */
export const accountJson = (account: Account) => accountObject(account);

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
