// The store: the composition of one interface per concern (each in its folder, with its types and no SQL). A consumer asks for
// the narrowest one it needs (authentication: CredentialStore); the engines (sqlite/, postgres/) implement them all.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { AccountStore } from './accounts/account-store.ts';
import type { AdminTokenStore } from './admin-tokens/admin-token-store.ts';
import type { AuditStore } from './audit/audit-store.ts';
import type { ConsoleSessionStore } from './console-sessions/console-session-store.ts';
import type { CredentialStore } from './credentials/credential-store.ts';
import type { IdempotencyStore } from './idempotency/idempotency-store.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { KeyUsageStore } from './key-usage/key-usage-store.ts';
import type { SchemaStore } from './schema/schema-store.ts';
import type { WebhookStore } from './webhooks/webhook-store.ts';

export type * from './accounts/account-store.ts';
export type * from './admin-tokens/admin-token-store.ts';
export type * from './audit/audit-store.ts';
export type * from './console-sessions/console-session-store.ts';
export type * from './credentials/credential-store.ts';
export type * from './idempotency/idempotency-store.ts';
export type * from './keys/key-store.ts';
export type * from './key-usage/key-usage-store.ts';
export type * from './schema/schema-store.ts';
export { MAX_ACTIVE_KEYS } from './keys/key-store.ts';
// The audit entry's shape is a domain definition (webhook events are built from it); kept here too for the store's users.
export { AUDIT_ACTIONS, type AuditAction, type AuditChanges, type FieldChange, type NewAuditEvent } from '../domain/audit-events.ts';

/**
 * Stores raise `DomainError`s (not_found, conflict, unavailable) and never HTTP errors.
 * Every method is async so an engine behind a network slots in without touching callers.
 */
export interface Store
  extends SchemaStore,
    AccountStore,
    KeyStore,
    CredentialStore,
    AdminTokenStore,
    AuditStore,
    IdempotencyStore,
    WebhookStore,
    KeyUsageStore,
    ConsoleSessionStore {
  readonly engine: string;
  /** The environment this store was opened for; a database of the other is refused, however it was reached (deployment.ts). */
  readonly environment: KeyEnvironment;
  ping(): Promise<void>;
  close(): Promise<void>;
}
