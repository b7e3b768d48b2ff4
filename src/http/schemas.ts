// JSON Schemas shared by the routes: request bodies and the success envelope, reused for validation and serialisation.

export interface BodyField {
  readonly description: string;
}

/** A body of named string parameters, all required, nothing else accepted (form or JSON alike). */
export function bodyOf(fields: Readonly<Record<string, BodyField>>) {
  return {
    type: 'object',
    required: Object.keys(fields),
    additionalProperties: false,
    properties: Object.fromEntries(
      Object.entries(fields).map(([name, field]) => [name, { type: 'string', description: field.description }]),
    ),
  } as const;
}

const emptyMeta = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The success envelope around `data`; `meta` is `{}` unless the endpoint says otherwise. */
export function successOf(data: object, meta: object = emptyMeta) {
  return {
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
