// Protects how /docs wears the shared look (src/http/wire/docs-look.ts): the wordmark plugin reaches the browser whole, as text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOCS_STYLESHEET_URL, DOCS_WORDMARK_URL, docsLook, wordmarkInTopBar } from '../../../../src/http/wire/docs-look.ts';
import { SERVICE_NAME, STYLESHEET } from '../../../../src/page-style/page-style.ts';

type Element = { type: unknown; props: Record<string, unknown> | null; children: unknown[] };

/** A stand-in for Swagger UI's system: createElement records what it was asked to draw. */
const FRAGMENT = Symbol('Fragment');
const system = {
  React: {
    Fragment: FRAGMENT,
    createElement: (type: unknown, props: object | null, ...children: unknown[]): Element => ({ type, props: props as Element['props'], children }),
  },
};

test('the wordmark plugin works from its source text alone, as @fastify/swagger-ui sends it, and draws an img named account-api', () => {
  // Rebuilt from its text, as the browser gets it: a name it borrowed from this module would throw here.
  const rebuilt = new Function(`return (${String(wordmarkInTopBar)})`)() as typeof wordmarkInTopBar;
  const drawn = (rebuilt(system) as { components: { Logo: () => Element } }).components.Logo();
  assert.equal(drawn.type, FRAGMENT);
  const [image, part] = drawn.children as Element[];
  assert.equal(image!.type, 'img');
  assert.equal(image!.props!.src, DOCS_WORDMARK_URL, 'the plugin draws the wordmark from another URL than the one served');
  assert.equal(image!.props!.alt, SERVICE_NAME, "the wordmark's text alternative is not the service's name");
  assert.equal(part!.type, 'span');
  assert.equal(part!.props!.className, 'wordmark-part');
});

test("the theme's stylesheet is the shared one, served under the docs page's theme folder, and Swagger's logo is switched off", () => {
  assert.deepEqual(docsLook.theme.css, [{ filename: 'account-api.css', content: STYLESHEET }]);
  assert.equal(DOCS_STYLESHEET_URL, '/docs/static/theme/account-api.css');
  // undefined would make @fastify/swagger-ui read its own logo.svg and swap it in after the first render.
  assert.equal(docsLook.logo, null);
  assert.ok(docsLook.theme.title.startsWith(SERVICE_NAME));
});
