// Reading and pruning the audit trail, for `account-api audit`, GET /admin/v0/audit and serve's background pruning.
import { checkAuditAction, checkAuditActor, type AuditAction } from '../domain/audit-events.ts';
import { DomainError } from '../domain/errors.ts';
import type { AuditActor, AuditEvent, AuditStore, NewAuditEvent } from '../store/store.ts';

export interface ReadAuditInput {
  readonly username?: string;
  /** Exactly this actor's entries (`admin:<token id>`, `key:<key id>`, `cli:<user>`); 400 invalid_actor if it cannot be one. */
  readonly actor?: string;
  /** Exactly this action's entries; 400 invalid_action unless one of AUDIT_ACTIONS. */
  readonly action?: string;
  /** An ISO 8601 instant: entries at or after it. */
  readonly since?: string;
  /** At most this many, the newest (default 1000, at most 10000). */
  readonly limit?: number;
}

export const MAX_AUDIT_LIMIT = 10_000;

/** Entries oldest first. */
export async function readAudit(store: AuditStore, input: ReadAuditInput = {}): Promise<AuditEvent[]> {
  let since: Date | undefined;
  if (input.since !== undefined) {
    since = new Date(Date.parse(input.since));
    if (!/^\d{4}-\d{2}-\d{2}/.test(input.since) || Number.isNaN(since.getTime())) {
      throw new DomainError('invalid', 'invalid_since', `'${input.since}' is not an ISO 8601 date or time, such as 2026-11-01 or 2026-11-01T08:00:00Z.`, {
        field: 'since',
      });
    }
  }
  if (input.limit !== undefined && (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_AUDIT_LIMIT)) {
    throw new DomainError('invalid', 'invalid_limit', `A limit is a whole number from 1 to ${MAX_AUDIT_LIMIT}.`, { field: 'limit' });
  }
  return store.listAudit({ username: input.username, ...auditFilters(input), since, limit: input.limit });
}

/** The actor and action filters checked, as every face takes them (the CLI, GET /admin/v0/audit, the console). */
export function auditFilters(input: { readonly actor?: string; readonly action?: string }): { actor?: string; action?: AuditAction } {
  return {
    ...(input.actor === undefined ? {} : { actor: checkAuditActor(input.actor) }),
    ...(input.action === undefined ? {} : { action: checkAuditAction(input.action) }),
  };
}

/** Deletes entries older than `retentionDays` days before `now`; resolves with how many. */
export async function pruneAudit(store: AuditStore, retentionDays: number, now = Date.now()): Promise<number> {
  return store.pruneAudit(new Date(now - retentionDays * 86_400_000));
}

/** An entry for a change the store does not make itself (admin tokens: admin_token.created, admin_token.revoked). */
export async function recordAudit(store: AuditStore, actor: AuditActor, event: NewAuditEvent): Promise<AuditEvent> {
  return store.recordAudit(event, actor);
}
