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
/** Over plain HTTP the cookie is sent to the console's pages only, never to the admin API beside them. */
export const CONSOLE_PATH = '/console';

/** The cookie as a request's scheme has it: its name, path, and whether the browser sends it over TLS only. */
export interface SessionCookie {
  readonly name: string;
  readonly path: string;
  readonly secure: boolean;
}

/**
 * Whenever the browser reached us over TLS (here or at a trusted proxy, TRUST_PROXY), the `__Host-` prefix: a browser keeps such
 * a cookie only if it is Secure, for Path=/ and without Domain, so no other host (a sibling subdomain setting Domain=<parent>)
 * can plant one of that name. Plain HTTP cannot have it; there a sibling can (docs/console.md, Sessions).
 */
export function sessionCookieOf(request: FastifyRequest, baseName: string): SessionCookie {
  if (request.protocol === 'https') return { name: `__Host-${baseName}`, path: '/', secure: true };
  return { name: baseName, path: CONSOLE_PATH, secure: false };
}

/**
 * Spaces and tabs off both ends, as a browser trims a cookie's name (RFC 6265 5.2), and nothing more: String.prototype.trim
 * also takes U+00A0, so a cookie a sibling host named "\xa0__Host-console_session" (no prefix to the browser, so allowed a
 * Domain) would be read as the __Host- one.
 */
function browserTrimmed(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Every value the request's Cookie header gives `name`, in order. A browser sends one per cookie it holds under that name (one
 * set by this host, others by a parent domain, for other paths); a parser keeps the first, which would let a planted one win.
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals === -1 || browserTrimmed(pair.slice(0, equals)) !== name) continue;
    const value = browserTrimmed(pair.slice(equals + 1));
    values.push(value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);
  }
  return values;
}

/** A session's last request is written at most this often; the idle lifetime is judged at this precision. */
const TOUCH_INTERVAL_MS = 60_000;
/** A cookie's secret as begin() makes it: 32 random bytes in base64url. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SessionSettings {
  readonly idleMs: number;
  readonly maxMs: number;
  /** sessionCookieName's, `__Host-` prefixed over TLS (sessionCookieOf); SESSION_COOKIE when absent. */
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

  /** How many session cookies the request carries under this scheme's name: two or more is none (find). */
  cookiesSent(request: FastifyRequest): number {
    return cookieValues(request.headers.cookie, sessionCookieOf(request, this.cookieName).name).length;
  }

  /**
   * After the token was proven: a new session, its cookie set on `reply`. Every session the browser sent a cookie of is ended
   * first, so signing in again (another operator's token on a shared browser) leaves no earlier session alive for a copied
   * cookie, and a session planted beside the browser's own ends too.
   */
  async begin(reply: FastifyReply, request: FastifyRequest, tokenId: string): Promise<void> {
    const cookie = sessionCookieOf(request, this.cookieName);
    for (const earlier of cookieValues(request.headers.cookie, cookie.name)) {
      if (SECRET_SHAPE.test(earlier)) await this.#store.endConsoleSession(hashOf(earlier));
    }
    const secret = randomBytes(32).toString('base64url');
    await this.#store.createConsoleSession({ hash: hashOf(secret), tokenId, createdAt: new Date(this.#now()) });
    reply.setCookie(cookie.name, secret, this.#cookieOptions(cookie, Math.floor(this.#settings.maxMs / 1000)));
  }

  /**
   * The live session the request's cookie names, or null: no cookie, unknown, idle or too old, or its token revoked; and two
   * cookies or more, since which is the browser's own cannot be told (one may be planted by a sibling host, docs/console.md).
   */
  async find(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSignedIn | null> {
    const cookie = sessionCookieOf(request, this.cookieName);
    const sent = cookieValues(request.headers.cookie, cookie.name);
    // Two or more are none, and none is cleared: clearing this host's own would leave the planted one to be used alone.
    if (sent.length !== 1) return null;
    const secret = sent[0]!;
    if (!SECRET_SHAPE.test(secret)) return this.#forget(cookie, reply);
    const hash = hashOf(secret);
    const session = await this.#store.findConsoleSession(hash);
    if (session === null) return this.#forget(cookie, reply);
    const now = this.#now();
    const idle = now - session.lastSeenAt.getTime();
    if (session.tokenRevoked || idle > this.#settings.idleMs || now - session.createdAt.getTime() > this.#settings.maxMs) {
      await this.#store.endConsoleSession(hash);
      return this.#forget(cookie, reply);
    }
    if (idle >= TOUCH_INTERVAL_MS) {
      this.#store.touchConsoleSession(hash, new Date(now)).catch((error: unknown) => request.log.warn({ err: error }, 'could not record console session use'));
    }
    return { tokenId: session.tokenId, csrfToken: csrfTokenOf(secret), hash };
  }

  /** Sign out: the session is gone from the store, not only from this browser. */
  async end(request: FastifyRequest, reply: FastifyReply, session: ConsoleSignedIn): Promise<void> {
    await this.#store.endConsoleSession(session.hash);
    this.#forget(sessionCookieOf(request, this.cookieName), reply);
  }

  #forget(cookie: SessionCookie, reply: FastifyReply): null {
    reply.clearCookie(cookie.name, this.#cookieOptions(cookie, 0));
    return null;
  }

  #cookieOptions(cookie: SessionCookie, maxAgeSeconds: number) {
    // Secure whenever the browser came over TLS: never sent back over plain HTTP.
    return { path: cookie.path, httpOnly: true, sameSite: 'strict' as const, secure: cookie.secure, maxAge: maxAgeSeconds };
  }
}
