// How the /docs page wears the project's shared look (src/page-style/): our stylesheet as Swagger UI's theme, our top bar with
// our wordmark, our icon on the tab.
import type { FastifyInstance } from 'fastify';
import { ICON, ICON_TYPE, SERVICE_NAME, STYLESHEET, WORDMARK, WORDMARK_TYPE } from '../../page-style/page-style.ts';

/** Where the page finds them; @fastify/swagger-ui serves theme files under {routePrefix}/static/theme/. */
export const DOCS_STYLESHEET_URL = '/docs/static/theme/account-api.css';
export const DOCS_WORDMARK_URL = '/docs/static/theme/wordmark.svg';
export const DOCS_ICON_URL = '/docs/static/theme/icon.svg';

/** What the browser tab says. */
export const DOCS_TITLE = `${SERVICE_NAME} · API docs`;

type SwaggerSystem = { React: { createElement: (type: unknown, props: object | null, ...children: unknown[]) => unknown; Fragment: unknown } };
type SwaggerProps = { getComponent: (name: string) => unknown };

/**
 * A Swagger UI plugin drawing our top bar: our wordmark where its logo was, from the first render (no flash of Swagger's logo,
 * and none of its inline <style>, so the page's policy needs no hash for it), and its dark-mode switch. Swagger's bar also has
 * a box for loading another API's document by URL: not this page's business, and a control with no label (axe: critical).
 * @fastify/swagger-ui sends uiConfig to the browser as source text (its lib/serialize.js), so this function names nothing
 * outside itself: the URL and the name are written out, and test/unit/http/wire/docs-look.test.ts checks they match the
 * constants above.
 */
export function ourTopBar(system: SwaggerSystem) {
  const h = system.React.createElement;
  return {
    components: {
      Topbar: ({ getComponent }: SwaggerProps) =>
        h(
          'header',
          { className: 'topbar', role: 'banner' },
          h(
            'div',
            { className: 'wrapper' },
            h(
              'div',
              { className: 'topbar-wrapper' },
              h(
                'a',
                { className: 'link', href: '/docs' },
                h('img', { src: '/docs/static/theme/wordmark.svg', alt: 'account-api', height: 28, className: 'wordmark-image' }),
                h('span', { className: 'wordmark-part' }, 'API docs'),
              ),
              h(getComponent('DarkModeToggle'), null),
            ),
          ),
        ),
    },
  };
}

type ImmutableMap = { set: (key: string, value: unknown) => ImmutableMap };
type ServersProps = SwaggerProps & {
  specSelectors: { servers: () => { size: number } | undefined };
  oas3Selectors: { selectedServer: () => unknown; serverVariableValue: unknown; serverEffectiveValue: unknown };
  oas3Actions: { setSelectedServer: unknown; setServerVariableValue: unknown };
};

/**
 * A Swagger UI plugin mending what axe-core finds serious or critical in Swagger's own markup (test/e2e/docs-page.test.ts):
 * the servers list had no label (its title was a <span>), and each operation's path was a link inside the button that opens
 * it (a control inside a control). The path stays plain text there; deep links (the address naming the open operation) still
 * work. Sent as source text like the top bar, so it names nothing outside itself.
 */
export function labelledControls(system: SwaggerSystem) {
  const h = system.React.createElement;
  return {
    components: {
      // As Swagger's own container, with the title a <label> of the select Swagger draws with id "servers".
      ServersContainer: ({ specSelectors, oas3Selectors, oas3Actions, getComponent }: ServersProps) => {
        const servers = specSelectors.servers();
        if (servers === undefined || servers.size === 0) return null;
        return h(
          'section',
          { 'aria-label': 'Choose a server' },
          h('label', { className: 'servers-title', htmlFor: 'servers' }, 'Servers'),
          h(getComponent('Servers'), {
            servers,
            currentServer: oas3Selectors.selectedServer(),
            setSelectedServer: oas3Actions.setSelectedServer,
            setServerVariableValue: oas3Actions.setServerVariableValue,
            getServerVariable: oas3Selectors.serverVariableValue,
            getEffectiveServerValue: oas3Selectors.serverEffectiveValue,
          }),
        );
      },
    },
    wrapComponents: {
      OperationSummaryPath:
        (Original: unknown) =>
        (props: { operationProps: ImmutableMap }) =>
          h(Original, { ...props, operationProps: props.operationProps.set('isDeepLinkingEnabled', false) }),
    },
  };
}

type Element = { querySelectorAll: (selector: string) => Iterable<{ setAttribute: (name: string, value: string) => void }> } | null;

/**
 * A Swagger UI plugin mending what axe-core finds moderate in Swagger's page structure (test/e2e/docs-page.test.ts): content
 * outside any landmark (the API's description, the servers and authorisation bar), heading levels that skip one (the title is
 * an h1, the tags h3; the Schemas h4 follows the Webhooks h2), and each operation's responses table an unnamed region like every
 * other. Levels are mended with aria-level and a heading for the operations read by assistive technology alone, so the page
 * looks as before. Sent as source text like the top bar, so it names nothing outside itself.
 */
export function pageStructure(system: SwaggerSystem) {
  const h = system.React.createElement;
  const region = (label: string) => (Original: unknown) => (props: object) => h('section', { 'aria-label': label }, h(Original, props));
  const visuallyHidden = { position: 'absolute', width: '1px', height: '1px', overflow: 'hidden', clip: 'rect(0 0 0 0)', whiteSpace: 'nowrap' };
  return {
    wrapComponents: {
      InfoContainer: region('About this API'),
      AuthorizeBtnContainer: region('Authorization'),
      operations: (Original: unknown) => (props: object) =>
        h(system.React.Fragment, null, h('h2', { style: visuallyHidden }, 'Operations'), h(Original, props)),
      Models: (Original: unknown) => (props: object) =>
        h('div', { ref: (element: Element) => { for (const heading of element?.querySelectorAll('.models > h4') ?? []) heading.setAttribute('aria-level', '2'); } }, h(Original, props)),
      responses: (Original: unknown) => (props: { method?: string; path?: string }) =>
        h(
          'div',
          {
            ref: (element: Element) => {
              for (const table of element?.querySelectorAll('table[role="region"]') ?? []) table.setAttribute('aria-label', `Responses of ${String(props.method).toUpperCase()} ${props.path}`);
            },
          },
          h(Original, props),
        ),
    },
  };
}

/** @fastify/swagger-ui's options for the look; the wordmark's own route is added by `serveWordmark`. */
export const docsLook = {
  // null, not undefined: undefined makes the plugin swap Swagger's logo in after the first render, as an <img> with no alt.
  logo: null as never,
  theme: {
    title: DOCS_TITLE,
    css: [{ filename: DOCS_STYLESHEET_URL.split('/').pop()!, content: STYLESHEET }],
    // In place of Swagger's two PNGs: the plugin links only these when any are given.
    favicon: [{ filename: DOCS_ICON_URL.split('/').pop()!, rel: 'icon', type: ICON_TYPE, sizes: 'any', content: ICON }],
  },
  plugins: [ourTopBar, labelledControls, pageStructure],
};

/** The wordmark, beside the theme's stylesheet and icon: @fastify/swagger-ui's theme serves CSS, scripts and favicons only. */
export function serveWordmark(docs: FastifyInstance): void {
  docs.get(DOCS_WORDMARK_URL, { schema: { hide: true } }, (_request, reply) => reply.type(WORDMARK_TYPE).send(WORDMARK));
}
