// The schema of a record both ports' schema files declare alike: an object with an $id, every property required.

/** `closed` refuses properties not listed (additionalProperties: false), as a `meta` does. */
export function recordSchema<P extends object>(id: string, description: string, properties: P, options: { readonly closed?: boolean } = {}) {
  const closed = options.closed === true ? { additionalProperties: false } : {};
  return { $id: id, description, type: 'object', required: Object.keys(properties), ...closed, properties } as const;
}
