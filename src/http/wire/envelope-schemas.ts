// The JSON Schemas of the envelope {status, messages, meta, data}, for both ports' schema files: each names its own schemas
// ($id), codes and descriptions; the envelope's shape is written once, here, as envelope.ts builds it once.

/** An envelope schema: its $id and description, and what each of the four members holds. */
function envelopeSchema<P extends object>(id: string, description: string, properties: P) {
  return { $id: id, description, type: 'object', required: ['status', 'messages', 'meta', 'data'], properties } as const;
}

/** The success envelope around one kind of `data`: status "success", no messages. */
export function successEnvelopeSchema(id: string, description: string, data: object, meta: object) {
  return envelopeSchema(id, description, {
    status: { type: 'string', const: 'success' },
    messages: { type: 'array', maxItems: 0, items: {} },
    meta,
    data,
  } as const);
}

/** The failure envelope for one status, its `code` limited to what that status can carry. */
export function failureEnvelopeSchema(id: string, description: string, status: number, codes: readonly string[], meta: object) {
  return envelopeSchema(id, description, {
    status: { type: 'string', const: status >= 500 ? 'error' : 'fail' },
    messages: {
      type: 'array',
      minItems: 1,
      // One message: map-error.ts gives every failure exactly one.
      maxItems: 1,
      items: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: [...codes], description: 'Stable: switch on it' },
          message: { type: 'string', description: 'A sentence a person can act on; may be reworded, switch on code instead' },
          field: { type: 'string', description: 'The parameter at fault, when there is one' },
        },
      },
    },
    meta,
    data: { type: 'null' },
  } as const);
}

/** The failure envelope of every status of a port's table of codes, each named `${prefix}${status}`. */
export function failureEnvelopeSchemas(
  prefix: string,
  codes: Readonly<Record<number, readonly string[]>>,
  descriptions: Readonly<Record<number, string>>,
  meta: object,
) {
  return Object.keys(codes)
    .map(Number)
    .map((status) => failureEnvelopeSchema(`${prefix}${status}`, descriptions[status]!, status, codes[status]!, meta));
}
