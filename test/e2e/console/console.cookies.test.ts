// The console's session cookie in a real browser against a sibling host that plants cookies for the parent domain (issue 36):
// over TLS the __Host- cookie cannot be planted, so the planter's session is never used and a junk cookie locks nobody out;
// over plain HTTP two session cookies are none. A live and a sandbox console on one host keep their own sessions. Host names
// are mapped to 127.0.0.1 inside Chromium (--host-resolver-rules); TLS ends at a proxy in this process with a certificate made
// here, as a load balancer in front of the admin listener would (TRUST_PROXY).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../../support/chromium.ts';
import { HANG_MS } from '../../support/eventually.ts';
import { call } from '../../support/http.ts';
import { requiring } from '../../support/requiring.ts';
import { cliOk, createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, makeAdminToken } from '../admin/admin-support.ts';

const { describe, before, after, test } = requiring(chromiumSkip);

// Names only the browser resolves, to 127.0.0.1 (--host-resolver-rules), under the reserved .test (RFC 2606): never looked up.
const PARENT = 'example.test';
const CONSOLE_HOST = `console.${PARENT}`;
const SIBLING_HOST = `evil.${PARENT}`;

/** A proxy in front of one admin listener, as a load balancer would be; the sibling host's requests it answers itself. */
interface Front {
  readonly port: number;
  /** The Set-Cookie lines the sibling host answers with. */
  planting: string[];
  close(): Promise<void>;
}

async function startFront(upstream: string, tls: { key: Buffer; cert: Buffer } | null): Promise<Front> {
  const target = new URL(upstream);
  const front = { planting: [] as string[] } as { planting: string[] };
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    if (request.headers.host?.startsWith(`${SIBLING_HOST}:`)) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': front.planting });
      response.end('<!doctype html><title>A sibling site</title><p>Cookies set for the parent domain.</p>');
      return;
    }
    // Host passed on as the browser sent it, and the scheme said, as docs/console.md tells a proxy to.
    const headers = { ...request.headers, 'x-forwarded-proto': tls === null ? 'http' : 'https' };
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers }, (answer) => {
      response.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(response);
    });
    forwarded.on('error', (error) => response.destroy(error));
    request.pipe(forwarded);
  };
  const server: Server = tls === null ? createHttpServer(handle) : createHttpsServer(tls, handle);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return Object.assign(front, {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  });
}

/** An admin token is aapi_admin_[sandbox_], its 12-character id, then its secret (docs/api.md, Admin tokens). */
function tokenIdOf(token: string): string {
  return /^aapi_admin_(?:sandbox_)?([0-9A-Za-z]{12})/.exec(token)![1]!;
}

describe("the console's session cookie against a sibling host's cookies, in a browser", () => {
  let workspace: Workspace;
  let live: ServerProcess;
  let sandbox: ServerProcess;
  let victimToken: string;
  let planterToken: string;
  let sandboxToken: string;
  let tlsFront: Front;
  let sandboxFront: Front;
  let plainFront: Front;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    workspace = createWorkspace({ ADMIN_PORT: '0', TRUST_PROXY: 'loopback' });
    [victimToken, planterToken] = [await makeAdminToken(workspace, 'victim'), await makeAdminToken(workspace, 'planter')];
    sandboxToken = (await cliOk(workspace, ['admin-tokens', 'create', '--label', 'sandbox', '--sandbox'])).trim();
    // A certificate for both names, made for this run; the browser is told to accept it (it is no one's authority).
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${CONSOLE_HOST}`, '-addext', `subjectAltName=DNS:${CONSOLE_HOST},DNS:${SIBLING_HOST}`,
      '-keyout', join(workspace.dir, 'key.pem'), '-out', join(workspace.dir, 'cert.pem'),
    ], { stdio: 'pipe' });
    const tls = { key: readFileSync(join(workspace.dir, 'key.pem')), cert: readFileSync(join(workspace.dir, 'cert.pem')) };
    [live, sandbox, browser] = await Promise.all([
      startServer(workspace),
      startServer(workspace, ['--sandbox']),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP *.${PARENT} 127.0.0.1`] }),
    ]);
    [tlsFront, sandboxFront, plainFront] = await Promise.all([
      startFront(adminUrlOf(live), tls),
      startFront(adminUrlOf(sandbox), tls),
      startFront(adminUrlOf(live), null),
    ]);
  });

  after(async () => {
    await browser?.close();
    await Promise.all([tlsFront?.close(), sandboxFront?.close(), plainFront?.close()]);
    await Promise.all([live?.stop(), sandbox?.stop()]);
    workspace?.cleanup();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    contexts.push(context);
    const page = await context.newPage();
    // A hang detector, not a timing check.
    page.setDefaultTimeout(HANG_MS);
    return page;
  }

  /** A session the planter opened with its own token, as the secret its cookie holds (whatever the cookie's name). */
  async function plantersSecret(): Promise<string> {
    const origin = new URL(adminUrlOf(live)).origin;
    const response = await fetch(`${origin}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ token: planterToken }).toString(),
    });
    assert.equal(response.status, 303, 'test setup: the planter could not sign in');
    return /=([A-Za-z0-9_-]{43});/.exec(response.headers.get('set-cookie') ?? '')![1]!;
  }

  async function plant(page: Page, front: Front, scheme: 'http' | 'https', cookies: string[]): Promise<void> {
    front.planting = cookies;
    await page.goto(`${scheme}://${SIBLING_HOST}:${front.port}/plant`);
    assert.equal(await page.title(), 'A sibling site', 'test setup: the sibling host did not answer');
  }

  async function signIn(page: Page, origin: string, token: string): Promise<void> {
    await page.goto(`${origin}/console/sign-in`);
    await page.locator('#token').fill(token);
    await page.locator('form[action="/console/sign-in"] button[type="submit"]').click();
  }

  async function heading(page: Page): Promise<string> {
    return (await page.locator('main h1').innerText()).trim();
  }

  /** Who the audit trail says created `username`: admin:<token id>. */
  async function creatorOf(username: string): Promise<string> {
    const entries = expectData(await call('GET', `${adminUrlOf(live)}/audit?username=${username}&action=account.created`, { auth: bearer(victimToken) }));
    assert.equal(entries.length, 1, `test setup: ${username} was created ${entries.length} times`);
    return entries[0].actor;
  }

  test("over TLS the planter's cookie and a junk one are never used: the victim signs in, and its change is its own", async () => {
    const origin = `https://${CONSOLE_HOST}:${tlsFront.port}`;
    const page = await newPage();
    const planted = await plantersSecret();
    await plant(page, tlsFront, 'https', [
      // What issue 36 did: the planter's own session, for the parent domain, on a longer path than the console's cookie.
      `console_session=${planted}; Domain=${PARENT}; Path=/console/accounts; Secure; SameSite=Lax`,
      // A junk cookie on the console's path, which locked the victim out.
      `console_session=${'A'.repeat(43)}; Domain=${PARENT}; Path=/console; Secure; SameSite=Lax`,
      // The prefixed name too: refused by the browser with a Domain, and host-only to the sibling without one.
      `__Host-console_session=${planted}; Domain=${PARENT}; Path=/; Secure`,
      `__Host-console_session=${planted}; Path=/; Secure`,
    ]);
    const sentToConsole = await page.context().cookies(`${origin}/console/accounts`);
    assert.deepEqual(
      sentToConsole.map((cookie) => `${cookie.name} ${cookie.domain} ${cookie.path}`).sort(),
      [`console_session .${PARENT} /console`, `console_session .${PARENT} /console/accounts`],
      'test setup: the sibling did not plant what issue 36 planted (or planted a __Host- cookie, which no browser should keep)',
    );

    await signIn(page, origin, victimToken);
    await page.waitForURL(`${origin}/console/accounts`);
    assert.equal(await heading(page), 'Accounts', 'the victim was not let in past the planted cookies');
    await page.locator('#new-username').fill('made-by-victim');
    await page.locator('form[action="/console/accounts"][method="post"] button[type="submit"]').click();
    await page.waitForURL(`${origin}/console/accounts/made-by-victim?notice=created`);
    assert.equal(await creatorOf('made-by-victim'), `admin:${tokenIdOf(victimToken)}`, "the victim's change was recorded as the planter's");

    // The victim's own cookie is the one no other host can set.
    const own = (await page.context().cookies(`${origin}/console/accounts`)).filter((cookie) => cookie.name === '__Host-console_session');
    assert.equal(own.length, 1, 'the victim holds no __Host- session cookie');
    assert.deepEqual([own[0]!.domain, own[0]!.path, own[0]!.secure, own[0]!.httpOnly, own[0]!.sameSite], [CONSOLE_HOST, '/', true, true, 'Strict']);
  });

  test('over TLS a junk cookie planted for the console locks no one out: signing in opens the accounts', async () => {
    const origin = `https://${CONSOLE_HOST}:${tlsFront.port}`;
    const page = await newPage();
    // Issue 36: every sign-in returned to "session ended", the planted cookie being the first the browser sent.
    await plant(page, tlsFront, 'https', [`console_session=junk; Domain=${PARENT}; Path=/console/accounts; Secure; SameSite=Lax`]);
    await signIn(page, origin, victimToken);
    await page.waitForURL(/\/console\/(accounts|sign-in\?notice=)/);
    assert.equal(page.url(), `${origin}/console/accounts`, 'the sign-in did not get the victim in');
    assert.equal(await heading(page), 'Accounts');
  });

  test('over TLS a cookie named "\\xa0__Host-console_session" by the sibling is not the session cookie: never used, locks no one out', async () => {
    const origin = `https://${CONSOLE_HOST}:${tlsFront.port}`;
    const page = await newPage();
    const planted = await plantersSecret();
    // The name does not start with the prefix, so Chromium lets the sibling set it for the parent domain; it sends byte 0xa0.
    await plant(page, tlsFront, 'https', [`\u00a0__Host-console_session=${planted}; Domain=${PARENT}; Path=/; Secure; SameSite=Lax`]);
    assert.equal((await page.context().cookies(`${origin}/console/accounts`)).length, 1, 'test setup: the sibling planted nothing');
    await page.goto(`${origin}/console/accounts`);
    assert.equal(page.url(), `${origin}/console/sign-in`, "the browser was let into the console on the planter's session");
    await signIn(page, origin, victimToken);
    await page.waitForURL(/\/console\/(accounts|sign-in\?notice=)/);
    assert.equal(page.url(), `${origin}/console/accounts`, 'the planted cookie locked the victim out');
  });

  test('over plain HTTP, a cookie planted beside the session makes two, which are none: nothing is done as the planter', async () => {
    const origin = `http://${CONSOLE_HOST}:${plainFront.port}`;
    const page = await newPage();
    await signIn(page, origin, victimToken);
    await page.waitForURL(`${origin}/console/accounts`);
    const planted = await plantersSecret();
    await plant(page, plainFront, 'http', [`console_session=${planted}; Domain=${PARENT}; Path=/console/accounts; SameSite=Lax`]);
    await page.goto(`${origin}/console/accounts`);
    await page.waitForURL(`${origin}/console/sign-in?notice=two-sessions`);
    assert.match(await page.locator('main .notice').innerText(), /Your browser sent two console session cookies, so neither was used/);
    // What does not hold over plain HTTP (docs/console.md): the planted cookie stays, so the console stays closed to this browser.
    await signIn(page, origin, victimToken);
    await page.waitForURL(`${origin}/console/sign-in?notice=two-sessions`);
  });

  test('a live and a sandbox console on one host keep their own sessions', async () => {
    const page = await newPage();
    const liveOrigin = `https://${CONSOLE_HOST}:${tlsFront.port}`;
    const sandboxOrigin = `https://${CONSOLE_HOST}:${sandboxFront.port}`;
    await signIn(page, liveOrigin, victimToken);
    await page.waitForURL(`${liveOrigin}/console/accounts`);
    await signIn(page, sandboxOrigin, sandboxToken);
    await page.waitForURL(`${sandboxOrigin}/console/accounts`);
    const names = (await page.context().cookies(`${liveOrigin}/console/accounts`)).map((cookie) => cookie.name).sort();
    assert.deepEqual(names, ['__Host-console_session', '__Host-console_session_sandbox']);
    for (const origin of [liveOrigin, sandboxOrigin]) {
      await page.goto(`${origin}/console/accounts`);
      assert.equal(page.url(), `${origin}/console/accounts`, `signing in to the other console signed this one (${origin}) out`);
      assert.equal(await heading(page), 'Accounts');
    }
  });
});
