// JSON Schemas shared by the routes: request bodies, the success and failure envelopes; reused for validation, serialisation and OpenAPI.
import { FAILURE_CODES, FAILURE_DESCRIPTIONS, type FailureStatus } from './failure-codes.ts';

export interface BodyField {
  readonly description: string;
  /** A value the OpenAPI document shows, and a test sends, as an example. */
  readonly example: string;
}

/** A body of named string parameters, all required, nothing else accepted (form or JSON alike). */
export function bodyOf(fields: Readonly<Record<string, BodyField>>) {
  return {
    type: 'object',
    required: Object.keys(fields),
    additionalProperties: false,
    properties: Object.fromEntries(
      Object.entries(fields).map(([name, field]) => [name, { type: 'string', description: field.description, examples: [field.example] }]),
    ),
  } as const;
}

const emptyMeta = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The success envelope around `data`; `meta` is `{}` unless the endpoint says otherwise. */
export function successOf(data: object, meta: object = emptyMeta) {
  return {
    description: 'Success: status "success", no messages, the payload in data',
    type: 'object',
    required: ['status', 'messages', 'meta', 'data'],
    properties: {
      status: { type: 'string', const: 'success' },
      messages: { type: 'array', maxItems: 0, items: {} },
      meta,
      data,
    },
  } as const;
}

export const userSchema = {
  type: 'object',
  required: ['user_id', 'username', 'name', 'timezone'],
  properties: {
    user_id: { type: 'integer', description: 'Identifier of the account' },
    username: { type: 'string', description: 'Account name, the same used for authentication' },
    name: { type: 'string', description: 'Display name, changeable with POST /user' },
    timezone: { type: 'string', description: 'Timezone of the account' },
  },
} as const;

export const settingsSchema = {
  type: 'object',
  required: ['timezone'],
  properties: { timezone: { type: 'string', description: 'A name from GET /settings/timezones' } },
} as const;

export const helloSchema = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

/** The failure envelope for one status, its `code` limited to what that status can carry. */
export function failureOf(status: FailureStatus) {
  return {
    description: FAILURE_DESCRIPTIONS[status],
    type: 'object',
    required: ['status', 'messages', 'meta', 'data'],
    properties: {
      status: { type: 'string', const: status >= 500 ? 'error' : 'fail' },
      messages: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', enum: [...FAILURE_CODES[status]] },
            message: { type: 'string', description: 'A sentence a person can act on; may be reworded, switch on code instead' },
            field: { type: 'string', description: 'The parameter at fault, when there is one' },
          },
        },
      },
      meta: { type: 'object', additionalProperties: false, properties: {} },
      data: { type: 'null' },
    },
  } as const;
}

/** Failures every API route can answer; `premium` routes add 403, routes with a body add 413 and 415. */
export function failuresFor(options: { premium: boolean; body: boolean }) {
  const statuses: FailureStatus[] = [400, 401, ...(options.premium ? [403 as const] : []), ...(options.body ? [413 as const, 415 as const] : []), 429, 500, 503];
  return Object.fromEntries(statuses.map((status) => [status, failureOf(status)]));
}

/** Both media types a body may come in; the OpenAPI document lists each. */
export const BODY_MEDIA_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

type SecurityRequirement = { readonly [scheme: string]: readonly string[] };
export const PREMIUM_SECURITY: readonly SecurityRequirement[] = [{ basicAuth: [] }];
/** Public routes take no credentials, or Basic credentials that are then checked. */
export const OPTIONAL_SECURITY: readonly SecurityRequirement[] = [{}, { basicAuth: [] }];
