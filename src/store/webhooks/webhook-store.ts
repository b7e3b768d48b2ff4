// What webhooks need of a store: endpoints, the outbox's deliveries claimed under a lease, and every attempt's record.
// The outbox rows are written where audit entries are, in the change's own transaction.

/** Disabled ones included: every change fans out to each in its own transaction, so the count is bounded. */
export const MAX_WEBHOOK_ENDPOINTS = 100;

/** Ordered by creation (to the millisecond), then id. */
export interface WebhookEndpointPosition {
  readonly createdAt: string;
  readonly endpointId: string;
}

export interface WebhookEndpoint {
  readonly endpointId: string;
  readonly url: string;
  readonly description: string | null;
  /** Null: every type. */
  readonly eventTypes: readonly string[] | null;
  readonly createdAt: string;
  readonly disabledAt: string | null;
  readonly disabledReason: string | null;
  /** The first failure of the current run; null after a success. */
  readonly failingSince: string | null;
}

export interface NewWebhookEndpoint {
  readonly endpointId: string;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly string[] | null;
  /** Kept to sign every delivery (docs/operations.md says how it is protected). */
  readonly secret: string;
}

export interface ClaimedDelivery {
  readonly deliveryId: number;
  /**
   * When the delivery's event was written, exactly as stored (to the microsecond on PostgreSQL, where deliveries are
   * partitioned by it): recording the attempt finds the delivery in its one partition.
   */
  readonly createdAt: string;
  /** An attempt is recorded only while its claimer still holds the lease. */
  readonly leaseOwner: string;
  readonly eventId: string;
  /** Byte for byte as written with the change. */
  readonly payload: string;
  readonly endpointId: string;
  readonly url: string;
  readonly secret: string;
  readonly attempts: number;
}

export interface AttemptOutcome {
  readonly attemptedAt: Date;
  /** Null when no answer came (refused, timed out, a forbidden address). */
  readonly status: number | null;
  readonly latencyMs: number;
  readonly response: string | null;
  readonly error: string | null;
  readonly succeeded: boolean;
  /** Null: the schedule is spent, the delivery has failed for good. */
  readonly nextAttemptAt: Date | null;
  readonly disableIfFailingSince: Date;
}

/** An endpoint with its signing secret as stored (sealed under WEBHOOK_SECRETS_KEY, or not): for the test event alone. */
export interface EndpointWithSecret {
  readonly endpoint: WebhookEndpoint;
  readonly secret: string;
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
  readonly pending: number;
  readonly oldestPendingAt: string | null;
}

export interface WebhookStore {
  /** too_many_webhook_endpoints past MAX_WEBHOOK_ENDPOINTS, however many are added at once. */
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]>;
  /** Its pending deliveries and history go with it. */
  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint>;
  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint>;
  /** Disabled or not; webhook_endpoint_not_found when there is none. */
  webhookEndpointWithSecret(endpointId: string): Promise<EndpointWithSecret>;
  /** Due, of enabled endpoints, with no live lease; leased to `owner`. Two callers at once never get the same delivery. */
  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]>;
  /** The delivery's new state is recorded only if `claim` still holds its lease. */
  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }>;
  /** Shutting down: another worker may take them at once. */
  releaseWebhookDeliveries(owner: string): Promise<void>;
  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]>;
  /** To `endpointId`, or (null) every endpoint it went to before, else every current subscriber. Resolves with those queued. */
  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]>;
  webhookOutboxStats(): Promise<OutboxStats>;
}
