// The OpenAPI 3.1 document, generated from the routes' own schemas (@fastify/swagger), and the interactive page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { KeyEnvironment } from '../domain/api-keys.ts';

export interface OpenApiOptions {
  readonly environment: KeyEnvironment;
  /** Where the sandbox answers, listed as a second server in the live document; null lists none. */
  readonly sandboxUrl: string | null;
  readonly version: string;
}

const DESCRIPTION = `The Account Settings, User and Test API.

Every response is the envelope {status, messages, meta, data}. Callers authenticate with HTTP Basic: the account's username as the
user and an API key as the password. Settings and user endpoints need an account with Premium (x-premium-required); without it they
answer 403 premium_required. POST bodies are form-encoded (curl -d) or JSON objects of strings. Failures carry a stable code per
message; the codes each status can carry are enumerated in its schema.`;

// Swagger UI draws its logo as an SVG with an inline <style> (swagger-api/swagger-ui#10655); allow exactly that one by its hash.
// If an upgrade changes it, test/e2e/docs-page.test.ts fails with the new hash in Chromium's message.
const SWAGGER_LOGO_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

export const openApi = fp(
  async function openApi(app: FastifyInstance, options: OpenApiOptions) {
    const servers = [
      { url: '/', description: options.environment === 'sandbox' ? 'This sandbox' : 'This server' },
      ...(options.environment === 'live' && options.sandboxUrl !== null
        ? [{ url: options.sandboxUrl, description: 'The sandbox: same paths, demo accounts, keys aapi_sandbox_...' }]
        : []),
    ];
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Account Settings, User and Test API', version: options.version, description: DESCRIPTION },
        servers,
        tags: [
          { name: 'Settings', description: "The caller's timezone and the list it is chosen from (Premium)" },
          { name: 'User', description: "The caller's account (Premium)" },
          { name: 'Test', description: 'Public endpoints for testing a GET and a POST call' },
        ],
        components: {
          securitySchemes: {
            basicAuth: { type: 'http', scheme: 'basic', description: 'Username as the user part, an API key (aapi_live_... or aapi_sandbox_...) as the password' },
          },
        },
      },
      // Health, metrics and the docs themselves are not part of the API.
      hideUntagged: true,
      transform: ({ schema, url, route }) => {
        const premium = route.config?.access === 'premium';
        return { schema: premium ? ({ ...schema, 'x-premium-required': true } as typeof schema) : schema, url };
      },
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { tryItOutEnabled: true, persistAuthorization: false, displayRequestDuration: true },
      staticCSP: true,
      // Served over plain HTTP on private networks too: upgrading the page's own calls to https would break them.
      transformStaticCSP: (header) =>
        header.replace(/\s*upgrade-insecure-requests;?/, '').replace("style-src 'self'", `style-src 'self' '${SWAGGER_LOGO_STYLE}'`),
    });
  },
  { name: 'openapi' },
);
