// Webhook endpoint operations, shared by the CLI and the admin API: add, disable, enable, read attempts, redeliver, test.
import { randomBytes } from 'node:crypto';
import { DomainError } from '../domain/errors.ts';
import type { AuditActor, Store } from '../store/store.ts';
import { checkedAddress, parseWebhookUrl } from './webhooks/address-check.ts';
import { isWebhookEventType, newEventId, pingBody, WEBHOOK_EVENT_TYPES } from '../domain/webhooks/events.ts';
import { openSecret, sealSecret } from '../domain/webhooks/secret-sealing.ts';
import { sendDelivery, type SendOptions, type SendResult } from './webhooks/send-delivery.ts';
import { newSigningSecret } from '../domain/webhooks/signature.ts';
import { invalidWebhookEvents, invalidWebhookUrl } from '../domain/webhooks/webhook-errors.ts';
import type { DeliveryAttempt, WebhookEndpoint } from '../store/webhooks/webhook-store.ts';

export interface NewEndpointRequest {
  readonly url: string;
  /** A list (JSON) or comma-separated (a form, the CLI); undefined or empty text: every type. */
  readonly events?: string | readonly string[] | undefined;
  readonly description?: string | undefined;
}

export const MAX_URL_LENGTH = 2000;
export const MAX_DESCRIPTION_LENGTH = 200;
export const MAX_ATTEMPTS_LISTED = 1000;

function parseEvents(events: string | readonly string[] | undefined): string[] | null {
  if (events === undefined || (typeof events === 'string' && events.trim() === '')) return null;
  // An empty list would subscribe to nothing: surely a mistake.
  if (typeof events !== 'string' && events.length === 0) {
    throw invalidWebhookEvents(`Name at least one event type, or leave events out for every type; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  }
  const named = typeof events === 'string' ? events.split(',').map((part) => part.trim()).filter((part) => part !== '') : events;
  const types = [...new Set(named)];
  const unknown = types.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0) {
    throw invalidWebhookEvents(`Unknown event type ${unknown.map((type) => `'${type}'`).join(', ')}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  }
  return types;
}

// As display names refuse them (domain/names.ts): controls (ESC, CR and BEL drive the operator's terminal), line separators,
// and bidi controls that make a line read as something else.
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** Trimmed, null when empty. */
function checkDescription(text: string | undefined): string | null {
  if (text !== undefined && UNPRINTABLE.test(text)) {
    throw new DomainError(
      'invalid',
      'invalid_description',
      'A description must not contain control characters (line breaks, tabs, escapes) or bidirectional controls (U+202A-U+202E, U+2066-U+2069).',
      { field: 'description' },
    );
  }
  const description = text?.trim() || null;
  if (description !== null && description.length > MAX_DESCRIPTION_LENGTH) {
    throw new DomainError('invalid', 'invalid_description', `A description has at most ${MAX_DESCRIPTION_LENGTH} characters.`, {
      field: 'description',
    });
  }
  return description;
}

/** Checks the URL (and unless `allowPrivate` its address); the new signing secret is returned this once only. */
export async function addWebhookEndpoint(
  store: Store,
  request: NewEndpointRequest,
  settings: { readonly allowPrivate: boolean; readonly secretsKey: Buffer | null },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { allowPrivate } = settings;
  if (request.url.length > MAX_URL_LENGTH) throw invalidWebhookUrl(`A webhook URL has at most ${MAX_URL_LENGTH} characters.`);
  const url = parseWebhookUrl(request.url);
  const eventTypes = parseEvents(request.events);
  const description = checkDescription(request.description);
  await checkedAddress(url, allowPrivate);
  const secret = newSigningSecret();
  const endpoint = await store.createWebhookEndpoint({
    endpointId: `we_${randomBytes(12).toString('base64url')}`,
    url: url.href,
    description,
    eventTypes,
    secret: sealSecret(secret, settings.secretsKey),
  });
  return { endpoint, secret };
}

/** `by` is named in a disabled endpoint's reason. Enabled: pending deliveries resume and the failure run restarts. */
export function switchWebhookEndpoint(store: Store, endpointId: string, to: 'disable' | 'enable', by: string): Promise<WebhookEndpoint> {
  return to === 'disable' ? store.setWebhookEndpointEnabled(endpointId, false, `disabled by ${by}`) : store.setWebhookEndpointEnabled(endpointId, true);
}

/** One endpoint, disabled or not, as listed: never its secret; webhook_endpoint_not_found when there is none. */
export async function findWebhookEndpoint(store: Store, endpointId: string): Promise<WebhookEndpoint> {
  return (await store.webhookEndpointWithSecret(endpointId)).endpoint;
}

export function listWebhookAttempts(store: Store, endpointId: string, limit = 50): Promise<DeliveryAttempt[]> {
  return store.listWebhookAttempts(endpointId, Math.max(1, Math.min(limit, MAX_ATTEMPTS_LISTED)));
}

/** Same event id (receivers deduplicate by it), due now; resolves with the endpoints queued. */
export function redeliverWebhookEvent(store: Store, eventId: string, endpointId: string | null): Promise<string[]> {
  return store.redeliverWebhookEvent(eventId, endpointId, new Date());
}

export interface TestEventSettings {
  /** WEBHOOK_ALLOW_PRIVATE: the test event meets the same address check as every delivery. */
  readonly allowPrivate: boolean;
  readonly secretsKey: Buffer | null;
  readonly userAgent: string;
}

export interface TestEventOutcome {
  readonly endpoint: WebhookEndpoint;
  /** A new evt_ id, of an event that is not stored: it cannot be redelivered. */
  readonly eventId: string;
  readonly sentAt: string;
  /** What came back; `succeeded` is a 2xx within the delivery time limit, as for any delivery. */
  readonly result: SendResult;
}

/**
 * Sends a signed `ping` to one endpoint now, enabled or disabled (checking one before enabling it is the point), whatever
 * types it takes, and resolves with what the receiver answered. It is not queued, not retried and not one of the endpoint's
 * attempts, so it leaves its history and its run of failures (which can disable it) as they were. It is recorded in the
 * audit trail as webhook_endpoint.tested by `actor`: it changes nothing, but it makes the server send a request on demand,
 * and who did so, where, and what came back is worth keeping. Never rejects for the receiver's sake: a refused address, a
 * refused connection, a time-out or a secret that cannot be unsealed is the outcome's `error`.
 */
export async function sendWebhookTestEvent(
  store: Store,
  endpointId: string,
  settings: TestEventSettings,
  actor: AuditActor,
  send: (options: SendOptions) => Promise<SendResult> = sendDelivery,
): Promise<TestEventOutcome> {
  const { endpoint, secret: stored } = await store.webhookEndpointWithSecret(endpointId);
  const eventId = newEventId();
  const now = new Date();
  const sentAt = now.toISOString();
  let result: SendResult;
  try {
    const secret = openSecret(stored, settings.secretsKey);
    const body = pingBody(eventId, sentAt, endpoint.endpointId);
    result = await send({ url: endpoint.url, secret, eventId, body, allowPrivate: settings.allowPrivate, userAgent: settings.userAgent, now: () => now });
  } catch (error) {
    result = { status: null, latencyMs: 0, response: null, error: (error as Error).message, succeeded: false };
  }
  await store.recordAudit(
    {
      action: 'webhook_endpoint.tested',
      accountId: null,
      username: null,
      changes: {
        endpoint_id: { old: null, new: endpoint.endpointId },
        url: { old: null, new: endpoint.url },
        event_id: { old: null, new: eventId },
        status: { old: null, new: result.status },
      },
    },
    actor,
  );
  return { endpoint, eventId, sentAt, result };
}
