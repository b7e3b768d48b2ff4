// Protects the /docs page as a person uses it, in headless Chromium: it loads from this server alone, in the service's own look,
// sends calls and shows answers.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { HANG_MS } from '../support/eventually.ts';
import { createAccount, createWorkspace, REPO_ROOT, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../support/chromium.ts';

const RESULTS = join(REPO_ROOT, 'test-results');
const SCREENSHOT = join(RESULTS, 'docs-page.png');
const TITLE = 'Account Settings, User and Test API';
// The service's name as issue 30 asks the page to carry it, and the files it is drawn from.
const SERVICE = 'account-api';
const STYLESHEET = readFileSync(join(REPO_ROOT, 'src/page-style/style.css'), 'utf8');
const ICON = readFileSync(join(REPO_ROOT, 'src/page-style/icon.svg'));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SWAGGER_LOGO = readFileSync(join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')), 'static/logo.svg'));
const NAME = 'Alice Liddell';

const { after, before, describe, test } = requiring(chromiumSkip);

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const consoleErrors: string[] = [];
const pageErrors: string[] = [];

/** The operation block for METHOD PATH, as Swagger UI lists it. */
function operation(method: string, path: string): Locator {
  return page.locator(`.opblock.opblock-${method.toLowerCase()}`).filter({
    has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
  });
}

/** Expands the operation, switches it to "Try it out" and presses "Execute"; resolves with the status and body the page shows. */
async function execute(method: string, path: string): Promise<{ status: string; body: string }> {
  const block = operation(method, path);
  await block.locator('.opblock-summary').click();
  const tryOut = block.locator('button.try-out__btn');
  // tryItOutEnabled opens each operation ready to send, and the button then reads "Cancel".
  if ((await tryOut.innerText()).trim() === 'Try it out') await tryOut.click();
  await block.locator('button.execute').click();
  const response = block.locator('.live-responses-table .response');
  const status = (await response.locator('.response-col_status').innerText()).trim();
  const body = await response.locator('.response-col_description pre.microlight').first().innerText();
  return { status, body };
}

/** WCAG 2's contrast ratio of two computed colours (rgb(...) or rgba(...) with full alpha). */
function contrast(foreground: string, background: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = color.match(/[\d.]+/g)!.slice(0, 3).map((part) => {
      const c = Number(part) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** A test on the shared page; on failure it keeps a picture of what the page showed at that moment. */
function step(name: string, fn: () => Promise<void> | void): void {
  test(name, async () => {
    try {
      await fn();
    } catch (error) {
      await screenshot(join(RESULTS, 'docs-page-failure.png')).catch(() => {});
      throw error;
    }
  });
}

/** Saves a full-page screenshot and says where, so a person can look at what the browser saw. */
async function screenshot(path: string): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  await page.screenshot({ path, fullPage: true });
  console.log(`docs page screenshot: ${path}`);
}

describe('the /docs page in a real browser', () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium package (.ci/run)`);
    rmSync(join(RESULTS, 'docs-page-failure.png'), { force: true });
    workspace = createWorkspace();
    alice = await createAccount(workspace, 'alice', { name: NAME });
    [server, browser] = await Promise.all([
      startServer(workspace),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
    ]);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Every wait on the page is for something that will happen; the bound is a hang detector, not a timing check.
    page.setDefaultTimeout(HANG_MS);
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    // The console says a policy blocked something; the event says which directive and which file asked.
    // A string, not a function: this suite is typechecked without the DOM's types.
    await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation: ' + event.effectiveDirective + ' blocked ' + (event.blockedURI || 'inline') + ' from ' + event.sourceFile + ':' + event.lineNumber);
    });`);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    workspace?.cleanup();
  });

  step('loads with the API title and its operations grouped by tag', async () => {
    const response = await page.goto(`${server.url}/docs`);
    assert.equal(response?.status(), 200, 'GET /docs did not answer 200');
    // Every source a keyword ('self', 'none'), a hash or data:, never a host or a scheme: the page needs no other server.
    const policy = (await response!.headerValue('content-security-policy')) ?? '';
    const sources = policy.split(';').flatMap((directive) => directive.trim().split(/\s+/).slice(1));
    assert.ok(sources.includes("'self'"), `the page's policy reads ${policy}`);
    assert.deepEqual(sources.filter((source) => !/^('[^']+'|data:)$/.test(source)), [], `the page's policy allows another origin: ${policy}`);
    await page.locator('.information-container .title').waitFor();
    const title = await page.locator('.information-container .title').innerText();
    assert.ok(title.startsWith(TITLE), `the page is titled "${title}", not "${TITLE}"`);
    await page.locator('.opblock').first().waitFor();
    const tags = await page.locator('.opblock-tag').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tag')));
    for (const tag of ['Test', 'Settings', 'User']) assert.ok(tags.includes(tag), `tag ${tag} is not listed; the page shows ${tags.join(', ')}`);
    for (const [method, path] of [['GET', '/api/v0/hello'], ['GET', '/api/v0/user'], ['POST', '/api/v0/settings']] as const) {
      assert.equal(await operation(method, path).count(), 1, `${method} ${path} is not listed once`);
    }
  });

  step("carries the service's name in its top bar, drawn from our wordmark, and not Swagger's logo", async () => {
    assert.ok((await page.title()).startsWith(SERVICE), `the tab reads "${await page.title()}", not the service's name`);
    const topbar = page.locator('header.topbar');
    const wordmark = topbar.getByRole('img', { name: SERVICE, exact: true });
    assert.equal(await wordmark.count(), 1, `the top bar has no image named ${SERVICE}: ${await topbar.innerHTML()}`);
    assert.ok(await wordmark.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0), 'the wordmark image did not load');
    assert.ok(requests.includes(`${server.url}/docs/static/theme/wordmark.svg`), 'the wordmark was not loaded from this server');
    // Swagger UI draws its logo as an inline <svg> in the top bar's link; the dark-mode switch beside it has an <svg> of its own.
    assert.equal(await topbar.locator('.link svg').count(), 0, "the top bar's link still draws an <svg> (Swagger's logo is one)");
    assert.deepEqual(requests.filter((url) => /logo/i.test(url)), [], "the page asked for Swagger's logo");
    // @fastify/swagger-ui's own logo option sends the logo inside the initializer script, base64-encoded.
    const initializer = await (await fetch(`${server.url}/docs/static/swagger-initializer.js`)).text();
    assert.ok(!initializer.includes(SWAGGER_LOGO.toString('base64')), "the page's initializer script carries Swagger's logo");
    // Swagger's bar had a box to load another API's document by URL, with no label; ours has no form control at all.
    assert.equal(await topbar.locator('input, select, form').count(), 0, `the top bar has a form control: ${await topbar.innerHTML()}`);
  });

  step("shows our icon on the tab, not Swagger's", async () => {
    const icons = await page.locator('link[rel~="icon"]').evaluateAll((links) => links.map((link) => (link as unknown as { href: string; type: string }).href));
    const url = `${server.url}/docs/static/theme/icon.svg`;
    assert.deepEqual(icons, [url], `the page links these icons: ${icons.join(', ')}`);
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/svg+xml');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), ICON, 'the icon served is not src/page-style/icon.svg');
    assert.deepEqual(requests.filter((requested) => /favicon/.test(requested)), [], "the page asked for Swagger's favicon");
  });

  step('loads our stylesheet from this server, and its top bar is dark with legible text in our fonts', async () => {
    const url = `${server.url}/docs/static/theme/account-api.css`;
    assert.ok(requests.includes(url), `the page never asked for ${url}; it asked for ${requests.join(', ')}`);
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-type') ?? '', /^text\/css/);
    assert.equal(await served.text(), STYLESHEET, 'the stylesheet served is not src/page-style/style.css');
    const applied = await page.evaluate(`[...document.styleSheets].some((sheet) => sheet.href === ${JSON.stringify(url)} && sheet.cssRules.length > 0)`);
    assert.ok(applied, 'the stylesheet is linked but its rules did not reach the page');

    const look = (await page.evaluate(`(() => {
      const style = (selector) => getComputedStyle(document.querySelector(selector));
      return {
        bar: style('header.topbar').backgroundColor,
        part: style('header.topbar .wordmark-part').color,
        titleFont: style('.information-container .title').fontFamily,
        pathFont: style('.opblock-summary-path').fontFamily,
        swaggerMain: style('#swagger-ui main').maxWidth,
        example: style('#swagger-ui main button').backgroundColor,
      };
    })()`)) as { bar: string; part: string; titleFont: string; pathFont: string; swaggerMain: string; example: string };
    assert.ok(contrast('rgb(255, 255, 255)', look.bar) >= 7, `the top bar (${look.bar}) is not dark`);
    assert.ok(contrast(look.part, look.bar) >= 4.5, `the top bar's "API docs" (${look.part} on ${look.bar}) is below WCAG AA`);
    assert.match(look.titleFont, /^system-ui\b/, `the API's title is set in ${look.titleFont}, not the system font stack`);
    assert.match(look.pathFont, /monospace/, `the operations' paths lost their monospace: ${look.pathFont}`);
    // Swagger UI has a <main> of its own: the console's rules for <main> and what is in it must not reach it.
    assert.equal(look.swaggerMain, 'none', "the console's <main> width reached Swagger UI's");
    assert.notEqual(look.example, 'rgb(255, 255, 255)', "the console's button style reached Swagger UI's buttons");
  });

  step('sends GET /api/v0/hello from the page and shows 200 with "World"', async () => {
    const { status, body } = await execute('GET', '/api/v0/hello');
    assert.equal(status, '200', `the page shows status ${status}: ${body}`);
    assert.match(body, /World/, `the response body shown does not greet the World: ${body}`);
  });

  step('authorizes with a username and API key, then shows the account from GET /api/v0/user', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    const form = page.locator('.modal-ux .auth-container').filter({ hasText: 'basicAuth' });
    await form.locator('input[type="text"]').fill(alice.username);
    await form.locator('input[type="password"]').fill(alice.key);
    await form.locator('button.authorize').click();
    // Once authorized the form reads "Logout" and shows the username, never the key.
    await form.locator('button', { hasText: 'Logout' }).waitFor();
    assert.equal(await form.locator('input[type="password"]').count(), 0, 'the key field is still shown after authorizing');
    await page.locator('.modal-ux button.btn-done').click();
    await page.locator('.modal-ux').waitFor({ state: 'detached' });

    const { status, body } = await execute('GET', '/api/v0/user');
    assert.equal(status, '200', `the page shows status ${status}: ${body}`);
    const data = JSON.parse(body).data;
    assert.equal(data.username, alice.username, `the response body shown is not alice's account: ${body}`);
    assert.equal(data.name, NAME, `the response body shown does not carry alice's name: ${body}`);
  });

  step('an open operation is named in the address (a deep link), while its path inside the button that opens it is no link', async () => {
    assert.match(page.url(), /#\/User\/getUser$/, `the address does not name the operation opened last: ${page.url()}`);
    assert.equal(await page.locator('.opblock-summary-control a[href], .opblock-summary-control button').count(), 0, 'a control inside the button that opens an operation');
    assert.equal(await page.getByLabel('Servers', { exact: true }).count(), 1, 'the servers list has no label "Servers"');
  });

  step('axe-core finds no moderate, serious or critical accessibility violation, with operations open and an answer shown', async () => {
    // Evaluated through the browser's debugging protocol, which the page's policy does not govern (an inline tag would be blocked).
    await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`,
    )) as { id: string; impact: string; nodes: string[] }[];
    const found = violations.filter((violation) => ['moderate', 'serious', 'critical'].includes(violation.impact));
    assert.deepEqual(found, [], `axe-core found ${JSON.stringify(found, null, 1)}`);
  });

  step('no heading is shown twice: the Webhooks tag of the paths and the OpenAPI webhooks section are told apart', async () => {
    // The page's sections: the API's title, each tag, the webhooks and the schemas (not the Responses of every operation).
    const headings = (await page.locator('h1, h2, h3').allInnerTexts()).map((text) => text.trim().split('\n')[0]!).filter((text) => text !== '');
    const repeated = headings.filter((text, index) => headings.indexOf(text) !== index);
    assert.deepEqual(repeated, [], `headings shown more than once: ${JSON.stringify(repeated)} (all: ${JSON.stringify(headings)})`);
  });

  step('loads everything from this server and breaks no Content Security Policy', () => {
    const outside = requests.filter((url) => !url.startsWith(`${server.url}/`));
    assert.deepEqual(outside, [], `the page asked for something outside ${server.url}`);
    for (const call of ['/api/v0/hello', '/api/v0/user']) {
      assert.ok(requests.includes(`${server.url}${call}`), `the page never sent ${call}; it asked for ${requests.join(', ')}`);
    }
    const blocked = consoleErrors.filter((text) => /Content Security Policy|CSP violation/i.test(text));
    assert.deepEqual(blocked, [], "the Content Security Policy blocked part of the page (/docs's policy is set in src/http/wire/openapi.ts)");
    assert.deepEqual(pageErrors, [], 'the page threw');
  });

  step('saves a screenshot of the page with both answers', async () => {
    await screenshot(SCREENSHOT);
    assert.ok(existsSync(SCREENSHOT), `no screenshot at ${SCREENSHOT}`);
  });
});
