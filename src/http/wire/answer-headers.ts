// The headers nearly every answer carries, set straight into the reply's headers object: request id and fixed headers, then the budget's.
//
// Performance trick. Relies on: Fastify's private `kReplyHeaders` from fastify/lib/symbols.js (an upgrade may rename it;
// then, or when a header was set first, the public reply.header() is used). Guarded by:
// test/unit/http/wire/answer-headers.test.ts. Figures: docs/operations.md#answer-headers-in-one-step
//
// Why: reply.header() lower-cases each name and grows the object's shape per key; copying one template in order does not.
import { createRequire } from 'node:module';
import type { FastifyReply } from 'fastify';

/** Null when this Fastify no longer has it where this looks. */
function replyHeadersSymbol(): symbol | null {
  try {
    const internals = createRequire(import.meta.url)('fastify/lib/symbols.js') as { readonly kReplyHeaders?: unknown };
    return typeof internals.kReplyHeaders === 'symbol' ? internals.kReplyHeaders : null;
  } catch {
    return null;
  }
}

const REPLY_HEADERS = replyHeadersSymbol();

/** False: every answer takes the public, dearer way. */
export const SETS_HEADERS_IN_ONE_STEP = REPLY_HEADERS !== null;

type HeadersObject = Record<string, string | number | string[]>;

function headersOf(reply: FastifyReply): HeadersObject | null {
  if (REPLY_HEADERS === null) return null;
  const held = (reply as unknown as Record<symbol, unknown>)[REPLY_HEADERS];
  return typeof held === 'object' && held !== null ? (held as HeadersObject) : null;
}

function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

/** `x-request-id`, then the fixed headers (lower case, as Fastify keeps them). */
export type SetAnswerHeaders = (reply: FastifyReply, requestId: string) => void;

export function answerHeaderSetter(headers: Readonly<Record<string, string>>): SetAnswerHeaders {
  // Lower case, as reply.header() stores them, so a route setting one again replaces it.
  const fixed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const template: HeadersObject = { 'x-request-id': '', ...fixed };
  const publicWay: SetAnswerHeaders = (reply, requestId) => {
    reply.header('x-request-id', requestId);
    reply.headers(fixed);
  };
  if (REPLY_HEADERS === null) return publicWay;
  const key = REPLY_HEADERS;
  return (reply, requestId) => {
    const held = headersOf(reply);
    if (held === null || !isEmpty(held)) return publicWay(reply, requestId);
    const headers = { ...template };
    headers['x-request-id'] = requestId;
    (reply as unknown as Record<symbol, unknown>)[key] = headers;
  };
}

/** Lower case, as `reply.header()` would set them. */
export function setBudgetHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  const headers = headersOf(reply);
  if (headers === null) {
    reply.header('ratelimit-limit', limit).header('ratelimit-remaining', remaining).header('ratelimit-reset', resetSeconds);
    return;
  }
  // As text: Node would otherwise stringify each number twice.
  headers['ratelimit-limit'] = `${limit}`;
  headers['ratelimit-remaining'] = `${remaining}`;
  headers['ratelimit-reset'] = `${resetSeconds}`;
}
