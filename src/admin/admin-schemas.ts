// JSON Schemas of the admin API, reused for validation, serialisation and its OpenAPI document.
import { failureEnvelopeSchemas, successEnvelopeSchema } from '../http/wire/envelope-schemas.ts';
import { possibleStatuses } from '../http/failures/failure-codes.ts';
import { recordSchema } from '../http/wire/record-schema.ts';
import { documentedAs } from '../http/wire/openapi-document.ts';
import { headerSchemas, headersFor } from '../http/wire/response-headers.ts';
import { USERNAME_MAX_LENGTH, USERNAME_PATTERN_SOURCE } from '../domain/names.ts';
import { KEY_USAGE_ADDRESSES, KEY_USAGE_DAYS_SHOWN } from '../domain/key-usage.ts';
import { ADMIN_FAILURE_CODES, ADMIN_FAILURE_DESCRIPTIONS, type AdminFailureStatus } from './admin-failure-codes.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/events.ts';
import { MAX_WEBHOOK_ENDPOINTS } from '../store/webhooks/webhook-store.ts';
import { MAX_ATTEMPTS_LISTED } from '../operations/webhooks.ts';
import { DEFAULT_PAGE_LIMIT, MAX_CURSOR_LENGTH, MAX_PAGE_LIMIT } from '../http/wire/paging.ts';

const ref = (id: string) => ({ $ref: `${id}#` }) as const;
const text = (description: string) => ({ type: 'string', description }) as const;
const nullableText = (description: string) => ({ type: ['string', 'null'], description }) as const;
/** Ids of rows, counts: whole numbers JavaScript holds exactly. */
const wholeNumber = (description: string, minimum: 0 | 1, nullable = false) =>
  ({ type: nullable ? ['integer', 'null'] : 'integer', format: 'int64', minimum, maximum: Number.MAX_SAFE_INTEGER, description }) as const;
const httpStatus = (description: string) => ({ type: ['integer', 'null'], format: 'int32', minimum: 100, maximum: 599, description }) as const;
const milliseconds = (description: string) => ({ type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647, description }) as const;
const list = (items: object, maxItems: number, description?: string) => ({ type: 'array', items, maxItems, ...(description === undefined ? {} : { description }) }) as const;

const account = recordSchema('AdminAccount', 'An account, as the admin API shows it', {
  user_id: wholeNumber('Identifier of the account, never reused', 1),
  username: text('Account name, the user part of HTTP Basic on the public API'),
  name: text('Display name'),
  timezone: text('An IANA timezone name, or UTC'),
  premium: { type: 'boolean', description: 'Whether the account has Premium' },
  created_at: text('When the account was created (ISO 8601)'),
});

const keyProperties = {
  key_id: text('The non-secret id of the key: the 12 characters after its prefix'),
  username: text('The account the key belongs to'),
  label: nullableText('A note to tell keys apart'),
  prefix: text('The key up to its id, to recognise it without its secret'),
  scope: { type: 'string', enum: ['read', 'write'], description: 'read: GET calls only; write: every call' },
  created_at: text('When it was issued (ISO 8601)'),
  expires_at: nullableText('When it stops working (ISO 8601); null: never'),
  last_used_at: nullableText('Its last use, to within KEY_TOUCH_INTERVAL_MS; null: never used'),
  revoked_at: nullableText('When it was revoked; null: not revoked'),
  rolled_into: nullableText('The id of the key it was rolled into, if it was'),
} as const;

const key = recordSchema('AdminKey', 'An API key as listed: never its secret', keyProperties);

const issuedKey = recordSchema('AdminIssuedKey', 'A key just issued: the record, and the key itself, shown this once (only its hash is stored)', {
  ...keyProperties,
  key: text('The whole API key: store it now, it cannot be shown again'),
});

const rolledKey = recordSchema('AdminRolledKey', 'A key rolled: the old one (now expiring when the overlap ends), its successor, and the successor itself, shown once', {
  old: ref('AdminKey'),
  successor: ref('AdminKey'),
  key: text("The successor's whole key, shown this once"),
});

const deletedAccount = recordSchema('AdminDeletedAccount', 'What was deleted: the account and all of its keys (its audit entries stay)', {
  username: text('The account deleted'),
  deleted: { type: 'boolean', const: true },
});

const auditEntry = recordSchema('AdminAuditEntry', 'One change, as the audit trail recorded it in the change’s own transaction', {
  id: wholeNumber('Increases with every entry', 1),
  occurred_at: text('When (ISO 8601)'),
  actor: text('Who: key:<key id>, admin:<admin token id> or cli:<operating-system user>'),
  action: text(
    'What: account.created, account.updated, account.premium_changed, account.deleted, key.created, key.rolled, key.revoked, admin_token.created, ' +
      'admin_token.revoked, webhook_endpoint.tested',
  ),
  user_id: wholeNumber('The account changed; null for admin tokens and webhook endpoints', 1, true),
  username: nullableText('The account changed, as named then; null for admin tokens and webhook endpoints'),
  changes: {
    type: 'object',
    description: 'Each field changed, with its value before and after (null where there was none)',
    additionalProperties: { type: 'object', properties: { old: {}, new: {} } },
  },
  request_id: nullableText('The X-Request-Id of the call that made it; null from the CLI'),
  address: nullableText("The caller's address; null from the CLI"),
});

const count = (description: string) => wholeNumber(description, 0);

const keyUsageDay = recordSchema('AdminKeyUsageDay', "One UTC day of a key's requests, counted by outcome", {
  day: text('The day, YYYY-MM-DD, in UTC'),
  success: count('Answered 2xx or 3xx'),
  client_error: count('Answered 4xx other than 401, 403 and 429: the request was wrong (a 404, a 400, a 412...)'),
  rate_limited: count('Answered 429: over the key’s rate limit'),
  refused: count('Answered 401 or 403: the key was revoked or expired, or may not make this call (not Premium, read-only scope)'),
  server_error: count('Answered 5xx: the service could not answer (its database unreachable, overloaded)'),
});

const keyUsageAddress = recordSchema('AdminKeyUsageAddress', 'An address the key was used from', {
  address: text('The client address, as the server saw it (through TRUST_PROXY when set)'),
  last_seen: text('When it was last seen (ISO 8601), to within KEY_USAGE_FLUSH_MS'),
});

const keyUsage = recordSchema('AdminKeyUsage', "A key's usage: its requests per day over the last 30 days, and the addresses it was last used from", {
  days: list(ref('AdminKeyUsageDay'), KEY_USAGE_DAYS_SHOWN, 'Oldest first; a day without any request is left out'),
  addresses: list(ref('AdminKeyUsageAddress'), KEY_USAGE_ADDRESSES, `The last ${KEY_USAGE_ADDRESSES} distinct addresses, newest first`),
});

const emptyMeta = { $id: 'AdminEmptyMeta', description: '`meta` of every answer but a page: always {}', type: 'object', additionalProperties: false, properties: {} } as const;

const pageMeta = recordSchema(
  'AdminPageMeta',
  '`meta` of a page: the cursor of the next page, null on the last',
  { next_cursor: { type: ['string', 'null'], description: 'Send as ?cursor= for the next page; null: this is the last' } },
  { closed: true },
);

function successEnvelope(id: string, description: string, data: object, meta: object = ref('AdminEmptyMeta')) {
  return successEnvelopeSchema(id, `The success envelope of ${description}`, data, meta);
}

const webhookEndpointProperties = {
  endpoint_id: text('The endpoint’s id, we_...'),
  url: text('Where its events are sent'),
  description: nullableText('What it is for'),
  events: { type: ['array', 'null'], items: { type: 'string', enum: WEBHOOK_EVENT_TYPES }, maxItems: WEBHOOK_EVENT_TYPES.length, description: 'The event types sent to it; null: every type' },
  created_at: text('When it was registered (ISO 8601)'),
  enabled: { type: 'boolean', description: 'Whether events are sent to it' },
  disabled_at: nullableText('When it was disabled; null: enabled'),
  disabled_reason: nullableText('Why: by whom, or the failures that disabled it'),
  failing_since: nullableText('The first failure of its current run of failures; null after a success'),
} as const;

const webhookEndpoint = recordSchema('AdminWebhookEndpoint', 'A webhook endpoint, never its secret', webhookEndpointProperties);

const newWebhookEndpoint = recordSchema('AdminNewWebhookEndpoint', 'An endpoint just registered, and its signing secret, shown this once', {
  ...webhookEndpointProperties,
  secret: text('whsec_...: verify deliveries with it; it cannot be shown again'),
});

const webhookAttempt = recordSchema('AdminWebhookAttempt', 'One delivery attempt', {
  attempted_at: text('When it was made (ISO 8601)'),
  event_id: text('The event sent'),
  status: httpStatus('The answer’s status; null: none came'),
  latency_ms: milliseconds('How long it took'),
  response: nullableText('The first bytes of the answer'),
  error: nullableText('Why no answer counted: a network error, a timeout, a refused address'),
});

const webhookTest = recordSchema('AdminWebhookTest', 'A test event (ping) sent to one endpoint, and what its receiver answered', {
  endpoint_id: text('The endpoint’s id, we_...'),
  url: text('Where the ping was sent'),
  event_id: text('The ping’s id, evt_... (its webhook-id header): not stored, so it cannot be redelivered'),
  sent_at: text('When it was signed and sent (ISO 8601): its created_at'),
  delivered: { type: 'boolean', description: 'Whether the receiver answered 2xx within 10 s, as a delivery must' },
  status: httpStatus('The receiver’s status; null: no answer came (see error)'),
  latency_ms: milliseconds('How long the receiver took, in milliseconds'),
  response: nullableText('The first 256 bytes of the answer'),
  error: nullableText('Why no answer counted: a refused connection, no answer within 10 s, an address that is not public'),
});

const redelivery = recordSchema('AdminRedelivery', 'An event queued again', {
  event_id: text('The event'),
  endpoints: list({ type: 'string' }, MAX_WEBHOOK_ENDPOINTS, 'The endpoints it is queued for'),
});

export const ADMIN_SCHEMAS: readonly { readonly $id: string }[] = [
  emptyMeta,
  pageMeta,
  account,
  key,
  issuedKey,
  rolledKey,
  deletedAccount,
  auditEntry,
  webhookEndpoint,
  newWebhookEndpoint,
  webhookAttempt,
  webhookTest,
  redelivery,
  keyUsageDay,
  keyUsageAddress,
  keyUsage,
  successEnvelope('AdminWebhookEndpointEnvelope', 'a webhook endpoint', ref('AdminWebhookEndpoint')),
  successEnvelope('AdminWebhookEndpointPageEnvelope', 'a page of webhook endpoints', list(ref('AdminWebhookEndpoint'), MAX_PAGE_LIMIT), ref('AdminPageMeta')),
  successEnvelope('AdminNewWebhookEndpointEnvelope', 'a webhook endpoint just registered', ref('AdminNewWebhookEndpoint')),
  successEnvelope('AdminWebhookAttemptListEnvelope', 'delivery attempts, newest first', list(ref('AdminWebhookAttempt'), MAX_ATTEMPTS_LISTED)),
  successEnvelope('AdminWebhookTestEnvelope', 'a test event sent', ref('AdminWebhookTest')),
  successEnvelope('AdminRedeliveryEnvelope', 'an event queued again', ref('AdminRedelivery')),
  successEnvelope('AdminAccountEnvelope', 'an account', ref('AdminAccount')),
  successEnvelope('AdminAccountPageEnvelope', 'a page of accounts', list(ref('AdminAccount'), MAX_PAGE_LIMIT), ref('AdminPageMeta')),
  successEnvelope('AdminDeletedAccountEnvelope', 'a deletion', ref('AdminDeletedAccount')),
  successEnvelope('AdminKeyEnvelope', 'a key', ref('AdminKey')),
  successEnvelope('AdminKeyListEnvelope', "an account's keys", { type: 'array', items: ref('AdminKey') }),
  successEnvelope('AdminIssuedKeyEnvelope', 'a key just issued', ref('AdminIssuedKey')),
  successEnvelope('AdminRolledKeyEnvelope', 'a roll', ref('AdminRolledKey')),
  successEnvelope('AdminKeyUsageEnvelope', "a key's usage", ref('AdminKeyUsage')),
  successEnvelope('AdminAuditPageEnvelope', 'a page of the audit trail, newest first', list(ref('AdminAuditEntry'), MAX_PAGE_LIMIT), ref('AdminPageMeta')),
  ...failureEnvelopeSchemas('AdminFailure', ADMIN_FAILURE_CODES, ADMIN_FAILURE_DESCRIPTIONS, ref('AdminEmptyMeta')),
];

/** An answer of `status`, with the headers it carries (response-headers.ts). */
export function answerOf(status: number, envelope: string, description: string) {
  return { ...ref(envelope), description, headers: headerSchemas(headersFor(status)) };
}

export interface AdminFailureOptions {
  readonly body: boolean;
  readonly notFound: boolean;
  readonly conflict?: boolean;
}

export function adminFailures(options: AdminFailureOptions) {
  const statuses = possibleStatuses<AdminFailureStatus>({ 404: options.notFound, 409: options.conflict, 413: options.body, 415: options.body });
  return Object.fromEntries(statuses.map((status) => [status, answerOf(status, `AdminFailure${status}`, ADMIN_FAILURE_DESCRIPTIONS[status])]));
}

export const BODY_MEDIA_TYPES = ['application/x-www-form-urlencoded', 'application/json'];
export const ADMIN_SECURITY = [{ adminToken: [] }];

/** adminRoute adds what they all share. */
export interface AdminRouteSchema {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly params?: object;
  readonly querystring?: object;
  readonly body?: object;
  readonly answer: readonly [status: 200 | 201, envelope: string, description: string];
  readonly conflict?: boolean;
}

/** Every admin route takes a token; its schema carries its tag, the admin security, and its failures (404 for a path name, 413/415 for a body). */
export function adminRoute(tag: string, route: AdminRouteSchema) {
  const { answer, conflict, ...schema } = route;
  const [status, envelope, description] = answer;
  const body = schema.body !== undefined;
  return {
    config: { adminAccess: 'token' as const },
    schema: {
      ...schema,
      tags: [tag],
      security: ADMIN_SECURITY,
      ...(body ? { consumes: BODY_MEDIA_TYPES } : {}),
      response: { [status]: answerOf(status, envelope, description), ...adminFailures({ body, notFound: schema.params !== undefined, conflict }) },
    },
  };
}

/** What the document states of a parameter that the handler or a domain rule checks with its own code (documentedAs). */
export interface StatedShape {
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly enum?: readonly string[];
}

export function stringParameter(description: string, example: string, stated: StatedShape = {}) {
  const checked = { type: 'string', description, examples: [example] } as const;
  return Object.keys(stated).length === 0 ? checked : documentedAs(checked, { ...checked, ...stated });
}

export function pathParameter(name: string, description: string, example: string, stated: StatedShape = {}) {
  return { type: 'object', required: [name], properties: { [name]: stringParameter(description, example, stated) } } as const;
}

/** A username as domain/names.ts checks it (400 invalid_username past it). */
export const USERNAME_SHAPE: StatedShape = { maxLength: USERNAME_MAX_LENGTH, pattern: USERNAME_PATTERN_SOURCE };

export const USERNAME_PATH = pathParameter('username', 'The account’s username (case-insensitive)', 'alice', USERNAME_SHAPE);

/** ?limit=: sent as text and checked by the handler (400 invalid_limit, as for any text that is not such a number), documented as the number it is. */
export function limitParameter(description: string, example: number, max: number, byDefault: number) {
  return documentedAs(
    { type: 'string', description, examples: [String(example)] } as const,
    { type: 'integer', format: 'int32', minimum: 1, maximum: max, default: byDefault, description, examples: [example] },
  );
}

export function fieldsOf<P extends object>(properties: P, required: readonly string[] = []) {
  return { type: 'object', ...(required.length > 0 ? { required } : {}), additionalProperties: false, properties } as const;
}

/** Filters, then ?limit= and ?cursor= (meta.next_cursor). */
export function pageQuery(items: string, cursorExample: string, filters: object = {}) {
  return fieldsOf({
    ...filters,
    limit: limitParameter(`${items} per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, DEFAULT_PAGE_LIMIT),
    cursor: stringParameter('meta.next_cursor of the previous page', cursorExample, { maxLength: MAX_CURSOR_LENGTH, pattern: '^[A-Za-z0-9_-]+$' }),
  });
}

/** As JSON sends it (true, false) or a form does ("true", "false"). */
export const PREMIUM_PARAMETER = {
  type: ['boolean', 'string'],
  description: 'true or false (in a form: the text true or false)',
  examples: [true],
} as const;
