// The notices a page shows from ?notice=: the console's fixed texts only, never anything else the name happens to find.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { noticeOf } from '../../../src/console/views.ts';

function asking(notice: unknown): FastifyRequest {
  return { query: { notice } } as unknown as FastifyRequest;
}

test("?notice= shows the console's fixed texts, and nothing for a name that is none of them", () => {
  assert.equal(noticeOf(asking('created')), 'The account was created.');
  assert.equal(noticeOf(asking('signed-out')), 'You are signed out.');
  // Names every JavaScript object answers (issue 36: ?notice=constructor showed "function Object() { [native code] }").
  for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'nothing']) {
    assert.equal(noticeOf(asking(name)), null, `?notice=${name} showed something`);
  }
  assert.equal(noticeOf(asking(['created'])), null, 'a repeated ?notice= is not a notice');
  assert.equal(noticeOf({ query: undefined } as unknown as FastifyRequest), null);
});
