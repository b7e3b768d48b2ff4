// How the /docs page wears the project's shared look (src/page-style/): our stylesheet as Swagger UI's theme, our wordmark in its top bar.
import type { FastifyInstance } from 'fastify';
import { SERVICE_NAME, STYLESHEET, WORDMARK, WORDMARK_TYPE } from '../../page-style/page-style.ts';

/** Where the page finds them; @fastify/swagger-ui serves theme files under {routePrefix}/static/theme/. */
export const DOCS_STYLESHEET_URL = '/docs/static/theme/account-api.css';
export const DOCS_WORDMARK_URL = '/docs/static/theme/wordmark.svg';

/** What the browser tab says. */
export const DOCS_TITLE = `${SERVICE_NAME} · API docs`;

type SwaggerSystem = { React: { createElement: (type: unknown, props: object | null, ...children: unknown[]) => unknown; Fragment: unknown } };

/**
 * A Swagger UI plugin putting our wordmark where its logo was, from the first render: no flash of Swagger's logo, and none of
 * its inline <style> (so the page's policy needs no hash for it). @fastify/swagger-ui sends uiConfig to the browser as source
 * text (its lib/serialize.js), so this function names nothing outside itself: the URL and the name are written out, and
 * test/unit/http/wire/docs-look.test.ts checks they match the constants above.
 */
export function wordmarkInTopBar(system: SwaggerSystem) {
  const h = system.React.createElement;
  return {
    components: {
      Logo: () =>
        h(
          system.React.Fragment,
          null,
          h('img', { src: '/docs/static/theme/wordmark.svg', alt: 'account-api', height: 28, className: 'wordmark-image' }),
          h('span', { className: 'wordmark-part' }, 'API docs'),
        ),
    },
  };
}

/** @fastify/swagger-ui's options for the look; the wordmark's own route is added by `serveWordmark`. */
export const docsLook = {
  // null, not undefined: undefined makes the plugin swap Swagger's logo in after the first render, as an <img> with no alt.
  logo: null as never,
  theme: { title: DOCS_TITLE, css: [{ filename: DOCS_STYLESHEET_URL.split('/').pop()!, content: STYLESHEET }] },
  plugins: [wordmarkInTopBar],
};

/** The wordmark, beside the theme's stylesheet: @fastify/swagger-ui's theme serves CSS, scripts and favicons only. */
export function serveWordmark(docs: FastifyInstance): void {
  docs.get(DOCS_WORDMARK_URL, { schema: { hide: true } }, (_request, reply) => reply.type(WORDMARK_TYPE).send(WORDMARK));
}
