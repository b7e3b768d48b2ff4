// The webhook outbox in SQLite: an event, and a delivery per subscribed endpoint, written inside the transaction of the change
// it tells of (audit/sqlite.ts writes it beside the audit entry), and dropped with the audit trail's retention.
import { accountObject, deletedAccountObject, eventBody, isWebhookEventType, keyIdOf, keyObject, newEventId, type EventObject } from '../../domain/webhooks/events.ts';
import type { Prepare, Row } from '../sqlite/sqlite-engine.ts';
import type { NewAuditEvent } from '../store.ts';
import { ACCOUNT_COLUMNS, toAccount } from '../accounts/account-rows.ts';
import { KEY_COLUMNS, toKey } from '../keys/key-rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';

/** The account or key as the change left it, read inside the change's transaction. */
function objectAfter(prepare: Prepare, event: NewAuditEvent): EventObject {
  if (event.action === 'account.deleted') return deletedAccountObject(event);
  if (event.action.startsWith('account.')) {
    const row = prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(event.accountId) as Row | undefined;
    return row === undefined ? null : accountObject(toAccount(row, SQLITE_VALUES));
  }
  const row = prepare(
    `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
  ).get(keyIdOf(event)) as Row | undefined;
  return row === undefined ? null : keyObject(toKey(row, SQLITE_VALUES));
}

/**
 * Must run inside the transaction that makes the change (audit/sqlite.ts calls it beside the audit entry): the event and a
 * delivery to every enabled endpoint subscribed to its type, committed with the change or not at all.
 */
export function insertWebhookEvent(prepare: Prepare, event: NewAuditEvent, occurredAt: string): void {
  if (!isWebhookEventType(event.action)) return;
  const eventId = newEventId();
  prepare('INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES (?, ?, ?, ?)').run(
    eventId,
    event.action,
    occurredAt,
    eventBody(eventId, event.action, occurredAt, objectAfter(prepare, event), event.changes),
  );
  prepare(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
     SELECT ?1, endpoint_id, ?2, ?2 FROM webhook_endpoints
     WHERE disabled_at IS NULL AND (event_types IS NULL OR EXISTS (SELECT 1 FROM json_each(event_types) WHERE value = ?3))`,
  ).run(eventId, occurredAt, event.action);
}

/** One batch of at most `limit` events older than `before` (their deliveries and attempts go with them); answers how many. */
export function deleteWebhookEventsBefore(prepare: Prepare, before: Date, limit: number): number {
  // An event still being delivered is kept until its delivery ends, whatever its age.
  return Number(
    prepare(
      `DELETE FROM webhook_events WHERE rowid IN (SELECT rowid FROM webhook_events WHERE created_at < ? AND NOT EXISTS
         (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.event_id AND d.state = 'pending') LIMIT ?)`,
    ).run(before.toISOString(), limit).changes,
  );
}
