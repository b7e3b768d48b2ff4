// The events as OpenAPI 3.1 `webhooks`: one POST per event type, its body's schema and the Standard Webhooks headers.
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhooks/events.ts';

const TIME = { type: 'string', format: 'date-time' } as const;
const NULLABLE_TIME = { type: ['string', 'null'], format: 'date-time' } as const;
const VALUE = { type: ['string', 'number', 'boolean', 'null'] } as const;

const ACCOUNT = {
  type: 'object',
  description: 'The account as the change left it (account.deleted: as it was, created_at null)',
  required: ['user_id', 'username', 'name', 'timezone', 'premium', 'created_at'],
  additionalProperties: false,
  properties: {
    user_id: { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    username: { type: 'string' },
    name: { type: 'string' },
    timezone: { type: 'string' },
    premium: { type: 'boolean' },
    created_at: NULLABLE_TIME,
  },
} as const;

const KEY = {
  type: 'object',
  description: 'The key as the change left it: its id, never the key nor its hash',
  required: ['key_id', 'username', 'label', 'prefix', 'scope', 'created_at', 'expires_at', 'revoked_at', 'rolled_into'],
  additionalProperties: false,
  properties: {
    key_id: { type: 'string' },
    username: { type: 'string' },
    label: { type: ['string', 'null'] },
    prefix: { type: 'string' },
    scope: { type: 'string', enum: ['read', 'write'] },
    created_at: TIME,
    expires_at: NULLABLE_TIME,
    revoked_at: NULLABLE_TIME,
    rolled_into: { type: ['string', 'null'] },
  },
} as const;

const SUMMARIES: Record<WebhookEventType, string> = {
  'account.created': 'An account was created',
  'account.updated': "An account's name or timezone changed",
  'account.premium_changed': 'Premium was switched on or off',
  'account.deleted': 'An account was deleted',
  'key.created': 'An API key was issued',
  'key.rolled': 'An API key was rolled into a successor',
  'key.revoked': 'An API key was revoked',
};

const HEADERS = [
  ['webhook-id', 'The event id: the same on every attempt; deduplicate by it'],
  ['webhook-timestamp', 'When this attempt was signed, in seconds since the epoch'],
  ['webhook-signature', 'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under the endpoint secret>'],
] as const;

function operation(type: WebhookEventType) {
  return {
    post: {
      operationId: `webhook_${type.replace('.', '_')}`,
      summary: SUMMARIES[type],
      description: `Sent to each endpoint subscribed to ${type}, signed as Standard Webhooks; a 2xx within 10 s is success, anything else is retried (docs/api.md, "Webhooks").`,
      // No tag: a 'Webhooks' tag made /docs list these twice, under the tag and in the document's own Webhooks section.
      // Nothing OpenAPI can declare: the receiver checks webhook-signature with the endpoint's secret.
      security: [],
      parameters: HEADERS.map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['id', 'type', 'created_at', 'data'],
              additionalProperties: false,
              properties: {
                id: { type: 'string', pattern: '^evt_' },
                type: { type: 'string', const: type },
                created_at: TIME,
                data: {
                  type: 'object',
                  required: ['object', 'changes'],
                  additionalProperties: false,
                  properties: {
                    object: { oneOf: [type.startsWith('key.') ? KEY : ACCOUNT, { type: 'null' }] },
                    changes: {
                      type: 'object',
                      description: 'Each field changed, as the audit trail records it',
                      additionalProperties: { type: 'object', required: ['old', 'new'], additionalProperties: false, properties: { old: VALUE, new: VALUE } },
                    },
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        '2XX': { description: 'Received: not sent again (unless redelivered by an operator)' },
        default: { description: 'Anything else, or no answer within 10 s: sent again later' },
      },
    },
  };
}

export function webhookOperations() {
  return Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, operation(type)]));
}
