// The audit trail's rows in PostgreSQL: written by the caller's transaction (or statement), read back as AuditEvents.
import type { AuditActor, AuditEvent, AuditQuery, NewAuditEvent } from '../store.ts';
import type { Query, Row } from '../postgres/query.ts';
import { deleteWebhookEventsBefore, insertWebhookEvent } from '../webhooks/postgres.ts';

const AUDIT_COLUMNS = 'id, occurred_at, actor, action, account_id, username, changes, request_id, address';
const DEFAULT_AUDIT_LIMIT = 1000;

export function toAuditEvent(row: Row): AuditEvent {
  return {
    id: Number(row.id),
    occurredAt: (row.occurred_at as Date).toISOString(),
    actor: String(row.actor),
    action: String(row.action) as AuditEvent['action'],
    accountId: row.account_id === null ? null : Number(row.account_id),
    username: row.username === null ? null : String(row.username),
    changes: row.changes as AuditEvent['changes'],
    requestId: row.request_id === null ? null : String(row.request_id),
    address: row.address === null ? null : String(row.address),
  };
}

/** Must run on the connection, and in the transaction, that makes the change; writes its webhook event beside it (webhooks/postgres.ts). */
export async function insertAuditEvent(query: Query, audit: AuditActor, event: NewAuditEvent): Promise<AuditEvent> {
  // clock_timestamp(), not now(): entries of one transaction keep their order in time as well as by id.
  const [row] = await query(
    `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address)
     VALUES (clock_timestamp(), $1, $2, $3, $4, $5, $6, $7) RETURNING ${AUDIT_COLUMNS}`,
    [audit.actor, event.action, event.accountId, event.username, JSON.stringify(event.changes), audit.requestId, audit.address],
  );
  await insertWebhookEvent(query, event, row!.occurred_at as Date);
  return toAuditEvent(row!);
}

export async function selectAuditEvents(query: Query, filter: AuditQuery): Promise<AuditEvent[]> {
  const rows = await query(
    `SELECT * FROM (SELECT ${AUDIT_COLUMNS} FROM audit_events
       WHERE ($1::text IS NULL OR lower(username) = lower($1)) AND ($2::timestamptz IS NULL OR occurred_at >= $2)
         AND ($4::timestamptz IS NULL OR occurred_at < $4) AND ($5::bigint IS NULL OR id < $5)
       ORDER BY id DESC LIMIT $3) newest ORDER BY id`,
    [filter.username ?? null, filter.since ?? null, filter.limit ?? DEFAULT_AUDIT_LIMIT, filter.until ?? null, filter.beforeId ?? null],
  );
  return rows.map(toAuditEvent);
}

/** Webhook events share the audit trail's retention. */
export async function deleteAuditEventsBefore(query: Query, before: Date): Promise<number> {
  await deleteWebhookEventsBefore(query, before);
  return (await query('DELETE FROM audit_events WHERE occurred_at < $1 RETURNING 1', [before])).length;
}
