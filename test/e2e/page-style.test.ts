// Protects the shared look (src/page-style/) in headless Chromium: on a page using every selector the console's templates use,
// all text meets WCAG AA contrast, keyboard focus is visible, motion stops when asked, nothing is fetched, narrow screens scroll tables only.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { HANG_MS } from '../support/eventually.ts';
import { REPO_ROOT } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../support/chromium.ts';
import { SERVICE_NAME, STYLESHEET, WORDMARK } from '../../src/page-style/page-style.ts';

const RESULTS = join(REPO_ROOT, 'test-results');

const { after, before, describe, test } = requiring(chromiumSkip);

const WORDMARK_DATA = `data:image/svg+xml;base64,${WORDMARK.toString('base64')}`;

/** A console page as its templates are written (the selectors listed in src/page-style/style.css), every one of them used. */
const FIXTURE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Keys · account-api console</title><style>${STYLESHEET}</style></head>
<body>
<header class="topbar">
  <a class="wordmark" href="#"><img src="${WORDMARK_DATA}" alt="${SERVICE_NAME}"><span class="wordmark-part">console</span></a>
  <nav class="mainnav" aria-label="Main"><ul>
    <li><a href="#" aria-current="page">Accounts</a></li><li><a href="#">Audit trail</a></li><li><a href="#">Webhooks</a></li>
  </ul></nav>
  <form class="signout"><button type="button">Sign out</button></form>
</header>
<main>
  <h1>Keys of alice</h1>
  <p class="lede">Every key of this account, its scope and when it was last used.</p>
  <div class="notice" role="status">Key k_1 revoked.</div>
  <div class="error-box" role="alert">The timezone Mars/Olympus is not in the list.</div>
  <div class="warning">This key expires in 2 days.</div>
  <dl class="facts"><dt>Username</dt><dd><code>alice</code></dd><dt>Premium</dt><dd>yes <span class="muted">(since 2026-01-02)</span></dd></dl>
  <h2>Keys</h2>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Keys"><table class="list">
    <thead><tr><th>Key id</th><th>State</th><th class="num">Requests</th><th>Last used</th><th>Expires</th><th>Scope</th></tr></thead>
    <tbody>
      <tr><td><code>k_1</code></td><td><span class="badge badge-active">active</span></td><td class="num">1,204</td><td>2026-11-26 10:00</td><td>never</td><td>read, write</td></tr>
      <tr><td><code>k_2</code></td><td><span class="badge badge-revoked">revoked</span></td><td class="num">7</td><td>2026-11-20 09:13</td><td>never</td><td>read</td></tr>
      <tr><td><code>k_3</code></td><td><span class="badge badge-expired">expired</span></td><td class="num">0</td><td class="muted">never</td><td>2026-10-01</td><td>read</td></tr>
      <tr><td><code>k_4</code></td><td><span class="badge badge-disabled">disabled</span></td><td class="num">12</td><td>2026-11-01 12:00</td><td>never</td><td>read</td></tr>
      <tr><td><code>d_1</code></td><td><span class="badge badge-ok">delivered</span> <span class="badge badge-failed">failed</span> <span class="badge">pending</span></td><td class="num">3</td><td>2026-11-26 10:01</td><td>never</td><td>webhook</td></tr>
    </tbody>
  </table></div>
  <nav class="pager" aria-label="Pages"><a href="#" rel="prev">Previous</a><a href="#" rel="next">Next</a></nav>
  <form class="inline" role="search"><label for="q">Username</label><input id="q" type="search" name="q"><button type="button">Search</button></form>
  <form class="stack">
    <label for="name">Name <span class="hint">As it appears in the account's settings.</span></label><input id="name" type="text">
    <label for="secret">Admin token</label><input id="secret" type="password">
    <label for="from">From</label><input id="from" type="datetime-local">
    <label for="url">Receiver URL</label><input id="url" type="url"><p class="hint">https:// on a public address.</p>
    <label for="tz">Timezone</label><select id="tz"><option>Europe/Paris</option><option>UTC</option></select>
    <fieldset><legend>Scope</legend><label class="check"><input type="checkbox" checked> read</label><label class="check"><input type="checkbox"> write</label></fieldset>
    <label class="check"><input type="checkbox"> Premium</label>
    <div><button type="button" class="primary">Issue key</button> <button type="button">Cancel</button> <a class="button" href="#">Back to accounts</a></div>
  </form>
  <div class="secret"><code>aapi_live_3f9a1c0d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5</code><button type="button" class="copy">Copy</button></div>
  <div class="confirm"><p>Revoking <code>k_1</code> <strong>refuses every request made with it from now on</strong>.</p>
    <form><button type="button" class="danger">Revoke k_1</button><a class="button" href="#">Keep it</a></form></div>
  <figure class="chart"><div class="chart-area"><canvas aria-hidden="true"></canvas></div><figcaption>Requests per day over the last 30 days, by outcome<span class="visually-hidden">: see the table below</span></figcaption></figure>
</main>
</body></html>`;

let browser: Browser;
let page: Page;
const requests: string[] = [];

/** Each visible piece of text on the page, with its colour, the colour behind it and whether WCAG counts it as large. */
const TEXT_COLOURS = `(() => {
  const opaque = (colour) => !/^rgba\\(.*,\\s*0\\)$/.test(colour) && colour !== 'transparent';
  const behind = (element) => {
    for (let at = element; at; at = at.parentElement) {
      const background = getComputedStyle(at).backgroundColor;
      if (opaque(background)) return background;
    }
    return 'rgb(255, 255, 255)';
  };
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (node.textContent.trim() === '' || element.closest('.visually-hidden, :disabled')) continue;
    const style = getComputedStyle(element);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    found.push({ text: node.textContent.trim().slice(0, 40), tag: element.tagName.toLowerCase() + (element.className ? '.' + element.className : ''), colour: style.color, background: behind(element), large });
  }
  return found;
})()`;

/** WCAG 2's contrast ratio of two computed colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, b] = colour.match(/[\d.]+/g)!.slice(0, 3).map((part) => {
      const c = Number(part) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

describe('the shared look on a console-like page in a real browser', () => {
  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(HANG_MS);
    page.on('request', (request) => requests.push(request.url()));
    await page.setContent(FIXTURE, { waitUntil: 'load' });
  });

  after(async () => {
    await browser?.close();
  });

  test('asks for nothing: no web fonts, no @import, no url() in the stylesheet, no link in the wordmark', () => {
    assert.doesNotMatch(STYLESHEET, /@import|@font-face|url\(/i, 'the stylesheet loads something');
    const wordmark = WORDMARK.toString('utf8');
    assert.doesNotMatch(wordmark, /href=|<script|<style|<image|@import|url\(/i, 'the wordmark loads or runs something');
    assert.deepEqual(requests.filter((url) => !url.startsWith('data:') && url !== 'about:blank'), [], 'the page asked for something');
  });

  test("the wordmark is an image named account-api, by role and title, and shows in the console's top bar", async () => {
    const wordmark = WORDMARK.toString('utf8');
    assert.match(wordmark, /^<svg[^>]*\brole="img"/, 'the wordmark has no role="img"');
    assert.match(wordmark, new RegExp(`<title>${SERVICE_NAME}</title>`), 'the wordmark has no <title> with the service name');
    const image = page.locator('header.topbar a.wordmark').getByRole('img', { name: SERVICE_NAME, exact: true });
    assert.ok(await image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth > 0), 'the wordmark did not draw');
    const link = await page.locator('a.wordmark').evaluate((element) => element.getBoundingClientRect().height);
    assert.ok(link > 0 && link < 64, `the wordmark is ${link}px tall`);
  });

  test('every piece of text meets WCAG AA contrast against what is behind it (4.5:1, 3:1 when large)', async () => {
    const texts = (await page.evaluate(TEXT_COLOURS)) as { text: string; tag: string; colour: string; background: string; large: boolean }[];
    assert.ok(texts.length > 60, `found only ${texts.length} pieces of text: the walk over the page has drifted`);
    const failing = texts
      .map((text) => ({ ...text, ratio: Math.round(contrast(text.colour, text.background) * 100) / 100 }))
      .filter(({ ratio, large }) => ratio < (large ? 3 : 4.5));
    assert.deepEqual(failing, [], 'text below WCAG AA');
  });

  test('every control shows a focus ring when reached by keyboard, of 2px or more and 3:1 against the page around it', async () => {
    await page.locator('body').focus();
    const seen: string[] = [];
    // A date field takes several Tabs (one per part), so a control met again is passed over; back at the first, the walk ends.
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      const ring = (await page.evaluate(`(() => {
        const element = document.activeElement;
        if (!element || element === document.body) return null;
        const style = getComputedStyle(element);
        let background = 'rgb(255, 255, 255)';
        for (let at = element.parentElement; at; at = at.parentElement) {
          const colour = getComputedStyle(at).backgroundColor;
          if (colour !== 'transparent' && !/,\\s*0\\)$/.test(colour)) { background = colour; break; }
        }
        return { what: element.outerHTML.slice(0, 60), focusVisible: element.matches(':focus-visible'), style: style.outlineStyle, width: parseFloat(style.outlineWidth), colour: style.outlineColor, background };
      })()`)) as { what: string; focusVisible: boolean; style: string; width: number; colour: string; background: string } | null;
      if (ring === null || ring.what === seen[0]) break;
      if (seen.includes(ring.what)) continue;
      seen.push(ring.what);
      assert.ok(ring.focusVisible, `${ring.what} is focused by keyboard but not :focus-visible`);
      assert.notEqual(ring.style, 'none', `${ring.what} shows no outline when focused`);
      assert.ok(ring.width >= 2, `${ring.what}'s focus outline is ${ring.width}px`);
      assert.ok(contrast(ring.colour, ring.background) >= 3, `${ring.what}'s focus outline ${ring.colour} on ${ring.background} is below 3:1`);
    }
    assert.ok(seen.length >= 20, `the keyboard reached only ${seen.length} controls: ${seen.join(' | ')}`);
  });

  test('stops transitions and animations for a reader who asked for reduced motion', async () => {
    await page.emulateMedia({ reducedMotion: 'reduce' });
    const duration = await page.evaluate(`(() => {
      const button = document.querySelector('main button');
      button.style.transition = 'background-color 2s';
      return parseFloat(getComputedStyle(button).transitionDuration);
    })()`);
    assert.ok((duration as number) < 0.001, `a 2s transition lasts ${duration}s with reduced motion`);
    await page.emulateMedia({ reducedMotion: 'no-preference' });
  });

  test('on a phone-wide screen only the table scrolls sideways, and the chart keeps its height', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    const layout = (await page.evaluate(`(() => {
      const wrap = document.querySelector('div.table-wrap');
      return {
        page: document.documentElement.scrollWidth, viewport: innerWidth,
        wrapScrolls: wrap.scrollWidth > wrap.clientWidth, wrapOverflow: getComputedStyle(wrap).overflowX,
        chart: document.querySelector('figure.chart canvas').getBoundingClientRect().height,
      };
    })()`)) as { page: number; viewport: number; wrapScrolls: boolean; wrapOverflow: string; chart: number };
    assert.ok(layout.page <= layout.viewport, `the page is ${layout.page}px wide on a ${layout.viewport}px screen`);
    assert.equal(layout.wrapOverflow, 'auto');
    assert.ok(layout.wrapScrolls, 'the table fits a 360px screen: the scroll check proves nothing');
    assert.ok(layout.chart >= 200 && layout.chart <= 320, `the chart is ${layout.chart}px tall`);
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: join(RESULTS, 'page-style-narrow.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(RESULTS, 'page-style.png'), fullPage: true });
    console.log(`page style screenshots: ${join(RESULTS, 'page-style.png')}, page-style-narrow.png`);
  });
});
