// The audit trail as the store keeps it: who changed what and from where, written in the change's own transaction; no SQL here.
import type { AuditAction, NewAuditEvent } from '../../domain/audit-events.ts';

/** Who made a change and from where: recorded with it in the audit trail, in the change's own transaction. */
export interface AuditActor {
  /** `key:<key id>`, `admin:<token id>` or `cli:<operating-system user>`. */
  readonly actor: string;
  readonly requestId: string | null;
  /** The caller's address; null from the CLI. */
  readonly address: string | null;
}

export interface AuditEvent extends NewAuditEvent, AuditActor {
  readonly id: number;
  readonly occurredAt: string;
}

export interface AuditQuery {
  /** Entries of this account (ignoring case), also after it was deleted. */
  readonly username?: string;
  /** Entries made by exactly this actor (`admin:3kTqv9ZbW2aX`, `cli:root`, `key:...`; case counts). */
  readonly actor?: string;
  /** Entries of exactly this action. */
  readonly action?: AuditAction;
  /** Entries at or after this instant. */
  readonly since?: Date;
  /** Entries before this instant (the admin API's time filter). */
  readonly until?: Date;
  /** Entries with an id below this one: the admin API's cursor, walking back in time. */
  readonly beforeId?: number;
  /** At most this many: the newest ones, listed oldest first (default 1000). */
  readonly limit?: number;
}

export interface AuditStore {
  /** An entry alone, in a transaction of its own: for changes the store does not make itself (admin tokens). */
  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent>;
  /** Entries, the oldest first, at most `limit` (default 1000) of the newest matching. */
  listAudit(query?: AuditQuery): Promise<AuditEvent[]>;
  /**
   * Deletes entries older than `before` (and the webhook outbox's), resolving with how many. On PostgreSQL a day's partition
   * goes whole once all of it is older (time-partitions.ts), its entries counted as last estimated.
   */
  pruneAudit(before: Date): Promise<number>;
}
