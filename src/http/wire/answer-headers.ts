// The headers nearly every answer carries, set straight into the reply's headers object: first the request id and the fixed
// ones of security-headers.ts, in one step; then the rate budget's three.
//
// Performance trick. Relies on: Fastify's private `kReplyHeaders` from fastify/lib/symbols.js (an upgrade may rename it;
// then, or when a header was set first, the public reply.header() is used). Guarded by:
// test/unit/http/wire/answer-headers.test.ts. Figures: docs/operations.md#answer-headers-in-one-step
//
// Why: reply.header() lower-cases each name again and stores it by a key new to the object's shape; a copy of one template
// object, in the same order, with the request id written into its slot, keeps every store on shapes it has seen.
import { createRequire } from 'node:module';
import type { FastifyReply } from 'fastify';

/** Fastify's symbol for a reply's headers object; null when a Fastify no longer has it where this looks (nor the file). */
function replyHeadersSymbol(): symbol | null {
  try {
    const internals = createRequire(import.meta.url)('fastify/lib/symbols.js') as { readonly kReplyHeaders?: unknown };
    return typeof internals.kReplyHeaders === 'symbol' ? internals.kReplyHeaders : null;
  } catch {
    return null;
  }
}

const REPLY_HEADERS = replyHeadersSymbol();

/** False when this Fastify has no headers object to copy into: every answer then takes the public way (and costs more). */
export const SETS_HEADERS_IN_ONE_STEP = REPLY_HEADERS !== null;

type HeadersObject = Record<string, string | number | string[]>;

/** The reply's headers object, or null when this Fastify keeps none where the symbol says. */
function headersOf(reply: FastifyReply): HeadersObject | null {
  if (REPLY_HEADERS === null) return null;
  const held = (reply as unknown as Record<symbol, unknown>)[REPLY_HEADERS];
  return typeof held === 'object' && held !== null ? (held as HeadersObject) : null;
}

function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

/** Sets `x-request-id` and then the fixed headers (their names in lower case, as Fastify keeps and sends them) on a reply. */
export type SetAnswerHeaders = (reply: FastifyReply, requestId: string) => void;

export function answerHeaderSetter(headers: Readonly<Record<string, string>>): SetAnswerHeaders {
  // In lower case, as reply.header() would store them: a route setting one of them again must replace it, not add a second.
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

/** RateLimit-Limit, -Remaining and -Reset (in lower case, as Fastify keeps and sends them), as `reply.header()` would set them. */
export function setBudgetHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  const headers = headersOf(reply);
  if (headers === null) {
    reply.header('ratelimit-limit', limit).header('ratelimit-remaining', remaining).header('ratelimit-reset', resetSeconds);
    return;
  }
  // As text: Node would otherwise turn each number into text twice, once to check it and once to write it.
  headers['ratelimit-limit'] = `${limit}`;
  headers['ratelimit-remaining'] = `${remaining}`;
  headers['ratelimit-reset'] = `${resetSeconds}`;
}
