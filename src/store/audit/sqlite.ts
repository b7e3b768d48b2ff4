// The audit trail's rows in SQLite: written inside the caller's transaction, read back as AuditEvents.
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import type { AuditActor, AuditEvent, AuditQuery, AuditStore, NewAuditEvent } from '../store.ts';
import { deleteWebhookEventsBefore, insertWebhookEvent } from '../webhooks/sqlite-outbox.ts';
import { deleteInBatches } from '../pruning.ts';

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

/** Must run inside the transaction that makes the change; writes the change's webhook event beside it (webhooks/sqlite-outbox.ts). */
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

/** The entry beside a change (accounts, keys, admin tokens), when the caller says who made it; inside the change's transaction. */
export function auditChange(prepare: Prepare, audit: AuditActor | undefined, event: NewAuditEvent): void {
  if (audit !== undefined) insertAuditEvent(prepare, audit, event);
}

/**
 * Only the filters given, as on PostgreSQL: SQLite plans `(? IS NULL OR actor = ?)` as a scan of the whole trail, while
 * `actor = ?` reads migration 012's index. At most 64 shapes, each prepared once.
 */
export function selectAuditEvents(prepare: Prepare, query: AuditQuery): AuditEvent[] {
  const where: string[] = [];
  const values: (string | number)[] = [];
  const add = (condition: string, value: string | number | undefined) => {
    if (value === undefined) return;
    where.push(condition);
    values.push(value);
  };
  add('username = ?', query.username);
  add('actor = ?', query.actor);
  add('action = ?', query.action);
  add('occurred_at >= ?', query.since?.toISOString());
  add('occurred_at < ?', query.until?.toISOString());
  add('id < ?', query.beforeId);
  const rows = prepare(
    `SELECT * FROM (SELECT ${AUDIT_COLUMNS} FROM audit_events ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY id DESC LIMIT ?) ORDER BY id`,
  ).all(...values, query.limit ?? DEFAULT_AUDIT_LIMIT);
  return rows.map((row) => toAuditEvent(row as Row));
}

/** Webhook events share the audit trail's retention; both go in bounded batches (pruning.ts), each its own transaction. */
export async function deleteAuditEventsBefore(engine: SqliteEngine, before: Date): Promise<number> {
  await deleteInBatches((limit) => engine.run(() => deleteWebhookEventsBefore(engine.statement, before, limit)));
  const batch = 'DELETE FROM audit_events WHERE rowid IN (SELECT rowid FROM audit_events WHERE occurred_at < ? LIMIT ?)';
  return deleteInBatches((limit) => engine.run(() => Number(engine.statement(batch).run(before.toISOString(), limit).changes)));
}

export class SqliteAudit implements AuditStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent> {
    return this.#engine.run(() => this.#engine.transaction(() => insertAuditEvent(this.#engine.statement, audit, event)));
  }

  listAudit(query: AuditQuery = {}): Promise<AuditEvent[]> {
    return this.#engine.run(() => selectAuditEvents(this.#engine.statement, query));
  }

  pruneAudit(before: Date): Promise<number> {
    return deleteAuditEventsBefore(this.#engine, before);
  }
}
