// Conditional requests on the caller's account: the ETag a GET answers with, its 304, and the If-Match a POST is checked against.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../store/store.ts';
import { success, type SuccessEnvelope } from '../wire/envelope.ts';
import { matchesEtag } from '../wire/etag.ts';

/** Strong, as If-Match compares strongly (RFC 9110 §13.1.1) and these answers are never compressed; alike on every instance. */
export function entityTag(data: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(data)).digest('base64url').slice(0, 27)}"`;
}

export interface Tagged<T> {
  readonly data: T;
  readonly etag: string;
}

/** Remembered per Account object: accounts are immutable and the credential cache shares them, so each is hashed once. */
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

/** Empty, or an entity-tag (optional W/, then a quoted opaque tag, which may hold commas). */
const LIST_ELEMENT = String.raw`[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)`;

/** Null when the field is not a list (RFC 9110 §13.1.1 and §5.6.1). */
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
 * `*` always; else the current tag by strong comparison (weak never matches). A field naming no version never matches:
 * refused (412), never written blindly.
 */
export function ifMatchHolds(ifMatch: string, currentTag: string): boolean {
  if (ifMatch.trim() === '*') return true;
  const current = currentTag.slice(1, -1);
  return parseTags(ifMatch)?.some((tag) => !tag.weak && tag.opaque === current) ?? false;
}

/**
 * `data` with its ETag, or a 304. Cache-Control stays no-store (account data). The 304 is sent here and undefined returned,
 * as Fastify wants of a sync handler (returning the reply would send it twice).
 */
export function answerConditionally<T>(request: FastifyRequest, reply: FastifyReply, answer: Tagged<T>): SuccessEnvelope<T> | undefined {
  reply.header('ETag', answer.etag);
  if (matchesEtag(request.headers['if-none-match'], answer.etag)) {
    reply.code(304).send();
    return undefined;
  }
  return success(answer.data);
}
