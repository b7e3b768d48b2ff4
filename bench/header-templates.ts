// Response headers the peers copy from the real service, so every server in the bench sends the same bytes, not just the same body.
import { readFileSync } from 'node:fs';
import type { CallId } from './calls.ts';

/** Header name and value pairs in the order the service sent them, minus those Node adds by itself. */
export type HeaderTemplate = readonly (readonly [name: string, value: string])[];
export type HeaderTemplates = Partial<Record<CallId, HeaderTemplate>>;

/** Written by node:http itself on every answer (keep-alive and length included), so never copied. */
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
/** Different on each answer: the ceiling computes them (request id, rate-limit counter, its own ETag). */
export const PER_REQUEST = new Set(['x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'etag']);
/** What a typical Express app would not send (no request ids, no rate limits): the peer leaves them out. */
const NOT_TYPICAL = new Set(['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']);

/** From `IncomingMessage.rawHeaders` (name, value, name, value...). */
export function templateFrom(rawHeaders: readonly string[]): HeaderTemplate {
  const pairs: (readonly [string, string])[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!ADDED_BY_NODE.has(name.toLowerCase())) pairs.push([name, rawHeaders[i + 1]!]);
  }
  return pairs;
}

const SECURITY: HeaderTemplate = [
  ['Content-Security-Policy', "default-src 'none';frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['x-request-id', ''],
  ['ratelimit-limit', '600'],
  ['ratelimit-remaining', ''],
  ['ratelimit-reset', ''],
];
const JSON_NO_STORE: HeaderTemplate = [...SECURITY, ['content-type', 'application/json; charset=utf-8'], ['cache-control', 'no-store']];
const LIST_CACHE: HeaderTemplate = [...SECURITY, ['etag', ''], ['cache-control', 'private, no-cache']];

/** What the service sent when this bench was written; used when the ceiling or the peer runs on its own. */
export const DEFAULT_TEMPLATES: Required<HeaderTemplates> = {
  hello: JSON_NO_STORE,
  'hello-auth': JSON_NO_STORE,
  user: JSON_NO_STORE,
  settings: JSON_NO_STORE,
  timezones: [...LIST_CACHE, ['content-type', 'application/json; charset=utf-8']],
  'timezones-304': LIST_CACHE,
  'post-settings': JSON_NO_STORE,
  'post-user': JSON_NO_STORE,
  'user-spread': JSON_NO_STORE,
};

/** The templates in `file` (written by the bench from live answers) over the defaults; the defaults alone without a file. */
export function loadTemplates(file: string | undefined): Required<HeaderTemplates> {
  if (file === undefined) return DEFAULT_TEMPLATES;
  const captured = JSON.parse(readFileSync(file, 'utf8')) as HeaderTemplates;
  return { ...DEFAULT_TEMPLATES, ...captured };
}

/** The fixed headers a typical Express app sends for this answer (what helmet and its own route code would set). */
export function typicalHeaders(template: HeaderTemplate): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of template) {
    const lower = name.toLowerCase();
    if (!NOT_TYPICAL.has(lower) && lower !== 'etag') headers[name] = value;
  }
  return headers;
}
