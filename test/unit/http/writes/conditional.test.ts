// Protects If-Match (RFC 9110 strong comparison) and the account ETag it is compared with.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { entityTag, ifMatchHolds, taggedView } from '../../../../src/http/writes/conditional.ts';
import type { Account } from '../../../../src/store/store.ts';

const CURRENT = entityTag({ timezone: 'UTC' });

describe('entityTag', () => {
  test('is a strong, quoted tag that names the data: equal data alike, other data not', () => {
    assert.match(CURRENT, /^"[A-Za-z0-9_-]+"$/);
    assert.equal(entityTag({ timezone: 'UTC' }), CURRENT);
    assert.notEqual(entityTag({ timezone: 'Asia/Tokyo' }), CURRENT);
    assert.notEqual(entityTag({ timezone: 'UTC', name: 'x' }), CURRENT);
  });
});

describe('taggedView', () => {
  const account: Account = { id: 1, username: 'alice', name: 'Alice', timezone: 'UTC', premium: true, createdAt: '2026-01-01T00:00:00.000Z' };

  test("tags the view's data as entityTag does, and a changed account (a new object) anew", () => {
    const tagged = taggedView((a: Account) => ({ timezone: a.timezone }));
    assert.deepEqual(tagged(account), { data: { timezone: 'UTC' }, etag: CURRENT });
    assert.equal(tagged({ ...account, timezone: 'Asia/Tokyo' }).etag, entityTag({ timezone: 'Asia/Tokyo' }));
    assert.equal(tagged({ ...account, name: 'Someone else' }).etag, CURRENT, 'a change the view does not show changed its tag');
  });

  test('hashes an account object once, however many requests it answers', () => {
    let views = 0;
    const tagged = taggedView((a: Account) => ({ name: a.name, get counted() { return ++views; } }));
    tagged(account);
    tagged(account);
    tagged(account);
    assert.equal(views, 1, 'the data was serialised for hashing more than once');
  });
});

describe('ifMatchHolds', () => {
  test('holds for the current tag, alone or in a list', () => {
    assert.equal(ifMatchHolds(CURRENT, CURRENT), true);
    assert.equal(ifMatchHolds(`"old", ${CURRENT}`, CURRENT), true);
    assert.equal(ifMatchHolds(`"old",${CURRENT} ,`, CURRENT), true, 'empty list elements and tight commas are allowed');
  });

  test('holds for * whatever the current tag', () => {
    assert.equal(ifMatchHolds('*', CURRENT), true);
  });

  test('never holds for a weak tag: If-Match compares strongly', () => {
    assert.equal(ifMatchHolds(`W/${CURRENT}`, CURRENT), false);
  });

  test('does not hold for another tag', () => {
    assert.equal(ifMatchHolds('"something-else"', CURRENT), false);
  });

  test('does not hold for a field that is no list of entity-tags: unquoted, trailing junk, a lone quote', () => {
    for (const field of [CURRENT.slice(1, -1), `${CURRENT} junk`, '"', '', ',', `* , ${CURRENT}`]) {
      assert.equal(ifMatchHolds(field, CURRENT), false, `If-Match: ${field}`);
    }
  });

  test('reads a tag holding a comma as one tag', () => {
    assert.equal(ifMatchHolds('"a,b"', '"a,b"'), true);
    assert.equal(ifMatchHolds('"a,b"', '"a"'), false);
  });
});
