// The console's sessions on a clock the test moves: the idle and the absolute lifetime, the token's revocation, sign-out,
// the throttled touch, and the proof a change must carry.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleSessions, cookieValues, provenFromConsole, sessionCookieName } from '../../../src/console/sessions.ts';
import type { ConsoleSession, ConsoleSessionStore, NewConsoleSession } from '../../../src/store/console-sessions/console-session-store.ts';

const MINUTE = 60_000;
const SETTINGS = { idleMs: 30 * MINUTE, maxMs: 12 * 60 * MINUTE };

class MemorySessions implements ConsoleSessionStore {
  readonly rows = new Map<string, ConsoleSession>();
  readonly revoked = new Set<string>();
  touches = 0;

  async createConsoleSession(session: NewConsoleSession): Promise<void> {
    this.rows.set(Buffer.from(session.hash).toString('hex'), { tokenId: session.tokenId, createdAt: session.createdAt, lastSeenAt: session.createdAt, tokenRevoked: false });
  }
  async findConsoleSession(hash: Uint8Array): Promise<ConsoleSession | null> {
    const row = this.rows.get(Buffer.from(hash).toString('hex'));
    return row === undefined ? null : { ...row, tokenRevoked: this.revoked.has(row.tokenId) };
  }
  async touchConsoleSession(hash: Uint8Array, seenAt: Date): Promise<void> {
    this.touches++;
    const key = Buffer.from(hash).toString('hex');
    const row = this.rows.get(key);
    if (row !== undefined) this.rows.set(key, { ...row, lastSeenAt: seenAt });
  }
  async endConsoleSession(hash: Uint8Array): Promise<void> {
    this.rows.delete(Buffer.from(hash).toString('hex'));
  }
  async pruneConsoleSessions(): Promise<number> {
    return 0;
  }
}

/** A browser of one: the cookie it holds, as the replies set and clear it, sent back in a Cookie header with `planted` ones. */
function browser(headers: Record<string, string> = {}, protocol: 'http' | 'https' = 'http') {
  let cookie: { name: string; value: string } | undefined;
  const planted: string[] = [];
  const set: { name: string; value: string; options: Record<string, unknown> }[] = [];
  const request = () => {
    const sent = [...planted, ...(cookie === undefined ? [] : [`${cookie.name}=${cookie.value}`])];
    return {
      headers: sent.length === 0 ? headers : { ...headers, cookie: sent.join('; ') },
      protocol,
      host: '127.0.0.1:8082',
      log: { warn: () => {} },
    } as unknown as FastifyRequest;
  };
  const reply = {
    setCookie(name: string, value: string, options: Record<string, unknown>) {
      set.push({ name, value, options });
      cookie = { name, value };
      return reply;
    },
    clearCookie(name: string, options: Record<string, unknown>) {
      set.push({ name, value: '', options });
      if (cookie?.name === name) cookie = undefined;
      return reply;
    },
  } as unknown as FastifyReply;
  return { request, reply, set, planted, cookie: () => cookie?.value };
}

describe('console sessions', () => {
  test('a session lives while used within the idle lifetime, and ends after it without use', async () => {
    let now = Date.parse('2026-11-26T08:00:00Z');
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS, () => now);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    for (let i = 0; i < 10; i++) {
      now += 29 * MINUTE;
      assert.equal((await sessions.find(alice.request(), alice.reply))?.tokenId, 'tok000000001', `request ${i}: refused within the idle lifetime`);
    }
    now += 30 * MINUTE + 1;
    assert.equal(await sessions.find(alice.request(), alice.reply), null, 'still open after 30 idle minutes');
    assert.equal(store.rows.size, 0, 'the dead session is still stored');
  });

  test('a session ends at its absolute lifetime however busy it is', async () => {
    let now = Date.parse('2026-11-26T08:00:00Z');
    const sessions = new ConsoleSessions(new MemorySessions(), SETTINGS, () => now);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    const ends = now + SETTINGS.maxMs;
    while (now + 10 * MINUTE <= ends) {
      now += 10 * MINUTE;
      assert.notEqual(await sessions.find(alice.request(), alice.reply), null);
    }
    now = ends + 1;
    assert.equal(await sessions.find(alice.request(), alice.reply), null, 'open past 12 hours');
  });

  test("a revoked token's session is refused on its next request, and its cookie cleared", async () => {
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    assert.notEqual(await sessions.find(alice.request(), alice.reply), null);
    store.revoked.add('tok000000001');
    assert.equal(await sessions.find(alice.request(), alice.reply), null);
    assert.equal(alice.cookie(), undefined, 'the cookie was not cleared');
  });

  test('sign-out removes the session from the store: the same cookie sent again opens nothing', async () => {
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    const stolen = alice.request();
    const session = await sessions.find(alice.request(), alice.reply);
    await sessions.end(alice.request(), alice.reply, session!);
    assert.equal(await sessions.find(stolen, browser().reply), null);
  });

  test('signing in again ends the session the browser held: its earlier cookie, if someone kept it, opens nothing', async () => {
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    const earlier = alice.request();
    // The same browser signs in again (another operator's token, or the same one) without signing out first.
    await sessions.begin(alice.reply, alice.request(), 'tok000000002');
    assert.equal(await sessions.find(earlier, browser().reply), null, 'the earlier session still opens pages');
    assert.equal((await sessions.find(alice.request(), alice.reply))?.tokenId, 'tok000000002');
    assert.equal(store.rows.size, 1, 'the earlier session is still stored');
  });

  test('the last use is written at most once a minute per session', async () => {
    let now = Date.parse('2026-11-26T08:00:00Z');
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS, () => now);
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    for (let i = 0; i < 100; i++) {
      now += 1000;
      await sessions.find(alice.request(), alice.reply);
    }
    assert.equal(store.touches, 1, '100 requests over 100 s wrote the last use more than once');
  });

  test('over plain HTTP the cookie is console_session, HttpOnly, SameSite=Strict, for /console, for the absolute lifetime', async () => {
    const sessions = new ConsoleSessions(new MemorySessions(), SETTINGS);
    const plain = browser();
    await sessions.begin(plain.reply, plain.request(), 'tok000000001');
    assert.equal(plain.set[0]!.name, 'console_session');
    assert.deepEqual(plain.set[0]!.options, { path: '/console', httpOnly: true, sameSite: 'strict', secure: false, maxAge: 12 * 3600 });
    assert.match(plain.set[0]!.value, /^[A-Za-z0-9_-]{43}$/, 'not 32 random bytes');
  });

  test('over TLS it is a __Host- cookie: Secure, Path=/, no Domain, so no other host can set one of its name', async () => {
    const sessions = new ConsoleSessions(new MemorySessions(), SETTINGS);
    const tls = browser({}, 'https');
    await sessions.begin(tls.reply, tls.request(), 'tok000000001');
    // The prefix's rules (RFC 6265bis, "The __Host- Prefix"): Secure, Path=/, and no Domain attribute.
    assert.equal(tls.set[0]!.name, '__Host-console_session');
    assert.deepEqual(tls.set[0]!.options, { path: '/', httpOnly: true, sameSite: 'strict', secure: true, maxAge: 12 * 3600 });
    assert.equal((await sessions.find(tls.request(), tls.reply))?.tokenId, 'tok000000001');
    // The unprefixed name, which a sibling host can set for the parent domain, opens nothing over TLS.
    const planted = browser({}, 'https');
    planted.planted.push(`console_session=${tls.cookie()}`);
    assert.equal(await sessions.find(planted.request(), planted.reply), null, 'an unprefixed cookie was taken over TLS');
  });

  test('two session cookies are none: neither is used, and neither cleared', async () => {
    const store = new MemorySessions();
    const sessions = new ConsoleSessions(store, SETTINGS);
    const mallory = browser();
    await sessions.begin(mallory.reply, mallory.request(), 'tok00mallory');
    const alice = browser();
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    // A browser sends the cookie with the longer path first: the one a sibling host set for /console/accounts.
    alice.planted.push(`console_session=${mallory.cookie()}`);
    const before = alice.set.length;
    assert.equal(await sessions.find(alice.request(), alice.reply), null, 'one of two session cookies was used');
    assert.equal(sessions.cookiesSent(alice.request()), 2);
    assert.equal(alice.set.length, before, 'a cookie was cleared, leaving the other to be used alone');
    alice.planted[0] = `console_session=${'A'.repeat(43)}`;
    assert.equal(await sessions.find(alice.request(), alice.reply), null, 'a junk cookie beside the real one let the real one through');
    // Signing in ends every session the browser sent a cookie of, the planted one too.
    alice.planted[0] = `console_session=${mallory.cookie()}`;
    await sessions.begin(alice.reply, alice.request(), 'tok000000001');
    assert.equal(await sessions.find(mallory.request(), mallory.reply), null, "the planter's session outlived the sign-in it was sent with");
  });

  test('a cookie value in quotes is read as the value inside them, and other cookies are left alone', () => {
    assert.deepEqual(cookieValues('a=1; console_session="abc"; console_sessionx=2; console_session=def', 'console_session'), ['abc', 'def']);
    assert.deepEqual(cookieValues('theme=dark', 'console_session'), []);
    assert.deepEqual(cookieValues(undefined, 'console_session'), []);
  });

  test('a name is trimmed of spaces and tabs only, as browsers do: a no-break space before it makes another cookie', () => {
    // Chromium keeps a cookie named "\u00a0__Host-console_session" for a parent domain (it does not start with the prefix) and
    // sends it as byte 0xa0, which Node reads as U+00A0; String.prototype.trim would make it the __Host- cookie.
    assert.deepEqual(cookieValues('\u00a0__Host-console_session=planted; __Host-console_session=own', '__Host-console_session'), ['own']);
    assert.deepEqual(cookieValues('\t console_session=a \t', 'console_session'), ['a']);
  });
});

test("the sandbox's console has a cookie of its own, so a live and a sandbox console on one host do not sign each other out", async () => {
  assert.equal(sessionCookieName('live'), 'console_session');
  assert.equal(sessionCookieName('sandbox'), 'console_session_sandbox');
  const sandbox = new ConsoleSessions(new MemorySessions(), { ...SETTINGS, cookieName: sessionCookieName('sandbox') });
  assert.equal(sandbox.cookieName, 'console_session_sandbox');
  for (const [protocol, name] of [['http', 'console_session_sandbox'], ['https', '__Host-console_session_sandbox']] as const) {
    const tab = browser({}, protocol);
    await sandbox.begin(tab.reply, tab.request(), 'tok000000001');
    assert.equal(tab.set[0]!.name, name);
  }
});

describe('proof that a change came from the console', () => {
  const own = { origin: 'http://127.0.0.1:8082' };
  const session = { tokenId: 'tok000000001', csrfToken: 'the-token', hash: new Uint8Array(32) };
  const request = (headers: Record<string, string>) => ({ headers, protocol: 'http', host: '127.0.0.1:8082' }) as unknown as FastifyRequest;

  test('a signed-in change needs the form token, and an Origin (when sent) of this server', () => {
    assert.equal(provenFromConsole(request(own), 'the-token', session), true);
    assert.equal(provenFromConsole(request({}), 'the-token', session), true, 'a browser that sends no Origin, with the token');
    assert.equal(provenFromConsole(request(own), undefined, session), false);
    assert.equal(provenFromConsole(request(own), 'the-tokem', session), false);
    assert.equal(provenFromConsole(request(own), ['the-token'], session), false);
    assert.equal(provenFromConsole(request({ origin: 'http://203.0.113.7' }), 'the-token', session), false);
    assert.equal(provenFromConsole(request({ origin: 'null' }), 'the-token', session), false);
    assert.equal(provenFromConsole(request({ origin: 'https://127.0.0.1:8082' }), 'the-token', session), false, 'another scheme is another origin');
  });

  test('the sign-in, before any session, needs an Origin of this server', () => {
    assert.equal(provenFromConsole(request(own), undefined, null), true);
    assert.equal(provenFromConsole(request({}), undefined, null), false);
    assert.equal(provenFromConsole(request({ origin: 'http://203.0.113.7' }), undefined, null), false);
  });
});
