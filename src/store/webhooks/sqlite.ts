// Webhooks' rows in SQLite: endpoints, leased deliveries and attempts (the outbox itself is written by sqlite-outbox.ts, inside
// each change's transaction).
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
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { ENDPOINT_COLUMNS, toAttempt, toEndpoint } from './webhook-rows.ts';
import { textOrNull } from '../rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';


/**
 * Inside a write transaction (BEGIN IMMEDIATE), so the count and the insert are one step: of two processes adding the last
 * endpoint allowed at once, the second waits for the first and then finds none left.
 */
export function insertEndpoint(prepare: Prepare, endpoint: NewWebhookEndpoint, at = new Date()): WebhookEndpoint {
  const row = prepare(
    `INSERT INTO webhook_endpoints (endpoint_id, url, description, event_types, secret, created_at)
     SELECT ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM webhook_endpoints) < ?
     RETURNING ${ENDPOINT_COLUMNS}`,
  ).get(
    endpoint.endpointId,
    endpoint.url,
    endpoint.description,
    endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
    endpoint.secret,
    at.toISOString(),
    MAX_WEBHOOK_ENDPOINTS,
  );
  if (row === undefined) throw tooManyWebhookEndpoints(MAX_WEBHOOK_ENDPOINTS);
  return toEndpoint(row as Row, SQLITE_VALUES);
}

export function selectEndpoints(prepare: Prepare): WebhookEndpoint[] {
  return prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, endpoint_id`)
    .all()
    .map((row) => toEndpoint(row as Row, SQLITE_VALUES));
}

/** created_at is stored as toISOString() writes it, so the text compares as the instant does. */
export function selectEndpointPage(prepare: Prepare, after: WebhookEndpointPosition | null, limit: number): WebhookEndpoint[] {
  return prepare(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ?1 IS NULL OR (created_at, endpoint_id) > (?1, ?2)
     ORDER BY created_at, endpoint_id LIMIT ?3`,
  )
    .all(after?.createdAt ?? null, after?.endpointId ?? null, limit)
    .map((row) => toEndpoint(row as Row, SQLITE_VALUES));
}

export function deleteEndpoint(prepare: Prepare, endpointId: string): WebhookEndpoint {
  const row = prepare(`DELETE FROM webhook_endpoints WHERE endpoint_id = ? RETURNING ${ENDPOINT_COLUMNS}`).get(endpointId);
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  prepare('DELETE FROM webhook_attempts WHERE endpoint_id = ?').run(endpointId);
  return toEndpoint(row as Row, SQLITE_VALUES);
}

export function updateEndpointEnabled(prepare: Prepare, endpointId: string, enabled: boolean, reason: string | null, at = new Date()): WebhookEndpoint {
  const row = enabled
    ? prepare(
        `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE endpoint_id = ? RETURNING ${ENDPOINT_COLUMNS}`,
      ).get(endpointId)
    : prepare(
        `UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, ?), disabled_reason = coalesce(disabled_reason, ?)
         WHERE endpoint_id = ? RETURNING ${ENDPOINT_COLUMNS}`,
      ).get(at.toISOString(), reason, endpointId);
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  return toEndpoint(row as Row, SQLITE_VALUES);
}

export function selectEndpointWithSecret(prepare: Prepare, endpointId: string): EndpointWithSecret {
  const row = prepare(`SELECT ${ENDPOINT_COLUMNS}, secret FROM webhook_endpoints WHERE endpoint_id = ?`).get(endpointId) as Row | undefined;
  if (row === undefined) throw webhookEndpointNotFound(endpointId);
  return { endpoint: toEndpoint(row, SQLITE_VALUES), secret: String(row.secret) };
}

/**
 * Whether any delivery is due and unleased: a read, which takes no lock, so an idle outbox costs every process one cheap
 * query per poll instead of a write transaction that would queue behind (and hold up) the API's writes.
 */
export function anyDue(prepare: Prepare, now: Date): boolean {
  return (
    prepare(
      `SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) LIMIT 1`,
    ).get(now.toISOString()) !== undefined
  );
}

/** Inside a write transaction (BEGIN IMMEDIATE), so two processes claiming at once take turns and never share a row. */
export function claimDeliveries(prepare: Prepare, owner: string, limit: number, now: Date, leaseUntil: Date): ClaimedDelivery[] {
  const rows = prepare(
    `UPDATE webhook_deliveries SET lease_owner = ?1, lease_until = ?2
     WHERE delivery_id IN (
       SELECT d.delivery_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
       WHERE d.state = 'pending' AND d.next_attempt_at <= ?3 AND (d.lease_until IS NULL OR d.lease_until <= ?3) AND e.disabled_at IS NULL
       ORDER BY d.next_attempt_at, d.delivery_id LIMIT ?4)
     RETURNING delivery_id`,
  ).all(owner, leaseUntil.toISOString(), now.toISOString(), limit);
  const read = prepare(
    `SELECT d.delivery_id, d.created_at, d.event_id, d.endpoint_id, d.attempts, ev.payload, e.url, e.secret
     FROM webhook_deliveries d JOIN webhook_events ev ON ev.event_id = d.event_id JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
     WHERE d.delivery_id = ?`,
  );
  return rows.map((claimed) => {
    const row = read.get(Number(claimed.delivery_id)) as Row;
    return {
      deliveryId: Number(row.delivery_id),
      createdAt: String(row.created_at),
      leaseOwner: owner,
      eventId: String(row.event_id),
      payload: String(row.payload),
      endpointId: String(row.endpoint_id),
      url: String(row.url),
      secret: String(row.secret),
      attempts: Number(row.attempts),
    };
  });
}

/** Inside one transaction: the attempt, the delivery's new state (while the lease is still ours), the endpoint's run of failures. */
export function recordAttempt(prepare: Prepare, claim: ClaimedDelivery, outcome: AttemptOutcome): { disabled: boolean } {
  const at = outcome.attemptedAt.toISOString();
  prepare(
    `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response, error)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?1)`,
  ).run(claim.deliveryId, claim.endpointId, claim.eventId, at, outcome.status, Math.round(outcome.latencyMs), outcome.response, outcome.error);
  const state = outcome.succeeded ? 'succeeded' : outcome.nextAttemptAt === null ? 'failed' : 'pending';
  prepare(
    `UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = coalesce(?, next_attempt_at), lease_owner = NULL, lease_until = NULL
     WHERE delivery_id = ? AND lease_owner = ?`,
  ).run(state, outcome.nextAttemptAt?.toISOString() ?? null, claim.deliveryId, claim.leaseOwner);
  if (outcome.succeeded) {
    prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = ? AND failing_since IS NOT NULL').run(claim.endpointId);
    return { disabled: false };
  }
  prepare('UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE endpoint_id = ?').run(at, claim.endpointId);
  const disabled = prepare(
    `UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ?
     WHERE endpoint_id = ? AND disabled_at IS NULL AND failing_since <= ? RETURNING endpoint_id`,
  ).get(at, disabledReason(outcome, prepare, claim.endpointId), claim.endpointId, outcome.disableIfFailingSince.toISOString());
  return { disabled: disabled !== undefined };
}

function disabledReason(outcome: AttemptOutcome, prepare: Prepare, endpointId: string): string {
  const since = (prepare('SELECT failing_since FROM webhook_endpoints WHERE endpoint_id = ?').get(endpointId) as Row | undefined)?.failing_since;
  return failureReason(String(since), outcome);
}


export function releaseLeases(prepare: Prepare, owner: string): void {
  prepare("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ? AND state = 'pending'").run(owner);
}

export function selectAttempts(prepare: Prepare, endpointId: string, limit: number): DeliveryAttempt[] {
  if (prepare('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = ?').get(endpointId) === undefined) throw webhookEndpointNotFound(endpointId);
  return prepare(
    `SELECT attempt_id, delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response, error
     FROM webhook_attempts WHERE endpoint_id = ? ORDER BY attempt_id DESC LIMIT ?`,
  )
    .all(endpointId, limit)
    .map((row) => toAttempt(row as Row, SQLITE_VALUES));
}

export function queueRedelivery(prepare: Prepare, eventId: string, endpointId: string | null, now: Date): string[] {
  const event = prepare('SELECT type FROM webhook_events WHERE event_id = ?').get(eventId) as Row | undefined;
  if (event === undefined) throw webhookEventNotFound(eventId);
  let targets: string[];
  if (endpointId !== null) {
    if (prepare('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = ?').get(endpointId) === undefined) throw webhookEndpointNotFound(endpointId);
    targets = [endpointId];
  } else {
    targets = prepare('SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE event_id = ? ORDER BY endpoint_id')
      .all(eventId)
      .map((row) => String(row.endpoint_id));
    if (targets.length === 0) {
      targets = selectEndpoints(prepare)
        .filter((endpoint) => endpoint.disabledAt === null && (endpoint.eventTypes === null || endpoint.eventTypes.includes(String(event.type))))
        .map((endpoint) => endpoint.endpointId);
    }
  }
  const insert = prepare('INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at) VALUES (?1, ?2, ?3, ?3)');
  for (const target of targets) insert.run(eventId, target, now.toISOString());
  return targets;
}

export function selectOutboxStats(prepare: Prepare): OutboxStats {
  const row = prepare(
    `SELECT count(*) AS pending, min(ev.created_at) AS oldest FROM webhook_deliveries d JOIN webhook_events ev ON ev.event_id = d.event_id
     WHERE d.state = 'pending'`,
  ).get() as Row;
  return { pending: Number(row.pending), oldestPendingAt: textOrNull(row.oldest) };
}

export class SqliteWebhooks implements WebhookStore {
  readonly #engine: SqliteEngine;

  constructor(engine: SqliteEngine) {
    this.#engine = engine;
  }

  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#engine.run(() => this.#engine.transaction(() => insertEndpoint(this.#engine.statement, endpoint)));
  }

  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
    return this.#engine.run(() => selectEndpointPage(this.#engine.statement, after, limit));
  }

  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.#engine.run(() => this.#engine.transaction(() => deleteEndpoint(this.#engine.statement, endpointId)));
  }

  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    return this.#engine.run(() => updateEndpointEnabled(this.#engine.statement, endpointId, enabled, reason ?? null));
  }

  webhookEndpointWithSecret(endpointId: string): Promise<EndpointWithSecret> {
    return this.#engine.run(() => selectEndpointWithSecret(this.#engine.statement, endpointId));
  }

  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      anyDue(statement, now) ? this.#engine.transaction(() => claimDeliveries(statement, owner, limit, now, leaseUntil)) : [],
    );
  }

  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }> {
    return this.#engine.run(() => this.#engine.transaction(() => recordAttempt(this.#engine.statement, claim, outcome)));
  }

  releaseWebhookDeliveries(owner: string): Promise<void> {
    return this.#engine.run(() => releaseLeases(this.#engine.statement, owner));
  }

  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    return this.#engine.run(() => selectAttempts(this.#engine.statement, endpointId, limit));
  }

  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
    return this.#engine.run(() => this.#engine.transaction(() => queueRedelivery(this.#engine.statement, eventId, endpointId, now)));
  }

  webhookOutboxStats(): Promise<OutboxStats> {
    return this.#engine.run(() => selectOutboxStats(this.#engine.statement));
  }
}
