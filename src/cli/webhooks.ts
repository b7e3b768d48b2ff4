// `account-api webhooks ...`: endpoints that receive an event for every change to an account or a key (src/operations/webhooks.ts).
import { printJson, printLine, printList, printNote, UsageError } from './cli-context.ts';
import { databaseGroup, type DatabaseCommand } from './command-spec.ts';
import type { Store } from '../store/store.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/events.ts';
import {
  addWebhookEndpoint,
  listWebhookAttempts,
  MAX_ATTEMPTS_LISTED,
  redeliverWebhookEvent,
  sendWebhookTestEvent,
  switchWebhookEndpoint,
  type TestEventOutcome,
} from '../operations/webhooks.ts';
import { attemptJson, endpointJson, testEventJson } from '../operations/webhooks/representations.ts';
import { webhookUserAgent } from '../operations/webhooks/send-delivery.ts';
import { MAX_WEBHOOK_ENDPOINTS, type WebhookEndpoint } from '../store/webhooks/webhook-store.ts';

export const WEBHOOKS = databaseGroup({
  name: 'webhooks',
  summary:
    'Webhook endpoints: every change the audit trail records is sent to each endpoint subscribed to its type, signed as Standard ' +
    'Webhooks, by serve in the background (docs/api.md, "Webhooks").',
  commands: [
    {
      words: ['webhooks', 'add'],
      args: ['url'],
      summary:
        'Adds an endpoint and prints its signing secret (whsec_...) alone on stdout, this once. The URL must be http(s) and, unless ' +
        `WEBHOOK_ALLOW_PRIVATE=1, at a public address. Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      flags: {
        events: { type: 'string', value: 'TYPES', help: 'comma-separated event types to send (default: every type)' },
        description: { type: 'string', value: 'TEXT', help: 'what the endpoint is for (at most 200 characters, no control characters)' },
      },
      examples: ['WEBHOOK_SECRET=$(npx account-api webhooks add https://hooks.example.com/account-api --events account.updated,key.revoked)'],
      run: async (context, { store, config }, [id]) => {
        const { endpoint, secret } = await addWebhookEndpoint(
          store,
          { url: id, events: context.flags.events, description: context.flags.description },
          config.webhooks,
        );
        if (context.flags.json) return printJson(context, { ...endpointJson(endpoint), secret });
        // The secret alone on stdout, so `WEBHOOK_SECRET=$(account-api webhooks add URL)` works.
        printLine(context, secret);
        printNote(context, `Webhook endpoint ${endpoint.endpointId} (${endpoint.url}): store its secret now, it cannot be shown again.`);
      },
    },
    {
      words: ['webhooks', 'list'],
      summary: 'Lists the endpoints: id, URL, event types, state (and why one is disabled), failing since; never a secret.',
      examples: ['npx account-api webhooks list'],
      run: async (context, { store }) => {
        const endpoints = await everyEndpoint(store);
        printList(context, endpoints, {
          json: endpointJson,
          empty: 'There are no webhook endpoints.',
          columns: ['ENDPOINT_ID', 'URL', 'EVENTS', 'STATE', 'FAILING_SINCE', 'DESCRIPTION'],
          row: (e) => [
            e.endpointId,
            e.url,
            e.eventTypes?.join(',') ?? 'all',
            e.disabledAt === null ? 'enabled' : `disabled at ${e.disabledAt}: ${e.disabledReason ?? ''}`,
            e.failingSince ?? '-',
            e.description ?? '-',
          ],
        });
      },
    },
    {
      words: ['webhooks', 'remove'],
      args: ['endpoint-id'],
      summary: 'Removes an endpoint with its pending deliveries and their history.',
      examples: ['npx account-api webhooks remove we_3kTqv9ZbW2aXcD4e5f6g'],
      run: async (context, { store }, [id]) => {
        const endpoint = await store.removeWebhookEndpoint(id);
        if (context.flags.json) return printJson(context, endpointJson(endpoint));
        return printLine(context, `Removed webhook endpoint ${endpoint.endpointId} (${endpoint.url}).`);
      },
    },
    {
      words: ['webhooks', 'disable'],
      args: ['endpoint-id'],
      summary: 'Stops sending to an endpoint; no delivery is queued for it while disabled, and pending ones wait.',
      examples: ['npx account-api webhooks disable we_3kTqv9ZbW2aXcD4e5f6g'],
      run: switching('disable'),
    },
    {
      words: ['webhooks', 'enable'],
      args: ['endpoint-id'],
      summary: 'Sends to an endpoint again (one disabled by hand, or for failing): its pending deliveries resume.',
      examples: ['npx account-api webhooks enable we_3kTqv9ZbW2aXcD4e5f6g'],
      run: switching('enable'),
    },
    {
      words: ['webhooks', 'deliveries'],
      args: ['endpoint-id'],
      summary: 'The newest attempts to an endpoint, newest first: when, the event, the status (or the error), the latency, the first bytes of the answer.',
      flags: { limit: { type: 'string', value: 'N', help: `at most N attempts, 1 to ${MAX_ATTEMPTS_LISTED} (default 50)` } },
      examples: ['npx account-api webhooks deliveries we_3kTqv9ZbW2aXcD4e5f6g --limit 10'],
      run: async (context, { store }, [id]) => {
        const attempts = await listWebhookAttempts(store, id, parseLimit(context.flags.limit));
        printList(context, attempts, {
          json: attemptJson,
          empty: 'No delivery has been attempted to this endpoint yet.',
          columns: ['WHEN', 'EVENT_ID', 'STATUS', 'LATENCY_MS', 'ANSWER'],
          row: (a) => [a.attemptedAt, a.eventId, a.status === null ? `- (${a.error ?? 'no answer'})` : String(a.status), String(a.latencyMs), JSON.stringify(a.response?.slice(0, 60) ?? '')],
        });
      },
    },
    {
      words: ['webhooks', 'test'],
      args: ['endpoint-id'],
      summary:
        'Sends a signed ping event to an endpoint now, enabled or not, and prints what its receiver answered: the status, the latency ' +
        'and the first bytes of the answer, or why none came. Exit status 1 when the receiver did not answer 2xx within 10 s (what it ' +
        'did is printed all the same, on stdout, --json too). ' +
        'Not queued, not retried, not among its deliveries; recorded in the audit trail as webhook_endpoint.tested.',
      examples: ['npx account-api webhooks test we_3kTqv9ZbW2aXcD4e5f6g'],
      run: async (context, { store, config, actor }, [id]) => {
        const outcome = await sendWebhookTestEvent(store, id, { ...config.webhooks, userAgent: webhookUserAgent(config.version) }, actor);
        if (context.flags.json) printJson(context, testEventJson(outcome));
        else printLine(context, describeTest(outcome));
        // A script checking a receiver (`account-api webhooks test ID && enable`) reads the outcome from the status alone.
        return outcome.result.succeeded ? 0 : 1;
      },
    },
    {
      words: ['webhooks', 'redeliver'],
      args: ['event-id'],
      summary:
        'Sends an event again, with the same id, to the endpoints it went to (or the one named): queued now, sent by serve within a second.',
      flags: { endpoint: { type: 'string', value: 'ENDPOINT_ID', help: 'only to this endpoint' } },
      examples: ['npx account-api webhooks redeliver evt_Vn2y9w0bH6mQ1xG3kL8sZA'],
      run: async (context, { store }, [id]) => {
        const endpoints = await redeliverWebhookEvent(store, id, context.flags.endpoint ?? null);
        if (context.flags.json) return printJson(context, { event_id: id, endpoints });
        if (endpoints.length === 0) return printLine(context, `No endpoint takes event ${id}: nothing was queued.`);
        return printLine(context, `Event ${id} queued again for ${endpoints.join(', ')}.`);
      },
    },
  ],
});

/** One line: who answered what, how fast, and the start of its answer; or why no answer came. */
function describeTest({ endpoint, eventId, result }: TestEventOutcome): string {
  const to = `Webhook endpoint ${endpoint.endpointId} (${endpoint.url})`;
  const took = `${Math.round(result.latencyMs)} ms`;
  if (result.status === null) return `${to} did not answer the ping ${eventId}: ${result.error ?? 'no answer'} (after ${took}).`;
  const excerpt = result.response ? `: ${JSON.stringify(result.response.slice(0, 60))}` : '';
  const verdict = result.succeeded ? 'answered' : 'refused';
  return `${to} ${verdict} the ping ${eventId} with ${result.status} in ${took}${excerpt}${result.error === null ? '' : ` (${result.error})`}.`;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return 50;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > MAX_ATTEMPTS_LISTED) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_ATTEMPTS_LISTED}; got '${text}'`);
  return limit;
}

/** Every endpoint, oldest first, following the pages the admin API reads (one page: there are at most MAX_WEBHOOK_ENDPOINTS). */
async function everyEndpoint(store: Store): Promise<WebhookEndpoint[]> {
  const endpoints: WebhookEndpoint[] = [];
  for (;;) {
    const page = await store.listWebhookEndpoints(endpoints.at(-1) ?? null, MAX_WEBHOOK_ENDPOINTS);
    endpoints.push(...page);
    if (page.length < MAX_WEBHOOK_ENDPOINTS) return endpoints;
  }
}

/** `webhooks disable` and `webhooks enable`; a disabled endpoint's reason names the CLI's `cli:<os user>`. */
function switching(to: 'disable' | 'enable'): DatabaseCommand['run'] {
  return async (context, { store, actor }, [id]) => {
    const endpoint = await switchWebhookEndpoint(store, id, to, actor.actor);
    if (context.flags.json) return printJson(context, endpointJson(endpoint));
    return printLine(context, `Webhook endpoint ${endpoint.endpointId} is ${endpoint.disabledAt === null ? 'enabled' : 'disabled'}.`);
  };
}
