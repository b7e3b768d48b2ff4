// The failures webhook operations and both stores report in the same words.
import { DomainError } from '../errors.ts';

export function webhookEndpointNotFound(endpointId: string): DomainError {
  return new DomainError('not_found', 'webhook_endpoint_not_found', `No webhook endpoint has the id '${endpointId}'.`, { field: 'endpoint_id' });
}

export function webhookEventNotFound(eventId: string): DomainError {
  return new DomainError('not_found', 'webhook_event_not_found', `No webhook event has the id '${eventId}' (events are kept AUDIT_RETENTION_DAYS).`, {
    field: 'event_id',
  });
}

export function tooManyWebhookEndpoints(max: number): DomainError {
  return new DomainError('conflict', 'too_many_webhook_endpoints', `There are already ${max} webhook endpoints, the most a deployment may have; remove one first.`);
}

export function invalidWebhookUrl(message: string): DomainError {
  return new DomainError('invalid', 'invalid_webhook_url', message, { field: 'url' });
}

export function invalidWebhookEvents(message: string): DomainError {
  return new DomainError('invalid', 'invalid_webhook_events', message, { field: 'events' });
}
