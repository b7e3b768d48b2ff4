// The console's static files, all served by the admin listener itself (nothing from another host): the shared stylesheet and
// wordmark and icon, our script, and the two libraries the pages use, read once at start and named by their content's hash.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ICON, ICON_TYPE, STYLESHEET, WORDMARK, WORDMARK_TYPE } from '../page-style/page-style.ts';

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  /** `/console/assets/<name>?v=<hash>`: a new release is a new address, so a year's caching is safe. */
  readonly url: string;
}

function asset(name: string, type: string, body: Buffer): [string, Asset] {
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 10);
  return [name, { type, body, url: `/console/assets/${name}?v=${version}` }];
}

const JS = 'text/javascript; charset=utf-8';

/**
 * htmx (the account search as you type) and Chart.js (a key's usage), both from npm, so `npm install` brings them and the
 * console works on a machine with no internet; console.js is ours (the copy button, drawing the chart from its table).
 */
const ASSETS: ReadonlyMap<string, Asset> = new Map([
  asset('style.css', 'text/css; charset=utf-8', Buffer.from(STYLESHEET)),
  asset('wordmark.svg', WORDMARK_TYPE, Buffer.from(WORDMARK)),
  asset('icon.svg', ICON_TYPE, Buffer.from(ICON)),
  asset('console.js', JS, readFileSync(join(HERE, 'console.js'))),
  asset('htmx.min.js', JS, readFileSync(join(dirname(require.resolve('htmx.org')), 'htmx.min.js'))),
  asset('chart.umd.min.js', JS, readFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'))),
]);

/** Each asset's address, for the templates. */
export const ASSET_URLS: Readonly<Record<string, string>> = Object.fromEntries([...ASSETS].map(([name, { url }]) => [name, url]));

export async function consoleAssets(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { name: string } }>('/assets/:name', (request, reply) => {
    const found = ASSETS.get(request.params.name);
    if (found === undefined) return reply.callNotFound();
    return reply.header('Cache-Control', 'public, max-age=31536000, immutable').type(found.type).send(found.body);
  });
}
