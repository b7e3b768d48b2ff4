// How the CLI's --json and the admin API show endpoints and attempts: snake_case, never a secret.
import type { DeliveryAttempt, WebhookEndpoint } from '../store/webhooks/webhook-store.ts';

export function endpointJson(endpoint: WebhookEndpoint) {
  return {
    endpoint_id: endpoint.endpointId,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.eventTypes,
    created_at: endpoint.createdAt,
    enabled: endpoint.disabledAt === null,
    disabled_at: endpoint.disabledAt,
    disabled_reason: endpoint.disabledReason,
    failing_since: endpoint.failingSince,
  };
}

export function attemptJson(attempt: DeliveryAttempt) {
  return {
    attempted_at: attempt.attemptedAt,
    event_id: attempt.eventId,
    status: attempt.status,
    latency_ms: attempt.latencyMs,
    response: attempt.response,
    error: attempt.error,
  };
}
