// JSON Schemas shared by the routes: request bodies, the success and failure envelopes; reused for validation, serialisation and OpenAPI.
import { FAILURE_CODES, FAILURE_DESCRIPTIONS, possibleStatuses, type FailureStatus } from '../failures/failure-codes.ts';
import { failureEnvelopeSchemas, successEnvelopeSchema } from './envelope-schemas.ts';
import { recordSchema } from './record-schema.ts';
import { TIMEZONE_COUNT } from '../../domain/timezones.ts';
import { BEFORE_ROUTE, headerSchemas, headersFor, type ResponseHeader } from './response-headers.ts';

export interface BodyField {
  readonly description: string;
  readonly example: string;
  /** Code-point lengths a domain rule checks with its own code: documented only, or a schema failure would answer first. */
  readonly codePoints?: { readonly min: number; readonly max: number };
}

/** The body schema the OpenAPI document shows instead of the validated one (openapi.ts reads it). */
export const DOCUMENTED_BODY = Symbol('the body schema the OpenAPI document shows');

export const DOCUMENTED_ONLY = Symbol('schema parts the OpenAPI document shows, unchecked');

/** For the document only: a Fastify `headers` schema would validate every request for a value that is always a string. */
export function documentedHeaders(descriptions: Readonly<Record<string, string>>) {
  const properties = Object.fromEntries(Object.entries(descriptions).map(([name, description]) => [name, { type: 'string', description }]));
  return { [DOCUMENTED_ONLY]: { headers: { type: 'object', properties } } };
}

export const CONDITIONAL_READ_HEADERS = documentedHeaders({
  'If-None-Match': 'The ETag of the answer the client holds: a bodiless 304 while it is current',
});

export const CONDITIONAL_WRITE_HEADERS = documentedHeaders({
  'If-Match':
    'The ETag of the version the client read (from GET or a previous POST), or *: the write is made only over that version, ' +
    'else 412 precondition_failed and nothing is written. A value that is not * or a list of quoted ETags matches nothing.',
  'Idempotency-Key':
    '1 to 255 printable ASCII characters, unique per intended write (a UUID): the same key with the same request within 24 hours ' +
    'gets the first answer again (Idempotent-Replayed: true) and changes nothing twice; with another request, 422; while the ' +
    'first still runs, 409.',
});

function bodySchema(fields: Readonly<Record<string, BodyField>>, documented: boolean) {
  return {
    type: 'object',
    required: Object.keys(fields),
    additionalProperties: false,
    properties: Object.fromEntries(
      Object.entries(fields).map(([name, field]) => {
        const lengths = documented && field.codePoints !== undefined ? { minLength: field.codePoints.min, maxLength: field.codePoints.max } : {};
        return [name, { type: 'string', description: field.description, ...lengths, examples: [field.example] }];
      }),
    ),
  } as const;
}

/** Named string parameters, all required, nothing else accepted (form or JSON alike). */
export function bodyOf(fields: Readonly<Record<string, BodyField>>) {
  return { ...bodySchema(fields, false), [DOCUMENTED_BODY]: bodySchema(fields, true) };
}

// Shared schemas (added by openapi.ts): serialisers resolve `$ref: 'Name#'`; the document lists each by $id.

const ref = <Id extends string>(id: Id) => ({ $ref: `${id}#` }) as const;

const emptyMeta = {
  $id: 'EmptyMeta',
  description: '`meta` of every answer but the timezone list: always {}',
  type: 'object',
  additionalProperties: false,
  properties: {},
} as const;

const hello = recordSchema('Hello', 'data of GET and POST /hello', { name: { type: 'string', description: 'The display name of the caller, "World", or the name sent, exactly as sent' } });

const user = recordSchema('User', 'data of GET and POST /user: the calling account', {
  user_id: { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Identifier of the account, never reused' },
  username: { type: 'string', description: 'Account name, the same used for authentication' },
  name: { type: 'string', description: 'Display name, changeable with POST /user' },
  timezone: { type: 'string', description: 'Timezone of the account' },
});

const settings = recordSchema('Settings', 'data of GET and POST /settings', { timezone: { type: 'string', description: 'A name from GET /settings/timezones' } });

const timezonesMeta = recordSchema(
  'TimezonesMeta',
  '`meta` of GET /settings/timezones',
  { description: { type: 'string', examples: ['Data is a list of valid timezones.'] } },
  { closed: true },
);

function successEnvelope(id: string, description: string, data: object, meta: object = ref('EmptyMeta')) {
  return successEnvelopeSchema(id, `The success envelope of ${description}: status "success", no messages, the payload in data`, data, meta);
}

export const SHARED_SCHEMAS: readonly { readonly $id: string }[] = [
  emptyMeta,
  hello,
  user,
  settings,
  timezonesMeta,
  successEnvelope('HelloEnvelope', 'GET and POST /hello', ref('Hello')),
  successEnvelope('UserEnvelope', 'GET and POST /user', ref('User')),
  successEnvelope('SettingsEnvelope', 'GET and POST /settings', ref('Settings')),
  successEnvelope(
    'TimezonesEnvelope',
    'GET /settings/timezones',
    { type: 'array', items: { type: 'string' }, maxItems: TIMEZONE_COUNT, description: 'Timezone names' },
    ref('TimezonesMeta'),
  ),
  ...failureEnvelopeSchemas('Failure', FAILURE_CODES, FAILURE_DESCRIPTIONS, ref('EmptyMeta')),
];

type SuccessEnvelopeId = 'HelloEnvelope' | 'UserEnvelope' | 'SettingsEnvelope' | 'TimezonesEnvelope';

/** The public port's answers past authentication also carry API-Key-Expires when the key is about to. */
function headersOf(status: number, extra: readonly ResponseHeader[] = []): readonly ResponseHeader[] {
  return headersFor(status, ['API-Key-Expires'], extra);
}

interface Answer {
  readonly description: string;
  readonly headers: Readonly<Record<string, object>>;
}

function answer(schema: object, description: string, headers: readonly ResponseHeader[]): Answer {
  return { ...schema, description, headers: headerSchemas(headers) };
}

export function successOf(envelope: SuccessEnvelopeId, description: string, headers: readonly ResponseHeader[] = []) {
  return answer(ref(envelope), description, headersOf(200, headers));
}

export function bodilessOf(status: number, description: string, headers: readonly ResponseHeader[] = []) {
  return answer({ type: 'null' }, description, headersOf(status, headers));
}

export interface FailureOptions {
  /** Needs a Premium account: 403 premium_required. */
  readonly premium: boolean;
  /** Takes a body: 413 body_too_large and 415 unsupported_media_type. */
  readonly body: boolean;
  /** Writes to the caller's account, which may be deleted while the request runs: 404 account_not_found. */
  readonly updatesAccount?: boolean;
  /** Takes If-Match and Idempotency-Key: 409 idempotency_key_in_use, 412 precondition_failed, 422 idempotency_key_reused. */
  readonly conditionalWrite?: boolean;
}

export function failuresFor(options: FailureOptions) {
  const { premium, updatesAccount, conditionalWrite, body } = options;
  const written = conditionalWrite;
  const statuses = possibleStatuses<FailureStatus>({ 403: premium, 404: updatesAccount, 409: written, 412: written, 413: body, 415: body, 422: written });
  return Object.fromEntries(
    statuses.map((status) => {
      const description = status === 404 ? 'The account was deleted while this request ran (account_not_found).' : FAILURE_DESCRIPTIONS[status];
      return [status, answer(ref(`Failure${status}`), description, headersOf(status))];
    }),
  );
}

const KEPT_STATUSES: ReadonlySet<string> = new Set(['200', '400', '404', '412']);

export function withReplayedAnswers(responses: Readonly<Record<string, Answer>>): Record<string, Answer> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      KEPT_STATUSES.has(status) ? [status, { ...response, headers: { ...response.headers, ...headerSchemas(['Idempotent-Replayed']) } }] : [status, response],
    ),
  );
}

/** Headers a route's own hooks set (the alias's Deprecation and Link), on each answer that reached the route. */
export function withRouteHeaders(responses: Readonly<Record<string, Answer>>, headers: readonly ResponseHeader[]): Record<string, Answer> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      BEFORE_ROUTE.has(Number(status)) ? [status, response] : [status, { ...response, headers: { ...response.headers, ...headerSchemas(headers) } }],
    ),
  );
}

export const BODY_MEDIA_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

type SecurityRequirement = { readonly [scheme: string]: readonly string[] };
export const PREMIUM_SECURITY: readonly SecurityRequirement[] = [{ basicAuth: [] }];
export const OPTIONAL_SECURITY: readonly SecurityRequirement[] = [{}, { basicAuth: [] }];
