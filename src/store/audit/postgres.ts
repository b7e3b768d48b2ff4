// The audit trail's rows in PostgreSQL: written by the caller's transaction (or statement), read back as AuditEvents; and the
// store's part (PostgresAudit).
import type { AuditActor, AuditEvent, AuditQuery, AuditStore, NewAuditEvent } from '../store.ts';
import { PostgresPart, type PostgresEngine } from '../postgres/postgres-engine.ts';
import type { Query, Row } from '../postgres/query.ts';
import { insertWebhookEvent } from '../webhooks/postgres-outbox.ts';
import { maintainTimePartitions } from './time-partitions.ts';

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

/** Must run on the connection, and in the transaction, that makes the change; writes its webhook event beside it (postgres-outbox.ts). */
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

/** The entry beside a change, on the change's connection, when the caller says who made it (every concern's changes call it). */
export async function auditChange(query: Query, audit: AuditActor | undefined, event: NewAuditEvent): Promise<void> {
  if (audit !== undefined) await insertAuditEvent(query, audit, event);
}

/** A new row and its audit entry (when the caller says who made it), committed together. */
export function insertAudited<T>(
  engine: PostgresEngine,
  audit: AuditActor | undefined,
  insert: (query: Query) => Promise<T>,
  entry: (created: T) => NewAuditEvent,
): Promise<T> {
  return engine.transaction(async (query) => {
    const created = await insert(query);
    await auditChange(query, audit, entry(created));
    return created;
  });
}

/**
 * The audit entry of accounts/postgres.ts's one-statement update, a CTE after its `changed` (the row with its old_value): $2 the
 * new value, $3 to $5 the actor; written only when the value changed, and read by WEBHOOK_EVENT_OF_UPDATE (postgres-outbox.ts).
 */
export const AUDIT_ENTRY_OF_UPDATE = (column: 'name' | 'timezone') => `entry AS (
              INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address)
              SELECT clock_timestamp(), $3, 'account.updated', id, username,
                     jsonb_build_object('${column}', jsonb_build_object('old', old_value, 'new', $2::text)), $4, $5
              FROM changed WHERE old_value IS DISTINCT FROM $2::text
              RETURNING occurred_at
            )`;

/**
 * The list's statement, holding only the filters given: `occurred_at >= $n` rather than `($n IS NULL OR occurred_at >= $n)`,
 * which no plan can prune partitions by. Each shape is its own named statement; a generic plan still prunes when it starts.
 */
export function auditListStatement(filter: AuditQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  const add = (condition: (n: string) => string, value: unknown) => {
    values.push(value);
    where.push(condition(`$${values.length}`));
  };
  if (filter.username !== undefined) add((n) => `lower(username) = lower(${n})`, filter.username);
  if (filter.actor !== undefined) add((n) => `actor = ${n}`, filter.actor);
  if (filter.action !== undefined) add((n) => `action = ${n}`, filter.action);
  if (filter.since !== undefined) add((n) => `occurred_at >= ${n}::timestamptz`, filter.since);
  if (filter.until !== undefined) add((n) => `occurred_at < ${n}::timestamptz`, filter.until);
  if (filter.beforeId !== undefined) add((n) => `id < ${n}::bigint`, filter.beforeId);
  values.push(filter.limit ?? DEFAULT_AUDIT_LIMIT);
  return {
    text: `SELECT * FROM (SELECT ${AUDIT_COLUMNS} FROM audit_events ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY id DESC LIMIT $${values.length}) newest ORDER BY id`,
    values,
  };
}

export async function selectAuditEvents(query: Query, filter: AuditQuery): Promise<AuditEvent[]> {
  const statement = auditListStatement(filter);
  return (await query(statement.text, statement.values)).map(toAuditEvent);
}

/**
 * Webhook events, deliveries and attempts share the audit trail's retention. Whole days' partitions are dropped, the rest
 * deleted in bounded batches (time-partitions.ts); answers the audit entries gone (those of dropped days as last counted).
 */
export async function deleteAuditEventsBefore(engine: PostgresEngine, before: Date, now = new Date()): Promise<number> {
  const upkeep = await maintainTimePartitions(engine, now, before);
  return upkeep.deleted.audit_events + upkeep.auditEntriesDropped;
}

export class PostgresAudit extends PostgresPart implements AuditStore {
  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent> {
    return this.engine.transaction((query) => insertAuditEvent(query, audit, event));
  }

  listAudit(query: AuditQuery = {}): Promise<AuditEvent[]> {
    return selectAuditEvents(this.engine.query, query);
  }

  pruneAudit(before: Date): Promise<number> {
    return deleteAuditEventsBefore(this.engine, before);
  }
}
