// /console/sign-in and /console/sign-out: an admin token typed once, exchanged for a session cookie; and the way out.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/failures/http-error.ts';
import type { ConsolePageDependencies } from '../page-dependencies.ts';
import { field } from '../forms.ts';
import { provenFromConsole, type ConsoleSessions } from '../sessions.ts';

interface SignInDependencies extends ConsolePageDependencies {
  readonly consoleSessions: ConsoleSessions;
  /** adminTokenProof: the admin API's own check of a token, failed-attempt budget included. */
  readonly proof: (request: FastifyRequest, reply: FastifyReply, token: string) => Promise<string>;
}

/** What the sign-in page says for each refusal: the admin API's codes, in words for a person at a form. */
function refusalText(error: HttpError): string {
  if (error.statusCode === 429) return 'Too many failed sign-ins from this address; wait a minute and try again.';
  switch (error.code) {
    case 'admin_token_revoked':
      return 'This admin token has been revoked; ask for a new one (account-api admin-tokens create).';
    case 'wrong_environment':
      return error.message;
    default:
      return 'That is not a valid admin token. Paste the whole token (aapi_admin_...), as account-api admin-tokens create printed it.';
  }
}

/** A configured span in words: whole hours as hours, else minutes (CONSOLE_IDLE_MINUTES is set in minutes). */
function spanText(ms: number): string {
  const [count, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, 'hour'] : [Math.round(ms / 60_000), 'minute'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export async function signInPages(app: FastifyInstance, options: SignInDependencies): Promise<void> {
  const { views, consoleSessions, proof } = options;
  // The lifetimes this server was configured with (CONSOLE_IDLE_MINUTES, CONSOLE_MAX_HOURS), said on the page, not guessed at.
  const lifetimes = { idle: spanText(options.sessions.idleMs), max: spanText(options.sessions.maxMs) };

  app.get('/', (_request, reply) => reply.redirect('/console/accounts', 303));

  app.get('/sign-in', async (request, reply) => {
    // Sent here for two session cookies, the page stays even if this path sees one: a cookie planted for a longer path
    // (/console/accounts) is not sent here, and going back there would send the browser round in circles.
    const twoSessions = (request.query as { notice?: unknown }).notice === 'two-sessions';
    if (!twoSessions && (await consoleSessions.find(request, reply)) !== null) return reply.redirect('/console/accounts', 303);
    return views.send(request, reply, 'sign-in', { title: 'Sign in', section: null, error: null, lifetimes });
  });

  app.post('/sign-in', async (request, reply) => {
    // No session yet, so the browser's Origin is the proof: a page of another site cannot sign this browser in.
    if (!provenFromConsole(request, undefined, null)) {
      throw new HttpError(403, 'console_request_unproven', 'This sign-in did not come from the console’s own page; open /console/sign-in and sign in there.');
    }
    const token = field(request.body, 'token')?.trim() ?? '';
    let tokenId: string;
    try {
      tokenId = await proof(request, reply, token);
    } catch (error) {
      if (!(error instanceof HttpError) || (error.statusCode !== 401 && error.statusCode !== 429)) throw error;
      // Retry-After on a 429; not the 401's WWW-Authenticate, which names the API's Bearer scheme, not this form.
      if (error.statusCode === 429) reply.headers(error.headers);
      reply.failure = { code: error.code, fault: false };
      return views.send(request, reply, 'sign-in', { title: 'Sign in', section: null, error: refusalText(error), lifetimes }, error.statusCode);
    }
    await consoleSessions.begin(reply, request, tokenId);
    request.log.info({ tokenId }, 'console sign-in');
    return reply.redirect('/console/accounts', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    const session = await consoleSessions.find(request, reply);
    if (session !== null) {
      if (!provenFromConsole(request, (request.body as { _csrf?: unknown } | undefined)?._csrf, session)) {
        throw new HttpError(403, 'console_request_unproven', 'This sign-out did not come from a console page, so the session goes on.');
      }
      await consoleSessions.end(request, reply, session);
    }
    return reply.redirect('/console/sign-in?notice=signed-out', 303);
  });
}
