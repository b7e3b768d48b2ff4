// Protects how /docs wears the shared look (src/http/wire/docs-look.ts): the top bar plugin reaches the browser whole, as text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOCS_ICON_URL, DOCS_STYLESHEET_URL, DOCS_WORDMARK_URL, docsLook, labelledControls, ourTopBar } from '../../../../src/http/wire/docs-look.ts';
import { ICON, ICON_TYPE, SERVICE_NAME, STYLESHEET } from '../../../../src/page-style/page-style.ts';

type Element = { type: unknown; props: Record<string, unknown> | null; children: unknown[] };

/** A stand-in for Swagger UI's system: createElement records what it was asked to draw. */
const FRAGMENT = Symbol('Fragment');
const system = {
  React: {
    Fragment: FRAGMENT,
    createElement: (type: unknown, props: object | null, ...children: unknown[]): Element => ({ type, props: props as Element['props'], children }),
  },
};

test('the top bar plugin works from its source text alone, as @fastify/swagger-ui sends it: a banner with an img named account-api and no URL box', () => {
  // Rebuilt from its text, as the browser gets it: a name it borrowed from this module would throw here.
  const rebuilt = new Function(`return (${String(ourTopBar)})`)() as typeof ourTopBar;
  const asked: string[] = [];
  const getComponent = (name: string) => {
    asked.push(name);
    return name;
  };
  const bar = (rebuilt(system) as { components: { Topbar: (props: { getComponent: typeof getComponent }) => Element } }).components.Topbar({ getComponent });
  assert.equal(bar.type, 'header');
  assert.equal(bar.props!.role, 'banner');
  assert.equal(bar.props!.className, 'topbar');
  // Everything drawn, flattened: the wordmark, its part, the dark-mode switch, and nothing Swagger's bar had besides.
  const drawn: Element[] = [];
  const walk = (element: Element) => {
    drawn.push(element);
    for (const child of element.children) if (typeof child === 'object' && child !== null) walk(child as Element);
  };
  walk(bar);
  const image = drawn.find((element) => element.type === 'img')!;
  assert.equal(image.props!.src, DOCS_WORDMARK_URL, 'the plugin draws the wordmark from another URL than the one served');
  assert.equal(image.props!.alt, SERVICE_NAME, "the wordmark's text alternative is not the service's name");
  assert.equal(drawn.find((element) => element.props?.className === 'wordmark-part')?.children[0], 'API docs');
  assert.deepEqual(asked, ['DarkModeToggle']);
  assert.ok(drawn.some((element) => element.type === 'DarkModeToggle'), 'the dark-mode switch is gone');
  assert.deepEqual(drawn.filter((element) => ['input', 'form', 'select'].includes(element.type as string)), [], 'the top bar has a form control');
});

test('the labelled-controls plugin works from its source text alone: the servers list gets a label, and a path is no link in its button', () => {
  const rebuilt = new Function(`return (${String(labelledControls)})`)() as typeof labelledControls;
  const plugin = rebuilt(system) as unknown as {
    components: { ServersContainer: (props: object) => Element | null };
    wrapComponents: { OperationSummaryPath: (original: unknown) => (props: object) => Element };
  };
  const servers = { size: 2 };
  const props = {
    getComponent: (name: string) => name,
    specSelectors: { servers: () => servers },
    oas3Selectors: { selectedServer: () => '/', serverVariableValue: 'variable', serverEffectiveValue: 'effective' },
    oas3Actions: { setSelectedServer: 'select', setServerVariableValue: 'setVariable' },
  };
  const drawn = plugin.components.ServersContainer(props)!;
  const [label, list] = drawn.children as Element[];
  assert.deepEqual([label!.type, label!.props, label!.children], ['label', { className: 'servers-title', htmlFor: 'servers' }, ['Servers']]);
  assert.equal(list!.type, 'Servers');
  assert.deepEqual(list!.props, {
    servers,
    currentServer: '/',
    setSelectedServer: 'select',
    setServerVariableValue: 'setVariable',
    getServerVariable: 'variable',
    getEffectiveServerValue: 'effective',
  });
  assert.equal(plugin.components.ServersContainer({ ...props, specSelectors: { servers: () => ({ size: 0 }) } }), null, 'no servers, no list');

  const sets: [string, unknown][] = [];
  const operationProps = { set: (key: string, value: unknown) => (sets.push([key, value]), 'changed'), other: true };
  const path = plugin.wrapComponents.OperationSummaryPath('Original')({ operationProps, getComponent: 'g' });
  assert.equal(path.type, 'Original');
  assert.deepEqual(path.props, { operationProps: 'changed', getComponent: 'g' });
  assert.deepEqual(sets, [['isDeepLinkingEnabled', false]]);
});

test("the theme's stylesheet is the shared one, served under the docs page's theme folder, and Swagger's logo is switched off", () => {
  assert.deepEqual(docsLook.theme.css, [{ filename: 'account-api.css', content: STYLESHEET }]);
  assert.equal(DOCS_STYLESHEET_URL, '/docs/static/theme/account-api.css');
  // undefined would make @fastify/swagger-ui read its own logo.svg and swap it in after the first render.
  assert.equal(docsLook.logo, null);
  assert.ok(docsLook.theme.title.startsWith(SERVICE_NAME));
});

test("the tab's icon is the shared one, served under the theme folder, in place of Swagger's", () => {
  assert.deepEqual(docsLook.theme.favicon, [{ filename: 'icon.svg', rel: 'icon', type: ICON_TYPE, sizes: 'any', content: ICON }]);
  assert.equal(DOCS_ICON_URL, '/docs/static/theme/icon.svg');
});
