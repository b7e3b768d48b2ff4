// Request ids: a client's well-formed X-Request-Id is kept, anything else replaced by a random UUID; echoed on every answer.
import { randomUUID } from 'node:crypto';
import { mayHoldKey } from './key-redaction.ts';

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of a request, from its X-Request-Id header when that is one well-formed value. An id that could be an API key
 * (an `aapi_` key matches the pattern) is replaced: the id is echoed and written on every log line, a key must never be.
 */
export function requestIdFor(header: string | string[] | undefined, random: () => string = randomUUID): string {
  if (typeof header === 'string' && WELL_FORMED.test(header) && !mayHoldKey(header)) return header;
  return random();
}
