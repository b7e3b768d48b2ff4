// The operator console at /console/ on the admin listener: pages over the same operations as the admin API, behind a session
// made from an admin token, with a policy that lets nothing but this server's own files run.
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/failures/http-error.ts';
import { mapError } from '../http/failures/map-error.ts';
import { adminTokenProof, chargeAdminToken } from '../http/auth/admin-auth.ts';
import type { ConsoleOptions, ConsolePageDependencies } from './page-dependencies.ts';
import { consoleAssets } from './assets.ts';
import { failurePage } from './failure-pages.ts';
import { accountPages } from './pages/accounts.ts';
import { auditPages } from './pages/audit.ts';
import { keyPages } from './pages/keys.ts';
import { signInPages } from './pages/sign-in.ts';
import { webhookPages } from './pages/webhooks.ts';
import { ConsoleSessions, provenFromConsole, sessionCookieName } from './sessions.ts';
import { ConsoleViews } from './views.ts';

/**
 * Only this server's own files, no inline script or style, no framing, forms posted only here. Chart.js sets sizes through
 * the style property (allowed); htmx's own inline indicator style is turned off in layout.eta's htmx-config.
 */
export const CONSOLE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'";

const CONSOLE_HEADERS = {
  'content-security-policy': CONSOLE_POLICY,
  // Same-origin, not no-referrer: the browser's Origin on a form POST would otherwise read "null", and the check needs it.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when a sign-in cookie was sent but named no live session: the sign-in page then says why. */
    consoleSessionEnded: boolean;
  }
}

export async function operatorConsole(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const views = new ConsoleViews();
  const sessions = new ConsoleSessions(options.store, { ...options.sessions, cookieName: sessionCookieName(options.environment) });
  // Named one by one: the options Fastify hands a plugin also hold its prefix, which a nested register would add again.
  const { store, timezones, environment, tokens, webhooks, userAgent } = options;
  const dependencies: ConsolePageDependencies = { store, timezones, environment, sessions: options.sessions, tokens, webhooks, userAgent, views };

  await app.register(cookie);
  app.decorateRequest('consoleSession', null);
  app.decorateRequest('consoleSessionEnded', false);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CONSOLE_HEADERS);
    done();
  });

  // Failures are pages too: the admin API's status, code and message, with a way back.
  app.setErrorHandler((error, request, reply) => {
    const mapped = mapError(error, request.body);
    if (mapped.unexpected) request.log.error({ err: error }, 'console request failed');
    const message = mapped.messages[0];
    reply.failure = { code: message?.code ?? 'unknown', fault: mapped.statusCode >= 500 };
    reply.headers(mapped.headers);
    const page = failurePage(message?.code ?? 'unknown', mapped.statusCode, request.params);
    if (message?.code === 'rate_limited') {
      // The API's words name an API key; a person at the console is told whose budget it is, and when to come back.
      // A refused page is often the one a change redirected to, which was made: only a refused change says nothing was done.
      const outcome = request.method === 'GET' || request.method === 'HEAD' ? 'so this page was not loaded' : 'so nothing was done';
      const text = `This admin token has used its requests for now (ADMIN_RATE_LIMIT_PER_TOKEN, shared with the admin API calls made with it), ${outcome}. Try again in ${mapped.headers['Retry-After'] ?? 'a few'} seconds.`;
      return views.send(request, reply, 'error', { ...page, section: null, status: 429, message: { ...message, message: text } }, 429);
    }
    return views.send(request, reply, 'error', { ...page, section: null, status: mapped.statusCode, message }, mapped.statusCode);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.failure = { code: 'not_found', fault: false };
    return views.send(request, reply, 'error', {
      ...failurePage('not_found', 404, null),
      section: null,
      status: 404,
      message: { code: 'not_found', message: 'There is no console page at this address.' },
    }, 404);
  });

  await app.register(consoleAssets);
  await app.register(signInPages, { ...dependencies, consoleSessions: sessions, proof: adminTokenProof(app.rateBudgets, options.tokens) });

  // Every other page needs a live session; every change, proof that it came from one of this session's pages.
  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const session = await sessions.find(request, reply);
      if (session === null) {
        const sent = sessions.cookiesSent(request);
        return reply.redirect(`/console/sign-in${sent === 0 ? '' : sent === 1 ? '?notice=expired' : '?notice=two-sessions'}`, 303);
      }
      request.consoleSession = session;
      request.adminTokenId = session.tokenId;
      // Before any work, so a refused page or change does nothing (docs/console.md, Sessions).
      const charged = chargeAdminToken(app.rateBudgets, request, reply, session.tokenId);
      if (charged !== undefined) await charged;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const csrf = (request.body as { _csrf?: unknown } | undefined)?._csrf;
        if (!provenFromConsole(request, csrf, session)) {
          throw new HttpError(403, 'console_request_unproven', 'This change did not come from a console page (its form token or origin is missing or wrong), so nothing was changed. Reload the page and try again.');
        }
      }
      return undefined;
    });
    await signedIn.register(accountPages, dependencies);
    await signedIn.register(keyPages, dependencies);
    await signedIn.register(auditPages, dependencies);
    await signedIn.register(webhookPages, dependencies);
  });
}
