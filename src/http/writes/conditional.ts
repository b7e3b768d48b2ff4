// Conditional requests on the caller's account: the ETag a GET answers with, its 304, and the If-Match a POST is checked against.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../store/store.ts';
import { success, type SuccessEnvelope } from '../wire/envelope.ts';
import { matchesEtag } from '../wire/etag.ts';

/**
 * A strong validator of an answer's data: it changes exactly when the data would, and names the same data alike on every
 * instance. Strong, because If-Match compares strongly (RFC 9110 §13.1.1) and these answers are never sent compressed.
 */
export function entityTag(data: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(data)).digest('base64url').slice(0, 27)}"`;
}

/** An answer's data and the ETag naming it. */
export interface Tagged<T> {
  readonly data: T;
  readonly etag: string;
}

/**
 * One view of accounts (what GET /user shows, say) with its ETag. The tag is remembered per Account object: accounts are
 * immutable values, and the credential cache hands the same object to every request until the account changes, so a GET
 * hashes an account once rather than on every request.
 */
export function taggedView<T>(view: (account: Account) => T): (account: Account) => Tagged<T> {
  const tags = new WeakMap<Account, string>();
  return (account) => {
    const data = view(account);
    let etag = tags.get(account);
    if (etag === undefined) {
      etag = entityTag(data);
      tags.set(account, etag);
    }
    return { data, etag };
  };
}

/** One element of a list: empty, or an entity-tag (optional W/, then a quoted opaque tag, which may itself hold commas). */
const LIST_ELEMENT = String.raw`[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)`;

/** The entity-tags of an If-Match list, or null when the field is not one (RFC 9110 §13.1.1 and §5.6.1). */
function parseTags(field: string): { readonly weak: boolean; readonly opaque: string }[] | null {
  const tags: { weak: boolean; opaque: string }[] = [];
  const element = new RegExp(LIST_ELEMENT, 'y');
  while (element.lastIndex < field.length) {
    const start = element.lastIndex;
    const match = element.exec(field);
    if (match === null || element.lastIndex === start) return null;
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
  }
  return tags.length > 0 ? tags : null;
}

/**
 * Whether If-Match lets a write go ahead over the current version: `*` always (the account exists, or the write fails anyway),
 * else when it names the current tag by strong comparison; a weak tag never matches. A field that is neither `*` nor a list
 * of entity-tags names no version, so it never matches either: the write is refused (412), never made blindly.
 */
export function ifMatchHolds(ifMatch: string, currentTag: string): boolean {
  if (ifMatch.trim() === '*') return true;
  const current = currentTag.slice(1, -1);
  return parseTags(ifMatch)?.some((tag) => !tag.weak && tag.opaque === current) ?? false;
}

/**
 * Answers a GET with `data` and its ETag, or a bodiless 304 when If-None-Match names it. Cache-Control stays no-store (the
 * answer is account data, which no shared or browser cache should keep): the client that keeps it keeps its ETag too.
 * For synchronous handlers: the 304 is sent here and undefined returned, as Fastify wants of a handler that is not async
 * (returning the reply would have it sent a second time).
 */
export function answerConditionally<T>(request: FastifyRequest, reply: FastifyReply, answer: Tagged<T>): SuccessEnvelope<T> | undefined {
  reply.header('ETag', answer.etag);
  if (matchesEtag(request.headers['if-none-match'], answer.etag)) {
    reply.code(304).send();
    return undefined;
  }
  return success(answer.data);
}
