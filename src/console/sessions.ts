// The console's sessions: an admin token typed once becomes an HttpOnly, SameSite=Strict cookie whose secret's hash the store
// keeps; each page finds it (refused once expired or its token revoked), and each change proves it came from a console page.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleSessionStore } from '../store/console-sessions/console-session-store.ts';

export const SESSION_COOKIE = 'console_session';

/**
 * Browsers keep cookies per host, whatever the port: a live and a sandbox console on one host (or two tunnels to localhost)
 * would each overwrite the other's cookie under one name. The sandbox's has its own.
 */
export function sessionCookieName(environment: 'live' | 'sandbox'): string {
  return environment === 'sandbox' ? `${SESSION_COOKIE}_sandbox` : SESSION_COOKIE;
}
/** The cookie is sent to the console's pages only, never to the admin API beside them. */
export const CONSOLE_PATH = '/console';
/** A session's last request is written at most this often; the idle lifetime is judged at this precision. */
const TOUCH_INTERVAL_MS = 60_000;
/** A cookie's secret as begin() makes it: 32 random bytes in base64url. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SessionSettings {
  readonly idleMs: number;
  readonly maxMs: number;
  /** sessionCookieName's; SESSION_COOKIE when absent. */
  readonly cookieName?: string;
}

/** A signed-in console request: whose token, and the proof its forms carry. */
export interface ConsoleSignedIn {
  readonly tokenId: string;
  /** The hidden field every form of this session carries (csrfTokenOf). */
  readonly csrfToken: string;
  readonly hash: Uint8Array;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on console pages once the session cookie was found alive. */
    consoleSession: ConsoleSignedIn | null;
  }
}

function hashOf(secret: string): Uint8Array {
  return createHash('sha256').update(secret).digest();
}

/**
 * Derived from the cookie's secret, which only the browser holding the HttpOnly cookie has: a page of another site can
 * neither read it nor compute it, so a form that carries it came from one of this session's own pages.
 */
function csrfTokenOf(secret: string): string {
  return createHash('sha256').update('console csrf\0').update(secret).digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The request's own origin, as the browser names it in Origin; https when TLS ended here or at a trusted proxy. */
function ownOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * Whether a state-changing request came from this console: Origin (sent by browsers on every POST) must be this server's,
 * and `csrf` the session's token. Either alone would do against today's browsers; both, so one mistake is not enough.
 */
export function provenFromConsole(request: FastifyRequest, csrf: unknown, session: ConsoleSignedIn | null): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(request)) return false;
  if (session === null) return origin !== undefined;
  return typeof csrf === 'string' && sameText(csrf, session.csrfToken);
}

export class ConsoleSessions {
  readonly #store: ConsoleSessionStore;
  readonly #settings: SessionSettings;
  readonly #now: () => number;
  readonly cookieName: string;

  constructor(store: ConsoleSessionStore, settings: SessionSettings, now: () => number = Date.now) {
    this.cookieName = settings.cookieName ?? SESSION_COOKIE;
    this.#store = store;
    this.#settings = settings;
    this.#now = now;
  }

  /**
   * After the token was proven: a new session, its cookie set on `reply`. A session the browser already held is ended first, so
   * signing in again (another operator's token on a shared browser) leaves no earlier session alive for a copied cookie.
   */
  async begin(reply: FastifyReply, request: FastifyRequest, tokenId: string): Promise<void> {
    const earlier = request.cookies[this.cookieName];
    if (earlier !== undefined && SECRET_SHAPE.test(earlier)) await this.#store.endConsoleSession(hashOf(earlier));
    const secret = randomBytes(32).toString('base64url');
    await this.#store.createConsoleSession({ hash: hashOf(secret), tokenId, createdAt: new Date(this.#now()) });
    reply.setCookie(this.cookieName, secret, this.#cookieOptions(request, Math.floor(this.#settings.maxMs / 1000)));
  }

  /** The live session the request's cookie names, or null (no cookie, unknown, idle or too old, or its token revoked). */
  async find(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSignedIn | null> {
    const secret = request.cookies[this.cookieName];
    if (secret === undefined || !SECRET_SHAPE.test(secret)) return null;
    const hash = hashOf(secret);
    const session = await this.#store.findConsoleSession(hash);
    if (session === null) return this.#forget(request, reply);
    const now = this.#now();
    const idle = now - session.lastSeenAt.getTime();
    if (session.tokenRevoked || idle > this.#settings.idleMs || now - session.createdAt.getTime() > this.#settings.maxMs) {
      await this.#store.endConsoleSession(hash);
      return this.#forget(request, reply);
    }
    if (idle >= TOUCH_INTERVAL_MS) {
      this.#store.touchConsoleSession(hash, new Date(now)).catch((error: unknown) => request.log.warn({ err: error }, 'could not record console session use'));
    }
    return { tokenId: session.tokenId, csrfToken: csrfTokenOf(secret), hash };
  }

  /** Sign out: the session is gone from the store, not only from this browser. */
  async end(request: FastifyRequest, reply: FastifyReply, session: ConsoleSignedIn): Promise<void> {
    await this.#store.endConsoleSession(session.hash);
    this.#forget(request, reply);
  }

  #forget(request: FastifyRequest, reply: FastifyReply): null {
    reply.clearCookie(this.cookieName, this.#cookieOptions(request, 0));
    return null;
  }

  #cookieOptions(request: FastifyRequest, maxAgeSeconds: number) {
    return {
      path: CONSOLE_PATH,
      httpOnly: true,
      sameSite: 'strict' as const,
      // Whenever the browser reached us over TLS, here or at a trusted proxy (TRUST_PROXY): never sent back over plain HTTP.
      secure: request.protocol === 'https',
      maxAge: maxAgeSeconds,
    };
  }
}
