// What an audited change is, in words every face and both stores share: the actions, and the entry before it is stored.

export const AUDIT_ACTIONS = [
  'account.created',
  'account.updated',
  'account.premium_changed',
  'account.deleted',
  'key.created',
  'key.rolled',
  'key.revoked',
  'admin_token.created',
  'admin_token.revoked',
  // A test event sent to an endpoint: it changes nothing, but it makes the server send a request on demand (docs/api.md).
  'webhook_endpoint.tested',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** A field's value before and after a change; null where there was none (a creation, a deletion). */
export interface FieldChange {
  readonly old: string | number | boolean | null;
  readonly new: string | number | boolean | null;
}

export type AuditChanges = Readonly<Record<string, FieldChange>>;

/** One entry to record, beside the change it describes. Never a secret: key ids only, never a key or its hash. */
export interface NewAuditEvent {
  readonly action: AuditAction;
  readonly accountId: number | null;
  readonly username: string | null;
  readonly changes: AuditChanges;
}
