// Test support for the operator console: a real `serve` with ADMIN_PORT, and plain HTTP calls as a browser makes them
// (cookies, forms, Origin), for the tests that need no browser.
import assert from 'node:assert/strict';
import type { TestDatabase } from '../../support/postgres.ts';
import type { Suite } from '../../support/requiring.ts';
import { adminUrlOf, ENGINES, startAdminServer, type AdminServer } from '../admin/admin-support.ts';

export interface ConsoleServer extends AdminServer {
  /** `http://127.0.0.1:PORT`: the admin listener's origin, as a browser there sends it in Origin. */
  readonly origin: string;
}

export async function startConsoleServer(database: TestDatabase | null, env: NodeJS.ProcessEnv = {}): Promise<ConsoleServer> {
  const server = await startAdminServer(database, env);
  return { ...server, origin: new URL(adminUrlOf(server.server)).origin };
}

export interface PageAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly html: string;
  /** Location, for a redirect. */
  readonly location: string | null;
}

/** One request as a browser on the console makes it: the session cookie, and Origin on a POST unless told otherwise. */
export async function consoleRequest(
  console: ConsoleServer,
  method: 'GET' | 'POST',
  path: string,
  options: { cookie?: string | null; form?: Record<string, string>; origin?: string | null } = {},
): Promise<PageAnswer> {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = options.cookie;
  const origin = options.origin === undefined ? (method === 'POST' ? console.origin : null) : options.origin;
  if (origin !== null) headers.origin = origin;
  let body: string | undefined;
  if (options.form !== undefined) {
    body = new URLSearchParams(options.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const response = await fetch(`${console.origin}${path}`, { method, headers, body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: await response.text(), location: response.headers.get('location') };
}

/** Signs in with `token` as the sign-in form does; resolves with the Cookie header to send after. */
export async function signIn(console: ConsoleServer, token = console.token): Promise<string> {
  const answer = await consoleRequest(console, 'POST', '/console/sign-in', { form: { token } });
  assert.equal(answer.status, 303, `sign-in was not accepted: ${answer.status} ${answer.html.slice(0, 500)}`);
  const cookie = answer.headers.get('set-cookie');
  assert.ok(cookie !== null, 'sign-in set no cookie');
  return cookie.split(';')[0]!;
}

/** The form proof a page carries (every form's hidden _csrf field). */
export function csrfOf(html: string): string {
  const found = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(found !== undefined, `the page has no form proof:\n${html.slice(0, 800)}`);
  return found;
}

export interface SignedInConsole {
  readonly suite: Suite;
  readonly server: () => ConsoleServer;
  /** The Cookie header of a session signed in with the server's token. */
  readonly cookie: () => string;
}

/**
 * Runs `define` once per engine, with a console server started before its tests (seeded by `seed`, then signed in to) and
 * stopped after them.
 */
export function onEveryEngineSignedIn(
  title: string,
  define: (context: SignedInConsole) => void,
  options: { env?: NodeJS.ProcessEnv; seed?: (server: ConsoleServer) => Promise<void> } = {},
): void {
  for (const engine of ENGINES) {
    const { describe, before, after } = engine.suite;
    describe(`${title} (${engine.name})`, () => {
      let server: ConsoleServer;
      let cookie = '';
      let drop: () => Promise<void> = async () => {};
      before(async () => {
        const made = await engine.database();
        drop = made.drop;
        server = await startConsoleServer(made.database, options.env);
        await options.seed?.(server);
        cookie = await signIn(server);
      });
      after(async () => {
        await server?.stop();
        await drop();
      });
      define({ suite: engine.suite, server: () => server, cookie: () => cookie });
    });
  }
}
