// Webhooks in PostgreSQL: endpoints, deliveries claimed with FOR UPDATE SKIP LOCKED under a lease, and attempts, as plain
// functions over a Query and as the store's part (PostgresWebhooks). The outbox rows are postgres-outbox.ts's.
import { tooManyWebhookEndpoints, webhookEndpointNotFound, webhookEventNotFound } from '../../domain/webhooks/webhook-errors.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  EndpointWithSecret,
  NewWebhookEndpoint,
  OutboxStats,
  WebhookEndpoint,
  WebhookEndpointPosition,
  WebhookStore,
} from './webhook-store.ts';
import { MAX_WEBHOOK_ENDPOINTS } from './webhook-store.ts';
import { failureReason } from '../../domain/webhooks/retry-schedule.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import type { Query, Row } from '../postgres/query.ts';
import { iso, isoOrNull } from '../postgres/query.ts';
import { ENDPOINT_COLUMNS, toAttempt, toEndpoint } from './webhook-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';


/**
 * Must run in a transaction. Under READ COMMITTED two inserts could each count 99 and both go in, so creates first take a
 * lock that conflicts with itself (and with writes to the table), leaving reads free: the fan-out and the claims go on.
 * created_at is kept to the millisecond, as answers show it and as the list pages by it.
 */
export async function insertEndpoint(query: Query, endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
  await query('LOCK TABLE webhook_endpoints IN SHARE ROW EXCLUSIVE MODE');
  const [row] = await query(
    `INSERT INTO webhook_endpoints (endpoint_id, url, description, event_types, secret, created_at)
     SELECT $1, $2, $3, $4, $5, date_trunc('milliseconds', now()) WHERE (SELECT count(*) FROM webhook_endpoints) < $6
     RETURNING ${ENDPOINT_COLUMNS}`,
    [endpoint.endpointId, endpoint.url, endpoint.description, endpoint.eventTypes, endpoint.secret, MAX_WEBHOOK_ENDPOINTS],
  );
  if (row === undefined) throw tooManyWebhookEndpoints(MAX_WEBHOOK_ENDPOINTS);
  return toEndpoint(row, POSTGRES_VALUES);
}

/**
 * Ordered by created_at to the millisecond (what answers show, and so what a cursor holds), then id: an endpoint created
 * before created_at was kept to the millisecond is still placed exactly.
 */
export async function selectEndpointPage(query: Query, after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
  const rows = await query(
    `SELECT endpoint_id, url, description, event_types, date_trunc('milliseconds', created_at) AS created_at, disabled_at, disabled_reason,
            failing_since
     FROM webhook_endpoints
     WHERE $1::timestamptz IS NULL OR (date_trunc('milliseconds', created_at), endpoint_id) > ($1::timestamptz, $2::text)
     ORDER BY date_trunc('milliseconds', created_at), endpoint_id LIMIT $3`,
    [after?.createdAt ?? null, after?.endpointId ?? null, limit],
  );
  return rows.map((row) => toEndpoint(row, POSTGRES_VALUES));
}

export async function selectEndpoints(query: Query): Promise<WebhookEndpoint[]> {
  return (await query(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, endpoint_id`)).map((row) => toEndpoint(row, POSTGRES_VALUES));
}

export async function selectEndpointWithSecret(query: Query, endpointId: string): Promise<EndpointWithSecret> {
  const [row] = await query(`SELECT ${ENDPOINT_COLUMNS}, secret FROM webhook_endpoints WHERE endpoint_id = $1`, [endpointId]);
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  return { endpoint: toEndpoint(row, POSTGRES_VALUES), secret: String(row.secret) };
}

export async function deleteEndpoint(query: Query, endpointId: string): Promise<WebhookEndpoint> {
  const [row] = await query(`DELETE FROM webhook_endpoints WHERE endpoint_id = $1 RETURNING ${ENDPOINT_COLUMNS}`, [endpointId]);
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  await query('DELETE FROM webhook_attempts WHERE endpoint_id = $1', [endpointId]);
  return toEndpoint(row, POSTGRES_VALUES);
}

export async function updateEndpointEnabled(query: Query, endpointId: string, enabled: boolean, reason: string | null): Promise<WebhookEndpoint> {
  const [row] = enabled
    ? await query(
        `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE endpoint_id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
        [endpointId],
      )
    : await query(
        `UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, now()), disabled_reason = coalesce(disabled_reason, $2)
         WHERE endpoint_id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
        [endpointId, reason],
      );
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  return toEndpoint(row, POSTGRES_VALUES);
}

/** A time to the microsecond as text, read back by ::timestamptz exactly (a Date keeps milliseconds only). */
const EXACT_TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * One statement: rows another instance has locked are skipped, not waited for, and each row claimed is leased to `owner`.
 * A delivery shares its event's created_at (the partition key of both): each row joined is looked up in its one partition.
 */
export async function claimDeliveries(query: Query, owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
  const rows = await query(
    `WITH due AS (
       SELECT d.delivery_id, d.created_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
       WHERE d.state = 'pending' AND d.next_attempt_at <= $3 AND (d.lease_until IS NULL OR d.lease_until <= $3) AND e.disabled_at IS NULL
       ORDER BY d.next_attempt_at, d.delivery_id LIMIT $4
       FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET lease_owner = $1, lease_until = $2
     FROM due, webhook_events ev, webhook_endpoints e
     WHERE d.delivery_id = due.delivery_id AND d.created_at = due.created_at AND ev.event_id = d.event_id AND ev.created_at = d.created_at
       AND e.endpoint_id = d.endpoint_id
     RETURNING d.delivery_id, ${EXACT_TIME('d.created_at')} AS created_at, d.event_id, d.endpoint_id, d.attempts, ev.payload, e.url, e.secret`,
    [owner, leaseUntil, now, limit],
  );
  return rows.map((row) => ({
    deliveryId: Number(row.delivery_id),
    createdAt: String(row.created_at),
    leaseOwner: owner,
    eventId: String(row.event_id),
    payload: String(row.payload),
    endpointId: String(row.endpoint_id),
    url: String(row.url),
    secret: String(row.secret),
    attempts: Number(row.attempts),
  }));
}

export async function recordAttempt(query: Query, claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ disabled: boolean }> {
  await query(
    `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response, error)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = $1 AND created_at = $9::timestamptz)`,
    [claim.deliveryId, claim.endpointId, claim.eventId, outcome.attemptedAt, outcome.status, Math.round(outcome.latencyMs), outcome.response, outcome.error, claim.createdAt],
  );
  const state = outcome.succeeded ? 'succeeded' : outcome.nextAttemptAt === null ? 'failed' : 'pending';
  await query(
    `UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, next_attempt_at = coalesce($2, next_attempt_at), lease_owner = NULL, lease_until = NULL
     WHERE delivery_id = $3 AND created_at = $5::timestamptz AND lease_owner = $4`,
    [state, outcome.nextAttemptAt, claim.deliveryId, claim.leaseOwner, claim.createdAt],
  );
  if (outcome.succeeded) {
    await query('UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = $1 AND failing_since IS NOT NULL', [claim.endpointId]);
    return { disabled: false };
  }
  const [endpoint] = await query(
    'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $1) WHERE endpoint_id = $2 RETURNING failing_since',
    [outcome.attemptedAt, claim.endpointId],
  );
  if (endpoint === undefined) return { disabled: false };
  const disabled = await query(
    `UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = $2
     WHERE endpoint_id = $3 AND disabled_at IS NULL AND failing_since <= $4 RETURNING endpoint_id`,
    [outcome.attemptedAt, failureReason(iso(endpoint.failing_since), outcome), claim.endpointId, outcome.disableIfFailingSince],
  );
  return { disabled: disabled.length > 0 };
}

export async function releaseLeases(query: Query, owner: string): Promise<void> {
  await query("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND state = 'pending'", [owner]);
}

export async function selectAttempts(query: Query, endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
  if ((await query('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1', [endpointId])).length === 0) throw webhookEndpointNotFound(endpointId);
  return (
    await query(
      `SELECT attempt_id, delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response, error
       FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY attempt_id DESC LIMIT $2`,
      [endpointId, limit],
    )
  ).map((row) => toAttempt(row, POSTGRES_VALUES));
}

/**
 * The event is found by id alone, an index probe in every partition (event ids carry no time; redelivery is an operator's
 * rare act); its deliveries then in its one partition, where the new ones go too, under the event's created_at.
 */
export async function queueRedelivery(query: Query, eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
  const [event] = await query(`SELECT type, ${EXACT_TIME('created_at')} AS created_at FROM webhook_events WHERE event_id = $1`, [eventId]);
  if (event === undefined) throw webhookEventNotFound(eventId);
  let targets: string[];
  if (endpointId !== null) {
    if ((await query('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1', [endpointId])).length === 0) throw webhookEndpointNotFound(endpointId);
    targets = [endpointId];
  } else {
    targets = (
      await query('SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE event_id = $1 AND created_at = $2::timestamptz ORDER BY endpoint_id', [
        eventId,
        event.created_at,
      ])
    ).map((row) =>
      String(row.endpoint_id),
    );
    if (targets.length === 0) {
      targets = (await selectEndpoints(query))
        .filter((endpoint) => endpoint.disabledAt === null && (endpoint.eventTypes === null || endpoint.eventTypes.includes(String(event.type))))
        .map((endpoint) => endpoint.endpointId);
    }
  }
  for (const target of targets) {
    await query('INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at) VALUES ($1, $2, $3, $4::timestamptz)', [
      eventId,
      target,
      now,
      event.created_at,
    ]);
  }
  return targets;
}

export async function selectOutboxStats(query: Query): Promise<OutboxStats> {
  const [row] = await query(
    `SELECT count(*) AS pending, min(ev.created_at) AS oldest FROM webhook_deliveries d
     JOIN webhook_events ev ON ev.event_id = d.event_id AND ev.created_at = d.created_at WHERE d.state = 'pending'`,
  );
  return { pending: Number(row!.pending), oldestPendingAt: isoOrNull(row!.oldest) };
}

/** The store's webhook methods: a write of several statements is one transaction, the rest one statement each. */
export class PostgresWebhooks extends PostgresPart implements WebhookStore {
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.engine.transaction((query) => insertEndpoint(query, endpoint));
  }

  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
    return selectEndpointPage(this.engine.query, after, limit);
  }

  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.engine.transaction((query) => deleteEndpoint(query, endpointId));
  }

  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    return updateEndpointEnabled(this.engine.query, endpointId, enabled, reason ?? null);
  }

  webhookEndpointWithSecret(endpointId: string): Promise<EndpointWithSecret> {
    return selectEndpointWithSecret(this.engine.query, endpointId);
  }

  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    return claimDeliveries(this.engine.query, owner, limit, now, leaseUntil);
  }

  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }> {
    return this.engine.transaction((query) => recordAttempt(query, claim, outcome));
  }

  releaseWebhookDeliveries(owner: string): Promise<void> {
    return releaseLeases(this.engine.query, owner);
  }

  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    return selectAttempts(this.engine.query, endpointId, limit);
  }

  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
    return this.engine.transaction((query) => queueRedelivery(query, eventId, endpointId, now));
  }

  webhookOutboxStats(): Promise<OutboxStats> {
    return selectOutboxStats(this.engine.query);
  }
}
