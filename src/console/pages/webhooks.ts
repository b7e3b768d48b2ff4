// /console/webhooks: the endpoints (add one, its secret shown once; enable, disable, remove after a confirmation), an
// endpoint's deliveries with the receiver's answers, redelivery, and a test event. Through the admin API's operations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  addWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookAttempts,
  redeliverWebhookEvent,
  sendWebhookTestEvent,
  switchWebhookEndpoint,
  type TestEventOutcome,
} from '../../operations/webhooks.ts';
import { decodeEndpointCursor, encodeEndpointCursor } from '../../http/wire/paging.ts';
import { attemptJson, endpointJson, testEventJson } from '../../operations/webhooks/representations.ts';
import { consoleActor, type ConsolePageDependencies } from '../page-dependencies.ts';
import { field, optionalField, segment } from '../forms.ts';

const PAGE_SIZE = 25;
const ATTEMPTS_SHOWN = 50;

type EndpointParams = { endpoint_id: string };

export async function webhookPages(app: FastifyInstance, options: ConsolePageDependencies): Promise<void> {
  const { store, views, webhooks: settings, userAgent } = options;

  async function endpointPage(request: FastifyRequest, reply: FastifyReply, endpointId: string, test: TestEventOutcome | null) {
    const endpoint = await findWebhookEndpoint(store, endpointId);
    const attempts = await listWebhookAttempts(store, endpoint.endpointId, ATTEMPTS_SHOWN);
    return views.send(request, reply, 'webhook', {
      title: `Endpoint ${endpoint.endpointId}`,
      section: 'webhooks',
      endpoint: endpointJson(endpoint),
      attempts: attempts.map(attemptJson),
      test: test === null ? null : testEventJson(test),
    });
  }

  app.get<{ Querystring: { cursor?: string } }>('/webhooks', async (request, reply) => {
    const cursor = field(request.query, 'cursor');
    const rows = await store.listWebhookEndpoints(decodeEndpointCursor(cursor), PAGE_SIZE + 1);
    const page = rows.slice(0, PAGE_SIZE);
    return views.send(request, reply, 'webhooks', {
      title: 'Webhooks',
      section: 'webhooks',
      endpoints: page.map(endpointJson),
      next: rows.length > PAGE_SIZE ? encodeEndpointCursor(page.at(-1)!) : null,
      first: cursor !== undefined,
    });
  });

  app.post('/webhooks', async (request, reply) => {
    const body = request.body;
    const { endpoint, secret } = await addWebhookEndpoint(
      store,
      { url: field(body, 'url') ?? '', events: optionalField(body, 'events'), description: optionalField(body, 'description') },
      settings,
    );
    // Answered here, never redirected to: the secret is in this answer alone.
    return views.send(request, reply, 'webhook-added', { title: 'Endpoint added', section: 'webhooks', endpoint: endpointJson(endpoint), secret }, 201);
  });

  app.get<{ Params: EndpointParams }>('/webhooks/:endpoint_id', (request, reply) => endpointPage(request, reply, request.params.endpoint_id, null));

  for (const action of ['enable', 'disable'] as const) {
    app.post<{ Params: EndpointParams }>(`/webhooks/:endpoint_id/${action}`, async (request, reply) => {
      const endpoint = await switchWebhookEndpoint(store, request.params.endpoint_id, action, consoleActor(request).actor);
      return reply.redirect(`/console/webhooks/${segment(endpoint.endpointId)}?notice=${action}d`, 303);
    });
  }

  app.post<{ Params: EndpointParams }>('/webhooks/:endpoint_id/test', async (request, reply) => {
    const outcome = await sendWebhookTestEvent(store, request.params.endpoint_id, { ...settings, userAgent }, consoleActor(request));
    return endpointPage(request, reply, outcome.endpoint.endpointId, outcome);
  });

  app.post<{ Params: EndpointParams }>('/webhooks/:endpoint_id/redeliver', async (request, reply) => {
    const endpointId = request.params.endpoint_id;
    await redeliverWebhookEvent(store, field(request.body, 'event_id') ?? '', endpointId);
    return reply.redirect(`/console/webhooks/${segment(endpointId)}?notice=redelivered`, 303);
  });

  app.get<{ Params: EndpointParams }>('/webhooks/:endpoint_id/remove', async (request, reply) => {
    const endpoint = await findWebhookEndpoint(store, request.params.endpoint_id);
    const back = `/console/webhooks/${segment(endpoint.endpointId)}`;
    return views.send(request, reply, 'confirm', {
      title: `Remove endpoint ${endpoint.endpointId}?`,
      section: 'webhooks',
      consequence: `Nothing more is sent to ${endpoint.url}; its pending deliveries and their history are deleted.`,
      action: `${back}/remove`,
      confirm: 'Remove the endpoint',
      danger: true,
      cancel: back,
      fields: [],
    });
  });

  app.post<{ Params: EndpointParams }>('/webhooks/:endpoint_id/remove', async (request, reply) => {
    await store.removeWebhookEndpoint(request.params.endpoint_id);
    return reply.redirect('/console/webhooks?notice=removed', 303);
  });
}
