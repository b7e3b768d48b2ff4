// How the CLI's --json and the admin API show endpoints, attempts and test events: snake_case, never a secret.
import type { TestEventOutcome } from '../webhooks.ts';
import type { DeliveryAttempt, WebhookEndpoint } from '../../store/webhooks/webhook-store.ts';

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

/** The fields of an attempt (status, latency_ms, response, error), and whether the receiver took it. */
export function testEventJson(outcome: TestEventOutcome) {
  const { endpoint, eventId, sentAt, result } = outcome;
  return {
    endpoint_id: endpoint.endpointId,
    url: endpoint.url,
    event_id: eventId,
    sent_at: sentAt,
    delivered: result.succeeded,
    status: result.status,
    latency_ms: Math.round(result.latencyMs),
    response: result.response,
    error: result.error,
  };
}
