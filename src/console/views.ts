// The console's pages from Eta templates (src/console/views/*.eta): escaped by default, compiled once, each inside layout.eta.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Eta } from 'eta';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ASSET_URLS } from './assets.ts';
import { timeElement, valueElement } from './times.ts';

const VIEWS = join(dirname(fileURLToPath(import.meta.url)), 'views');

/** The sections of the top bar; a page names the one it belongs to. */
export type Section = 'accounts' | 'audit' | 'webhooks' | null;

/**
 * Fixed texts a redirect may ask a page to show (?notice=...): never text taken from the address. A Map, so that only these
 * are found (an object would also answer ?notice=constructor with one of its built-in properties).
 */
const NOTICES: ReadonlyMap<string, string> = new Map(Object.entries({
  created: 'The account was created.',
  saved: 'The account was saved.',
  deleted: 'The account was deleted, with its keys.',
  revoked: 'The key was revoked; servers refuse it from the next request.',
  enabled: 'The endpoint was enabled; its pending deliveries resume.',
  disabled: 'The endpoint was disabled; no delivery is sent to it until it is enabled.',
  removed: 'The endpoint was removed, with its pending deliveries.',
  redelivered: 'The event is queued again.',
  'signed-out': 'You are signed out.',
  expired: 'Your session ended; sign in again.',
  'two-sessions':
    'Your browser sent two console session cookies, so neither was used: another site under the same domain may have set one. ' +
    'Sign in again; if you are sent back here, delete the cookies of this site and its parent domain, and serve the console over HTTPS, ' +
    'where no other site can set its cookie.',
}));

export function noticeOf(request: FastifyRequest): string | null {
  const notice = (request.query as { notice?: unknown } | undefined)?.notice;
  return typeof notice === 'string' ? (NOTICES.get(notice) ?? null) : null;
}

export interface PageData {
  readonly title: string;
  readonly section: Section;
  readonly [field: string]: unknown;
}

export class ConsoleViews {
  readonly #eta = new Eta({ views: VIEWS, cache: true, autoEscape: true, autoTrim: [false, 'nl'] });

  /** Renders `template` for this request: its session's form proof and the notice asked for go to every page. */
  send(request: FastifyRequest, reply: FastifyReply, template: string, data: PageData, status = 200): FastifyReply {
    const html = this.#eta.render(template, {
      ...data,
      assets: ASSET_URLS,
      // Every instant a page shows goes through these (<%~ it.time(...) %>): a readable text, the exact instant kept.
      time: timeElement,
      value: valueElement,
      signedIn: request.consoleSession !== null,
      csrf: request.consoleSession?.csrfToken ?? '',
      notice: data.notice ?? noticeOf(request),
    });
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  }
}
