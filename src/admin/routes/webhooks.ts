// /admin/v0/webhooks and /admin/v0/webhook-events: the `account-api webhooks` commands over HTTP, through the same operations.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/failures/http-error.ts';
import { RepeatedValues } from '../../http/wire/form-encoding.ts';
import { success } from '../../http/wire/envelope.ts';
import type { Store } from '../../store/store.ts';
import {
  addWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookAttempts,
  MAX_ATTEMPTS_LISTED,
  MAX_DESCRIPTION_LENGTH,
  MAX_URL_LENGTH,
  redeliverWebhookEvent,
  sendWebhookTestEvent,
  switchWebhookEndpoint,
} from '../../operations/webhooks.ts';
import { attemptJson, endpointJson, testEventJson } from '../../operations/webhooks/representations.ts';
import { MAX_WEBHOOK_ENDPOINTS } from '../../store/webhooks/webhook-store.ts';
import { DomainError } from '../../domain/errors.ts';
import { actorOf } from '../admin-actor.ts';
import { decodeEndpointCursor, encodeEndpointCursor, pageLimit } from '../../http/wire/paging.ts';
import { adminRoute, fieldsOf, limitParameter, pageQuery, pathParameter, stringParameter } from '../admin-schemas.ts';

export interface WebhookRoutesOptions {
  readonly store: Store;
  /** WEBHOOK_ALLOW_PRIVATE and WEBHOOK_SECRETS_KEY, as `webhooks add` reads them. */
  readonly settings: { readonly allowPrivate: boolean; readonly secretsKey: Buffer | null };
  /** The test event's User-Agent, as serve's deliveries send it. */
  readonly userAgent: string;
}

const ENDPOINT_PATH = pathParameter('endpoint_id', 'The endpoint’s id, we_...', 'we_3kTqv9ZbW2aXcD4e5f6g');

/** What `events` may be: a JSON list of types, or one text (comma-separated, as a form sends it); absent: every type. */
const EVENTS_PARAMETER = {
  description:
    'The event types to send, as a JSON list or (in a form) comma-separated; default every type. Answers show them as a list.',
  anyOf: [
    { type: 'array', items: { type: 'string' }, description: 'Event types, one per item' },
    { type: 'string', description: 'Comma-separated event types' },
  ],
  examples: [['account.updated', 'key.revoked']],
} as const;

/**
 * Before the schema, so a wrong `events` is named as such rather than as "must be a string": a form parameter given twice
 * is a duplicate (forms send a list comma-separated), and a list must hold texts.
 */
function checkEventsShape(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  const events = (request.body as { events?: unknown } | undefined)?.events;
  if (events instanceof RepeatedValues) {
    return done(new HttpError(400, 'duplicate_parameter', "The parameter 'events' was given more than once; in a form, send the types comma-separated.", { field: 'events' }));
  }
  if (events !== undefined && typeof events !== 'string' && !(Array.isArray(events) && events.every((type) => typeof type === 'string'))) {
    return done(new HttpError(400, 'invalid_parameter', "The parameter 'events' must be a list of event types or one comma-separated text.", { field: 'events' }));
  }
  done();
}

const ATTEMPTS_DEFAULT = 50;

function attemptsLimit(raw: string | undefined): number {
  if (raw === undefined) return ATTEMPTS_DEFAULT;
  const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_ATTEMPTS_LISTED)) {
    throw new DomainError('invalid', 'invalid_limit', `limit is a whole number from 1 to ${MAX_ATTEMPTS_LISTED}; got '${raw}'.`, { field: 'limit' });
  }
  return limit;
}

export async function adminWebhookRoutes(app: FastifyInstance, options: WebhookRoutesOptions) {
  const { store, settings, userAgent } = options;

  app.post<{ Body: { url: string; events?: string | string[]; description?: string } }>('/webhooks', {
    ...adminRoute('Webhooks', {
      operationId: 'addWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description:
        'The answer holds the endpoint’s signing secret (whsec_...), this once. The URL must be http(s) and, unless the server runs with ' +
        `WEBHOOK_ALLOW_PRIVATE=1, at a public address. A deployment has at most ${MAX_WEBHOOK_ENDPOINTS} endpoints (409 too_many_webhook_endpoints past it).`,
      body: fieldsOf({
        url: stringParameter(`Where to send the events: an http(s) URL of at most ${MAX_URL_LENGTH} characters`, 'https://hooks.example.com/account-api', {
          maxLength: MAX_URL_LENGTH,
          format: 'uri',
        }),
        events: EVENTS_PARAMETER,
        description: stringParameter(`What the endpoint is for: at most ${MAX_DESCRIPTION_LENGTH} characters, without control characters`, 'billing', {
          maxLength: MAX_DESCRIPTION_LENGTH,
        }),
      }, ['url']),
      answer: [201, 'AdminNewWebhookEndpointEnvelope', 'The endpoint, and its secret shown this once'],
      conflict: true,
    }),
    preValidation: checkEventsShape,
    handler: async (request, reply) => {
      const { endpoint, secret } = await addWebhookEndpoint(store, request.body, settings);
      return reply.code(201).send(success({ ...endpointJson(endpoint), secret }));
    },
  });

  app.get<{ Querystring: { limit?: string; cursor?: string } }>('/webhooks', {
    ...adminRoute('Webhooks', {
      operationId: 'listWebhookEndpoints',
      summary: 'List the webhook endpoints',
      description:
        'The endpoints, oldest first, with their state (and why one is disabled); never a secret. Follow meta.next_cursor (null on the ' +
        'last page) with ?cursor=.',
      querystring: pageQuery('Endpoints', 'dzIwMjYtMTEtMjZUMDY6MDA6MDAuMDAwWnx3ZV8za1RxdjlaYlcyYVhjRDRlNWY2Zw'),
      answer: [200, 'AdminWebhookEndpointPageEnvelope', 'A page of endpoints, oldest first'],
    }),
    handler: async (request) => {
      const limit = pageLimit(request.query.limit);
      // One more than the page tells whether another follows.
      const rows = await store.listWebhookEndpoints(decodeEndpointCursor(request.query.cursor), limit + 1);
      const page = rows.slice(0, limit);
      return success(page.map(endpointJson), { next_cursor: rows.length > limit ? encodeEndpointCursor(page.at(-1)!) : null });
    },
  });

  app.get<{ Params: { endpoint_id: string } }>('/webhooks/:endpoint_id', {
    ...adminRoute('Webhooks', {
      operationId: 'getWebhookEndpoint',
      summary: 'Read one webhook endpoint',
      description: 'Its URL, event types and state (and why it is disabled), as the console’s page shows it; never its secret.',
      params: ENDPOINT_PATH,
      answer: [200, 'AdminWebhookEndpointEnvelope', 'The endpoint'],
    }),
    handler: async (request) => success(endpointJson(await findWebhookEndpoint(store, request.params.endpoint_id))),
  });

  app.delete<{ Params: { endpoint_id: string } }>('/webhooks/:endpoint_id', {
    ...adminRoute('Webhooks', {
      operationId: 'removeWebhookEndpoint',
      summary: 'Remove a webhook endpoint',
      description: 'With its pending deliveries and their history.',
      params: ENDPOINT_PATH,
      answer: [200, 'AdminWebhookEndpointEnvelope', 'The endpoint removed'],
    }),
    handler: async (request) => success(endpointJson(await store.removeWebhookEndpoint(request.params.endpoint_id))),
  });

  for (const action of ['disable', 'enable'] as const) {
    app.post<{ Params: { endpoint_id: string } }>(`/webhooks/:endpoint_id/${action}`, {
      ...adminRoute('Webhooks', {
        operationId: `${action}WebhookEndpoint`,
        summary: action === 'disable' ? 'Stop sending to an endpoint' : 'Send to an endpoint again',
        description:
          action === 'disable'
            ? 'No delivery is queued for it while disabled; pending ones wait.'
            : 'For one disabled by hand or for failing: its pending deliveries resume, and its run of failures starts from zero.',
        params: ENDPOINT_PATH,
        answer: [200, 'AdminWebhookEndpointEnvelope', 'The endpoint'],
      }),
      handler: async (request) => {
        return success(endpointJson(await switchWebhookEndpoint(store, request.params.endpoint_id, action, actorOf(request).actor)));
      },
    });
  }

  app.post<{ Params: { endpoint_id: string } }>('/webhooks/:endpoint_id/test', {
    ...adminRoute('Webhooks', {
      operationId: 'testWebhookEndpoint',
      summary: 'Send a test event (ping) to an endpoint now',
      description:
        'A `ping` event, {id, type: "ping", created_at, data: {endpoint_id}}, signed with the endpoint’s secret as every event is, ' +
        'sent at once (enabled or disabled, whatever types it takes) to the checked address (WEBHOOK_ALLOW_PRIVATE as for deliveries). ' +
        'The answer is 200 with what the receiver did, even when it answered 500 or not at all: delivered is true for a 2xx within 10 s. ' +
        'Not queued, not retried, not listed among the attempts, and never counted toward disabling the endpoint; recorded in the audit ' +
        'trail as webhook_endpoint.tested.',
      params: ENDPOINT_PATH,
      answer: [200, 'AdminWebhookTestEnvelope', 'What the receiver answered'],
    }),
    handler: async (request) => {
      const outcome = await sendWebhookTestEvent(store, request.params.endpoint_id, { ...settings, userAgent }, actorOf(request));
      return success(testEventJson(outcome));
    },
  });

  app.get<{ Params: { endpoint_id: string }; Querystring: { limit?: string } }>('/webhooks/:endpoint_id/deliveries', {
    ...adminRoute('Webhooks', {
      operationId: 'listWebhookDeliveries',
      summary: 'The attempts to an endpoint, newest first',
      description: 'Each attempt: when, the event, the status (null: no answer, see error), the latency and the first bytes of the answer.',
      params: ENDPOINT_PATH,
      querystring: fieldsOf({ limit: limitParameter(`At most this many, 1 to ${MAX_ATTEMPTS_LISTED} (default ${ATTEMPTS_DEFAULT})`, 10, MAX_ATTEMPTS_LISTED, ATTEMPTS_DEFAULT) }),
      answer: [200, 'AdminWebhookAttemptListEnvelope', 'The attempts'],
    }),
    handler: async (request) => success((await listWebhookAttempts(store, request.params.endpoint_id, attemptsLimit(request.query.limit))).map(attemptJson)),
  });

  app.post<{ Params: { event_id: string }; Body: { endpoint_id?: string } | undefined }>('/webhook-events/:event_id/redeliver', {
    ...adminRoute('Webhooks', {
      operationId: 'redeliverWebhookEvent',
      summary: 'Send an event again',
      description: 'With the same id, to the endpoints it went to (or the one named), due now.',
      params: pathParameter('event_id', 'The event’s id, evt_...', 'evt_Vn2y9w0bH6mQ1xG3kL8sZA'),
      body: fieldsOf({ endpoint_id: stringParameter('Only to this endpoint', 'we_3kTqv9ZbW2aXcD4e5f6g') }),
      answer: [200, 'AdminRedeliveryEnvelope', 'The endpoints the event is queued for'],
    }),
    handler: async (request) => {
      const endpoints = await redeliverWebhookEvent(store, request.params.event_id, request.body?.endpoint_id ?? null);
      return success({ event_id: request.params.event_id, endpoints });
    },
  });
}
