// The OpenAPI 3.1 document, generated from the routes' own schemas (@fastify/swagger), and the interactive page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { precompressedFiles } from './compression.ts';
import { docsLook, serveWordmark } from './docs-look.ts';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { DOCUMENT_CONTACT, DOCUMENT_LICENSE } from './openapi-info.ts';
import { finishDocument, shownSchema, type InputCaps, type OpenApiDocument } from './openapi-document.ts';
import { DOCUMENTED_BODY, DOCUMENTED_ONLY, SHARED_SCHEMAS } from './schemas.ts';
import { webhookOperations } from './webhook-openapi.ts';

export interface OpenApiOptions {
  readonly environment: KeyEnvironment;
  /** SANDBOX_URL, listed as a second server in the live document; null lists none. */
  readonly sandboxUrl: string | null;
  readonly version: string;
  /** The caps every request meets, stated on each input. */
  readonly inputCaps: InputCaps;
}

const DESCRIPTION = `The Account Settings, User and Test API.

Every response is the envelope {status, messages, meta, data}. Callers authenticate with HTTP Basic: the account's username as the
user and an API key as the password. Settings and user endpoints need an account with Premium (x-premium-required); without it they
answer 403 premium_required. POST bodies are form-encoded (curl -d) or JSON objects of strings. Failures carry a stable code per
message; the codes each status can carry are enumerated in its schema. GET /user and GET /settings carry an ETag (If-None-Match:
304); their POSTs take If-Match (412 when the account changed since) and an Idempotency-Key (a repeat gets the first answer again).
Webhooks (the section after the paths) are the events this server sends to the endpoints its operator registered.`;

const SWAGGER_UI_STATIC = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')), 'static');

export const openApi = fp(
  async function openApi(app: FastifyInstance, options: OpenApiOptions) {
    for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
    const sandbox = options.environment === 'sandbox';
    // Relative: whatever address the reader used. The sandbox's document names no live server (its keys are refused there).
    // x-internal: false, the public API; the description names the environment (keys aapi_live_ are production's).
    const servers = [
      { url: '/', description: sandbox ? 'This sandbox' : 'This server: production, keys aapi_live_...', 'x-internal': false },
      ...(!sandbox && options.sandboxUrl !== null
        ? [{ url: options.sandboxUrl, description: 'Sandbox: the same paths on a separate database, with demo accounts; keys aapi_sandbox_...', 'x-internal': false }]
        : []),
    ];
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Account Settings, User and Test API', version: options.version, description: DESCRIPTION, contact: DOCUMENT_CONTACT, license: DOCUMENT_LICENSE },
        servers,
        tags: [
          { name: 'Settings', description: "The caller's timezone and the list it is chosen from (Premium)" },
          { name: 'User', description: "The caller's account (Premium)" },
          { name: 'Test', description: 'Public endpoints for testing a GET and a POST call' },
        ],
        // OpenAPI 3.1's webhooks: what a receiver gets, not paths of this server.
        webhooks: webhookOperations() as never,
        components: {
          securitySchemes: {
            basicAuth: { type: 'http', scheme: 'basic', description: 'Username as the user part, an API key (aapi_live_... or aapi_sandbox_...) as the password' },
          },
        },
      },
      // Health, metrics and the docs themselves are not part of the API.
      hideUntagged: true,
    // Components named by $id, not def-0, def-1...
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      transform: ({ schema, url, route }) => {
        const premium = route.config?.access === 'premium';
        const body = (schema?.body as { [DOCUMENTED_BODY]?: object } | undefined)?.[DOCUMENTED_BODY];
        const only = (schema as { [DOCUMENTED_ONLY]?: object } | undefined)?.[DOCUMENTED_ONLY];
        return {
          schema: shownSchema({ ...schema, ...only, ...(body === undefined ? {} : { body }), ...(premium ? { 'x-premium-required': true } : {}) }) as typeof schema,
          url,
        };
      },
      transformObject: (documentObject) =>
        'openapiObject' in documentObject
          ? (finishDocument(documentObject.openapiObject as OpenApiDocument, options.inputCaps, [...(sandbox ? (['X-Environment'] as const) : []), 'Access-Control-Allow-Origin']) as never)
          : documentObject.swaggerObject,
    });
    // In a scope of their own, so the compression hooks run for the docs page's routes only.
    await app.register(async (docs) => {
      const assets = precompressedFiles(SWAGGER_UI_STATIC, '/docs/static/');
      docs.addHook('onRequest', assets.onRequest);
      docs.addHook('onSend', assets.onSend);
      serveWordmark(docs);
      await docs.register(swaggerUi, {
        routePrefix: '/docs',
        // Our wordmark and stylesheet (src/page-style/), not Swagger's logo; never undefined, which reads Swagger's from disk.
        logo: docsLook.logo,
        theme: docsLook.theme,
        uiConfig: { tryItOutEnabled: true, persistAuthorization: false, displayRequestDuration: true, plugins: docsLook.plugins },
        staticCSP: true,
        // Also plain HTTP on private networks: upgrading the page's calls to https would break them. And this origin only: the
        // plugin's policy also lets styles and fonts come from any https: host and images from Swagger's validator, which
        // this page never asks for (validatorUrl is null), so it works, and is tested, with no internet.
        transformStaticCSP: (header) =>
          header.replace(/\s*upgrade-insecure-requests;?/, '').replaceAll(' https:', '').replace(' validator.swagger.io', ''),
      });
    });
  },
  { name: 'openapi' },
);
