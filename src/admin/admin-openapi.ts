// The admin API's own OpenAPI 3.1 document, generated from its routes' schemas (@fastify/swagger), served at /admin/v0/openapi.json.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DOCUMENT_CONTACT, DOCUMENT_LICENSE } from '../http/wire/openapi-info.ts';
import { openApiDocumentRoute } from '../http/wire/openapi-route.ts';
import { DOCUMENTED_ONLY } from '../http/wire/schemas.ts';
import { finishDocument, shownSchema, type InputCaps, type OpenApiDocument } from '../http/wire/openapi-document.ts';
import type { KeyEnvironment } from '../domain/api-keys.ts';
import { ADMIN_SCHEMAS } from './admin-schemas.ts';

const DESCRIPTION = `The admin API of account-api: accounts, their API keys and the audit trail, for the operators' own tools.

It listens on a port of its own (ADMIN_PORT, bound to 127.0.0.1 unless ADMIN_HOST says otherwise), never on the public one.
Callers send Authorization: Bearer <admin token>, made with 'account-api admin-tokens create --label NAME'. Every answer is the
envelope {status, messages, meta, data}; lists are paged with ?limit= (1 to 100) and ?cursor= (meta.next_cursor). Every change is
recorded in the audit trail with actor admin:<token id>, the request id and the caller's address. Every write (POST, PATCH,
DELETE) takes an Idempotency-Key, kept per admin token for 24 hours: a retry with it gets the first answer again.`;

export const adminOpenApi = fp(
  async function adminOpenApi(app: FastifyInstance, options: { readonly version: string; readonly environment: KeyEnvironment; readonly inputCaps: InputCaps }) {
    for (const schema of ADMIN_SCHEMAS) app.addSchema(schema);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'account-api admin API', version: options.version, description: DESCRIPTION, contact: DOCUMENT_CONTACT, license: DOCUMENT_LICENSE },
        // x-internal: true, for the operators' tools; the description names the environment of the server it belongs to.
        servers: [{ url: '/', description: `This admin listener, of the ${options.environment === 'sandbox' ? 'sandbox' : 'production (live)'} server`, 'x-internal': true } as { url: string }],
        tags: [
          { name: 'Accounts', description: 'Create, list, read, change and delete accounts' },
          { name: 'Keys', description: "An account's API keys: issue, list, roll, revoke, and each key's usage" },
          { name: 'Audit', description: 'Who changed what, when, from where' },
          { name: 'Webhooks', description: 'Endpoints that receive an event for every change: register, list, disable, enable, remove; attempts; redelivery; a test event' },
        ],
        components: {
          securitySchemes: {
            adminToken: { type: 'http', scheme: 'bearer', description: 'An admin token (aapi_admin_...) from account-api admin-tokens create' },
          },
        },
      },
      hideUntagged: true,
      // Request headers the hooks read for themselves (Idempotency-Key) are documented, never validated by Fastify.
      transform: ({ schema, url }) => ({ schema: shownSchema({ ...schema, ...(schema as { [DOCUMENTED_ONLY]?: object } | undefined)?.[DOCUMENTED_ONLY] }) as typeof schema, url }),
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      // The admin listener sends no CORS header: no web page may call it.
      transformObject: (documentObject) =>
        'openapiObject' in documentObject ? (finishDocument(documentObject.openapiObject as OpenApiDocument, options.inputCaps, []) as never) : documentObject.swaggerObject,
    });
  },
  { name: 'admin-openapi' },
);

/** GET /openapi.json (under /admin/v0): the document, built once the routes are known. */
export const adminOpenApiRoute = openApiDocumentRoute({ adminAccess: 'public' });
