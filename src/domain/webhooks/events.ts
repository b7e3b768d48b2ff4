// The events webhooks send: one per audited change to an account or a key, as the JSON body {id, type, created_at, data}.
import { randomBytes } from 'node:crypto';
import { AUDIT_ACTIONS, type AuditAction, type AuditChanges, type NewAuditEvent } from '../audit-events.ts';
import type { Account, ApiKeyRecord } from '../accounts.ts';

/**
 * Not admin_token.* nor webhook_endpoint.*: admin tokens and endpoints are the operator's own, of no use to a receiver. (The
 * test event, `ping`, is sent to one endpoint on request whatever it subscribes to, so it is not a type to subscribe to.)
 */
export const WEBHOOK_EVENT_TYPES = AUDIT_ACTIONS.filter(
  (action) => !action.startsWith('admin_token.') && !action.startsWith('webhook_endpoint.'),
) as readonly WebhookEventType[];

export type WebhookEventType = Exclude<AuditAction, `admin_token.${string}` | `webhook_endpoint.${string}`>;

/** The test event's type: `POST /admin/v0/webhooks/{id}/test` and `account-api webhooks test` send it to one endpoint. */
export const PING_EVENT_TYPE = 'ping';

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** The Standard Webhooks message id, the same on every attempt, for deduplication. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

export interface AccountObject {
  readonly user_id: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly created_at: string | null;
}

/** Never the key nor its hash. */
export interface KeyObject {
  readonly key_id: string;
  readonly username: string;
  readonly label: string | null;
  readonly prefix: string;
  readonly scope: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly rolled_into: string | null;
}

/** After the change (account.deleted: as it was; null if gone). */
export type EventObject = AccountObject | KeyObject | null;

/** Also as the admin API and the CLI show it (operations/representations.ts). */
export function accountObject(account: Account): AccountObject {
  const { id, username, name, timezone, premium, createdAt } = account;
  return { user_id: id, username, name, timezone, premium, created_at: createdAt };
}

/** Without its last use, which changes no event. */
export function keyObject(key: ApiKeyRecord): KeyObject {
  return {
    key_id: key.keyId,
    username: key.username,
    label: key.label,
    prefix: key.displayPrefix,
    scope: key.scope,
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
    rolled_into: key.rolledInto,
  };
}

/** The rolled key for key.rolled, else the key named. */
export function keyIdOf(event: NewAuditEvent): string | null {
  const keyId = event.changes.key_id;
  if (keyId === undefined) return null;
  return String(event.action === 'key.rolled' ? keyId.old : keyId.new);
}

/** The row is gone: what the entry says it was. */
export function deletedAccountObject(event: NewAuditEvent): AccountObject {
  const old = (field: string) => event.changes[field]?.old;
  return {
    user_id: event.accountId ?? 0,
    username: String(old('username') ?? event.username),
    name: String(old('name') ?? ''),
    timezone: String(old('timezone') ?? ''),
    premium: old('premium') === true,
    created_at: null,
  };
}

/** Written once with the change, so every attempt signs and sends the same bytes. */
export function eventBody(id: string, type: WebhookEventType, createdAt: string, object: EventObject, changes: AuditChanges): string {
  return JSON.stringify({ id, type, created_at: createdAt, data: { object, changes } });
}

/**
 * The test event's body: the same envelope as every event, so the receiver's parsing and signature check are what a real
 * event meets; `data` names the endpoint pinged, and no account or key (a ping changes none).
 */
export function pingBody(id: string, createdAt: string, endpointId: string): string {
  return JSON.stringify({ id, type: PING_EVENT_TYPE, created_at: createdAt, data: { endpoint_id: endpointId } });
}
