// How accounts, keys, key usage and audit entries are shown, by the admin API and by the CLI's --json alike: snake_case, never a secret.
import { accountObject, keyObject } from '../domain/webhooks/events.ts';
import type { Account, ApiKeyRecord, AuditEvent, KeyUsage } from '../store/store.ts';

/** As a webhook event carries it: the same fields in the same order. */
export const accountJson = (account: Account) => accountObject(account);

/** As a webhook event carries it, with its last use (which no event tells of) before its revocation. */
export function keyJson(key: ApiKeyRecord) {
  const { revoked_at, rolled_into, ...issued } = keyObject(key);
  return { ...issued, last_used_at: key.lastUsedAt, revoked_at, rolled_into };
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

/** Days as the store gives them (already snake_case outcomes); addresses with last_seen. */
export function keyUsageJson(usage: KeyUsage) {
  return { days: usage.days, addresses: usage.addresses.map(({ address, lastSeen }) => ({ address, last_seen: lastSeen })) };
}
