// The audit trail's rows in SQLite: written inside the caller's transaction, read back as AuditEvents.
import type { StatementSync } from 'node:sqlite';
import type { AuditActor, AuditEvent, AuditQuery, NewAuditEvent } from '../store.ts';
import { deleteWebhookEventsBefore, insertWebhookEvent } from '../webhooks/sqlite.ts';

type Row = Record<string, unknown>;
type Prepare = (sql: string) => StatementSync;

const AUDIT_COLUMNS = 'id, occurred_at, actor, action, account_id, username, changes, request_id, address';
const INSERT_AUDIT = `INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${AUDIT_COLUMNS}`;
export const DEFAULT_AUDIT_LIMIT = 1000;

export function toAuditEvent(row: Row): AuditEvent {
  return {
    id: Number(row.id),
    occurredAt: String(row.occurred_at),
    actor: String(row.actor),
    action: String(row.action) as AuditEvent['action'],
    accountId: row.account_id === null ? null : Number(row.account_id),
    username: row.username === null ? null : String(row.username),
    changes: JSON.parse(String(row.changes)) as AuditEvent['changes'],
    requestId: row.request_id === null ? null : String(row.request_id),
    address: row.address === null ? null : String(row.address),
  };
}

/** Must run inside the transaction that makes the change; writes the change's webhook event beside it (webhooks/sqlite.ts). */
export function insertAuditEvent(prepare: Prepare, audit: AuditActor, event: NewAuditEvent, at = new Date()): AuditEvent {
  const occurredAt = at.toISOString();
  insertWebhookEvent(prepare, event, occurredAt);
  const row = prepare(INSERT_AUDIT).get(
    occurredAt,
    audit.actor,
    event.action,
    event.accountId,
    event.username,
    JSON.stringify(event.changes),
    audit.requestId,
    audit.address,
  );
  return toAuditEvent(row as Row);
}

export function selectAuditEvents(prepare: Prepare, query: AuditQuery): AuditEvent[] {
  const rows = prepare(
    `SELECT * FROM (SELECT ${AUDIT_COLUMNS} FROM audit_events
       WHERE (?1 IS NULL OR username = ?1) AND (?2 IS NULL OR occurred_at >= ?2)
         AND (?4 IS NULL OR occurred_at < ?4) AND (?5 IS NULL OR id < ?5)
       ORDER BY id DESC LIMIT ?3) ORDER BY id`,
  ).all(
    query.username ?? null,
    query.since?.toISOString() ?? null,
    query.limit ?? DEFAULT_AUDIT_LIMIT,
    query.until?.toISOString() ?? null,
    query.beforeId ?? null,
  );
  return rows.map((row) => toAuditEvent(row as Row));
}

/** Webhook events share the audit trail's retention. */
export function deleteAuditEventsBefore(prepare: Prepare, before: Date): number {
  deleteWebhookEventsBefore(prepare, before);
  return Number(prepare('DELETE FROM audit_events WHERE occurred_at < ?').run(before.toISOString()).changes);
}
