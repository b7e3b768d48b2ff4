// The webhook outbox in PostgreSQL: the event and its deliveries, written by another concern's transaction beside its audit
// entry (audit/postgres.ts), or inside an account update's one statement (WEBHOOK_EVENT_OF_UPDATE).
import { accountObject, deletedAccountObject, eventBody, isWebhookEventType, keyIdOf, keyObject, newEventId, type EventObject } from '../../domain/webhooks/events.ts';
import type { NewAuditEvent } from '../store.ts';
import type { Query } from '../postgres/query.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';
import { ACCOUNT_COLUMNS, toAccount } from '../accounts/account-rows.ts';
import { KEY_COLUMNS, toKey } from '../keys/key-rows.ts';

/** Delivers an event to every enabled endpoint subscribed to its type: `$1` the event id, `$2` its type, `$3` when. */
export const FAN_OUT = `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
  SELECT $1, endpoint_id, $3, $3 FROM webhook_endpoints WHERE disabled_at IS NULL AND (event_types IS NULL OR $2 = ANY (event_types))`;

async function objectAfter(query: Query, event: NewAuditEvent): Promise<EventObject> {
  if (event.action === 'account.deleted') return deletedAccountObject(event);
  if (event.action.startsWith('account.')) {
    const [row] = await query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [event.accountId]);
    return row === undefined ? null : accountObject(toAccount(row, POSTGRES_VALUES));
  }
  const [row] = await query(
    `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`,
    [keyIdOf(event)],
  );
  return row === undefined ? null : keyObject(toKey(row, POSTGRES_VALUES));
}

/** Must run in the transaction that makes the change (audit/postgres.ts calls it beside the audit entry). */
export async function insertWebhookEvent(query: Query, event: NewAuditEvent, occurredAt: Date): Promise<void> {
  if (!isWebhookEventType(event.action)) return;
  const eventId = newEventId();
  const body = eventBody(eventId, event.action, occurredAt.toISOString(), await objectAfter(query, event), event.changes);
  await query('INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES ($1, $2, $3, $4)', [eventId, event.action, occurredAt, body]);
  await query(FAN_OUT, [eventId, event.action, occurredAt]);
}

const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * The rest of accounts/postgres.ts's one-statement update: account.updated's webhook event ($6 its id), built as events.ts's
 * eventBody builds it, and its deliveries (FAN_OUT above), both only when the audit entry (CTE `entry`) was written.
 */
export const WEBHOOK_EVENT_OF_UPDATE = (column: 'name' | 'timezone') => `event AS (
              INSERT INTO webhook_events (event_id, type, created_at, payload)
              SELECT $6, 'account.updated', entry.occurred_at, json_build_object(
                'id', $6::text, 'type', 'account.updated', 'created_at', to_char(entry.occurred_at AT TIME ZONE 'UTC', ${UTC_ISO}),
                'data', json_build_object(
                  'object', json_build_object('user_id', changed.id, 'username', changed.username, 'name', changed.name,
                    'timezone', changed.timezone, 'premium', changed.premium,
                    'created_at', to_char(changed.created_at AT TIME ZONE 'UTC', ${UTC_ISO})),
                  'changes', json_build_object('${column}', json_build_object('old', changed.old_value, 'new', $2::text))))::text
              FROM entry, changed
              RETURNING event_id, type, created_at
            ),
            fan_out AS (
              INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
              SELECT event.event_id, e.endpoint_id, event.created_at, event.created_at FROM event, webhook_endpoints e
              WHERE e.disabled_at IS NULL AND (e.event_types IS NULL OR event.type = ANY (e.event_types))
            )`;
