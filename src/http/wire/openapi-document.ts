// What both ports' OpenAPI documents add to what @fastify/swagger builds: schema parts shown but not checked by Fastify, the
// length every input has from the server's own caps, response headers as components, and a body required only when it must be.
import type { Config } from '../../config.ts';
import { headerObject, isResponseHeader, type ResponseHeader } from './response-headers.ts';

/**
 * On a schema node: what the document shows in its place. For limits a domain rule or the handler checks with its own code
 * (invalid_username, invalid_limit): in the validated schema they would answer first, with Fastify's generic failure.
 */
export const DOCUMENTED_AS = Symbol('the schema the OpenAPI document shows in place of this one');

export function documentedAs<T extends object>(checked: T, documented: object): T {
  return { ...checked, [DOCUMENTED_AS]: documented };
}

/** A route's schema with every DOCUMENTED_AS node replaced by what it documents (for the swagger `transform`). */
export function shownSchema<T>(node: T): T {
  if (Array.isArray(node)) return node.map(shownSchema) as T;
  if (typeof node !== 'object' || node === null) return node;
  const documented = (node as { [DOCUMENTED_AS]?: object })[DOCUMENTED_AS];
  if (documented !== undefined) return shownSchema(documented) as T;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, shownSchema(value)])) as T;
}

/** The caps every request meets before any route (src/http/wire/parameter-limits.ts, MAX_HEADER_BYTES). */
export interface InputCaps {
  /** MAX_PARAMETER_LENGTH: code points of each body value. */
  readonly maxParameterLength: number;
  /** MAX_PARAMETERS: values in a body, a list's items counted one by one. */
  readonly maxParameters: number;
  /** MAX_HEADER_BYTES: the request line and headers together, so also any one query, path or header parameter. */
  readonly maxHeaderBytes: number;
}

export function inputCapsOf(config: Pick<Config, 'parameters' | 'connections'>): InputCaps {
  return { ...config.parameters, maxHeaderBytes: config.connections.maxHeaderBytes };
}

type Schema = { type?: unknown; maxLength?: number; maxItems?: number; enum?: unknown; const?: unknown; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; required?: string[] };
type Parameter = { in: string; schema?: Schema };
type MediaType = { schema?: Schema };
type ResponseObject = { headers?: Record<string, unknown> };
type OperationObject = { parameters?: Parameter[]; requestBody?: { required?: boolean; content: Record<string, MediaType> }; responses: Record<string, ResponseObject> };
export type OpenApiDocument = { paths: Record<string, Record<string, OperationObject>>; components: Record<string, unknown> };

const hasType = (schema: Schema, type: string) => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

/** Strings without a smaller stated limit get `maxLength`, lists `maxItems`, all the way down. */
function capInput(schema: Schema | undefined, maxLength: number, maxItems: number): void {
  if (schema === undefined) return;
  if (hasType(schema, 'string') && schema.enum === undefined && schema.const === undefined) schema.maxLength = Math.min(schema.maxLength ?? maxLength, maxLength);
  if (hasType(schema, 'array')) schema.maxItems = Math.min(schema.maxItems ?? maxItems, maxItems);
  for (const child of [...Object.values(schema.properties ?? {}), schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) capInput(child, maxLength, maxItems);
}

/** Inline response headers become components/headers $refs, with every answer's own (`everyAnswer`); only those used listed. */
function referenceHeaders(document: OpenApiDocument, everyAnswer: readonly ResponseHeader[]): OpenApiDocument {
  const used = new Set<ResponseHeader>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const names = [...Object.keys(response.headers ?? {}), ...everyAnswer];
        response.headers = Object.fromEntries(
          names.map((name) => {
            if (!isResponseHeader(name)) throw new Error(`${method.toUpperCase()} ${path} ${status}: ${name} is not in src/http/wire/response-headers.ts`);
            used.add(name);
            return [name, { $ref: `#/components/headers/${name}` }];
          }),
        );
      }
    }
  }
  const headers = Object.fromEntries([...used].sort().map((name) => [name, headerObject(name)]));
  return { ...document, components: { ...document.components, headers } };
}

/**
 * The document as served: each input capped as the server caps it, a body required only when a field of it is (@fastify/swagger
 * marks every body required, though a route whose fields are all optional takes none), response headers as components.
 */
export function finishDocument(document: OpenApiDocument, caps: InputCaps, everyAnswer: readonly ResponseHeader[]): OpenApiDocument {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) capInput(parameter.schema, caps.maxHeaderBytes, caps.maxParameters);
      if (operation.requestBody === undefined) continue;
      const media = Object.values(operation.requestBody.content);
      for (const { schema } of media) capInput(schema, caps.maxParameterLength, caps.maxParameters);
      operation.requestBody.required = media.some(({ schema }) => (schema?.required ?? []).length > 0);
    }
  }
  return referenceHeaders(document, everyAnswer);
}
