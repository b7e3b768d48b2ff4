// Webhook endpoints' and attempts' rows as both engines select them, and their one mapping each.
import { textOrNull, type Row, type Values } from '../rows.ts';
import type { DeliveryAttempt, WebhookEndpoint } from './webhook-store.ts';

export const ENDPOINT_COLUMNS = 'endpoint_id, url, description, event_types, created_at, disabled_at, disabled_reason, failing_since';

export function toEndpoint(row: Row, values: Values): WebhookEndpoint {
  return {
    endpointId: String(row.endpoint_id),
    url: String(row.url),
    description: textOrNull(row.description),
    eventTypes: values.list(row.event_types),
    createdAt: values.time(row.created_at),
    disabledAt: values.timeOrNull(row.disabled_at),
    disabledReason: textOrNull(row.disabled_reason),
    failingSince: values.timeOrNull(row.failing_since),
  };
}

export function toAttempt(row: Row, values: Values): DeliveryAttempt {
  return {
    attemptId: Number(row.attempt_id),
    deliveryId: Number(row.delivery_id),
    endpointId: String(row.endpoint_id),
    eventId: String(row.event_id),
    attemptedAt: values.time(row.attempted_at),
    status: row.status === null ? null : Number(row.status),
    latencyMs: Number(row.latency_ms),
    response: textOrNull(row.response),
    error: textOrNull(row.error),
  };
}
