// Protects If-Match (RFC 9110 strong comparison) and the account ETag it is compared with.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { entityTag, ifMatchHolds } from '../../../src/http/conditional.ts';

const CURRENT = entityTag({ timezone: 'UTC' });

describe('entityTag', () => {
  test('is a strong, quoted tag that names the data: equal data alike, other data not', () => {
    assert.match(CURRENT, /^"[A-Za-z0-9_-]+"$/);
    assert.equal(entityTag({ timezone: 'UTC' }), CURRENT);
    assert.notEqual(entityTag({ timezone: 'Asia/Tokyo' }), CURRENT);
    assert.notEqual(entityTag({ timezone: 'UTC', name: 'x' }), CURRENT);
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
