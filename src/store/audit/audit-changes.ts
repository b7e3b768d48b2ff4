// The audit entries both engines write beside their changes, and the rolls' one rule, built once so both engines agree.
import type { Account, ApiKeyRecord, NewAuditEvent } from '../store.ts';

/** An account's whole state, as the change that made it (every field from null) or removed it (every field to null). */
function accountWhole(action: 'account.created' | 'account.deleted', account: Account): NewAuditEvent {
  const change = (value: string | boolean) => (action === 'account.created' ? { old: null, new: value } : { old: value, new: null });
  return {
    action,
    accountId: account.id,
    username: account.username,
    changes: { username: change(account.username), name: change(account.name), timezone: change(account.timezone), premium: change(account.premium) },
  };
}

export const accountCreated = (account: Account): NewAuditEvent => accountWhole('account.created', account);
export const accountDeleted = (account: Account): NewAuditEvent => accountWhole('account.deleted', account);

/** The key's id, label, scope and expiry: never the key, nor its hash. */
export function keyCreated(accountId: number, key: ApiKeyRecord): NewAuditEvent {
  return {
    action: 'key.created',
    accountId,
    username: key.username,
    changes: {
      key_id: { old: null, new: key.keyId },
      label: { old: null, new: key.label },
      scope: { old: null, new: key.scope },
      expires_at: { old: null, new: key.expiresAt },
    },
  };
}

export function keyRolled(accountId: number, before: ApiKeyRecord, after: ApiKeyRecord, successor: ApiKeyRecord): NewAuditEvent {
  return {
    action: 'key.rolled',
    accountId,
    username: before.username,
    changes: {
      key_id: { old: before.keyId, new: successor.keyId },
      expires_at: { old: before.expiresAt, new: after.expiresAt },
      successor_expires_at: { old: null, new: successor.expiresAt },
    },
  };
}

/** A successor lives as long as its predecessor was meant to (from its own issue), or forever if that one had no expiry. */
export function successorExpiry(old: ApiKeyRecord, now = Date.now()): Date | null {
  if (old.expiresAt === null) return null;
  return new Date(now + (Date.parse(old.expiresAt) - Date.parse(old.createdAt)));
}
