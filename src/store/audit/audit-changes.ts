// The audit entries both engines write beside their changes, and the rolls' one rule, built once so both engines agree.
import type { Account, ApiKeyRecord, NewAuditEvent } from '../store.ts';

export function accountCreated(account: Account): NewAuditEvent {
  return {
    action: 'account.created',
    accountId: account.id,
    username: account.username,
    changes: {
      username: { old: null, new: account.username },
      name: { old: null, new: account.name },
      timezone: { old: null, new: account.timezone },
      premium: { old: null, new: account.premium },
    },
  };
}

export function accountDeleted(account: Account): NewAuditEvent {
  return {
    action: 'account.deleted',
    accountId: account.id,
    username: account.username,
    changes: {
      username: { old: account.username, new: null },
      name: { old: account.name, new: null },
      timezone: { old: account.timezone, new: null },
      premium: { old: account.premium, new: null },
    },
  };
}

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
