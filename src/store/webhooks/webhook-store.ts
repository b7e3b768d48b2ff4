// What webhooks need of a store: endpoints, the outbox's deliveries claimed under a lease, and every attempt's record.
// Both engines implement it (webhooks/sqlite.ts, webhooks/postgres.ts); the outbox rows themselves are written by
// the engines where they write audit entries, in the change's own transaction.

/**
 * The most endpoints a deployment may have, disabled ones included (they keep a secret and may be enabled again). Every change
 * is fanned out to each in the change's own transaction, so the count is bounded like the keys per account.
 */
export const MAX_WEBHOOK_ENDPOINTS = 100;

/** Where a page of endpoints ends: the list is ordered by creation (to the millisecond), then id. */
export interface WebhookEndpointPosition {
  readonly createdAt: string;
  readonly endpointId: string;
}

export interface WebhookEndpoint {
  /** `we_` and 16 random characters: named on the command line, never secret. */
  readonly endpointId: string;
  readonly url: string;
  readonly description: string | null;
  /** The event types sent to it; null: every type. */
  readonly eventTypes: readonly string[] | null;
  readonly createdAt: string;
  readonly disabledAt: string | null;
  /** Why it was disabled: by an operator, or by failing for WEBHOOK_DISABLE_AFTER. */
  readonly disabledReason: string | null;
  /** The first failure of the current run of failures; null after a success. */
  readonly failingSince: string | null;
}

export interface NewWebhookEndpoint {
  readonly endpointId: string;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly string[] | null;
  /** `whsec_...`: kept so every delivery can be signed (docs/operations.md says how it is protected). */
  readonly secret: string;
}

/** A delivery this worker holds until `leaseUntil`: nobody else sends it meanwhile. */
export interface ClaimedDelivery {
  readonly deliveryId: number;
  /** Who holds the lease: an attempt is recorded only while its claimer still holds it. */
  readonly leaseOwner: string;
  readonly eventId: string;
  /** The body to send, byte for byte as written with the change. */
  readonly payload: string;
  readonly endpointId: string;
  readonly url: string;
  readonly secret: string;
  /** Attempts made before this one. */
  readonly attempts: number;
}

export interface AttemptOutcome {
  readonly attemptedAt: Date;
  /** The answer's status; null when none came (refused, timed out, a forbidden address). */
  readonly status: number | null;
  readonly latencyMs: number;
  /** The answer's first bytes, as text. */
  readonly response: string | null;
  /** Why no answer counted: a network error, a timeout, a refused address. */
  readonly error: string | null;
  readonly succeeded: boolean;
  /** A failure's next attempt; null: the schedule is spent, the delivery has failed for good. */
  readonly nextAttemptAt: Date | null;
  /** An endpoint failing since this instant or earlier is disabled by this failure. */
  readonly disableIfFailingSince: Date;
}

export interface DeliveryAttempt {
  readonly attemptId: number;
  readonly deliveryId: number;
  readonly endpointId: string;
  readonly eventId: string;
  readonly attemptedAt: string;
  readonly status: number | null;
  readonly latencyMs: number;
  readonly response: string | null;
  readonly error: string | null;
}

export interface OutboxStats {
  /** Deliveries not yet made nor given up on. */
  readonly pending: number;
  /** When the oldest pending delivery's event was written; null when none is pending. */
  readonly oldestPendingAt: string | null;
}

export interface WebhookStore {
  /** Fails with too_many_webhook_endpoints past MAX_WEBHOOK_ENDPOINTS, however many are added at once. */
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  /** Up to `limit` endpoints after `after` (null: from the first), oldest first. */
  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]>;
  /** Fails with webhook_endpoint_not_found; its pending deliveries and their history go with it. */
  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint>;
  /** Disabling records `reason`; enabling clears it and the run of failures. Fails with webhook_endpoint_not_found. */
  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint>;
  /**
   * Up to `limit` pending deliveries due at `now`, of enabled endpoints, that no live lease holds: leased to `owner` until
   * `leaseUntil`. Two callers at once never get the same delivery.
   */
  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]>;
  /** Records the attempt, then (if `claim` still holds its lease) the delivery's new state; says whether the endpoint was disabled by it. */
  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }>;
  /** Lets go of the leases `owner` holds (shutting down): another worker may take them at once. */
  releaseWebhookDeliveries(owner: string): Promise<void>;
  /** The newest `limit` attempts to this endpoint, newest first. Fails with webhook_endpoint_not_found. */
  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]>;
  /**
   * Queues the event again, due at `now`, to `endpointId` or (null) to every endpoint it was delivered to before, else every
   * current endpoint subscribed to its type. Resolves with the endpoints queued. Fails with webhook_event_not_found.
   */
  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]>;
  webhookOutboxStats(): Promise<OutboxStats>;
}
