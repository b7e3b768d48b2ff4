// Protects If-None-Match matching (RFC 9110 weak comparison): which headers mean "you already have it" (304).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { matchesEtag } from '../../../../src/http/wire/etag.ts';

const ETAG = '"tz-2025b-8f3a"';

describe('matchesEtag', () => {
  test('does not match when there is no If-None-Match header', () => {
    assert.equal(matchesEtag(undefined, ETAG), false);
  });

  test('matches the same entity tag', () => {
    assert.equal(matchesEtag(ETAG, ETAG), true);
  });

  test('matches a weak form of the tag, and a weak current tag, by weak comparison', () => {
    assert.equal(matchesEtag(`W/${ETAG}`, ETAG), true, 'W/"..." in If-None-Match must match the strong tag');
    assert.equal(matchesEtag(ETAG, `W/${ETAG}`), true, 'a strong If-None-Match must match a weak current tag');
    assert.equal(matchesEtag(`W/${ETAG}`, `W/${ETAG}`), true);
  });

  test('matches when the tag is one of a comma-separated list', () => {
    assert.equal(matchesEtag(`"old-1", ${ETAG}, "old-2"`, ETAG), true);
    assert.equal(matchesEtag(`"old-1",W/${ETAG}`, ETAG), true, 'a list without spaces must also work');
    assert.equal(matchesEtag(`  ${ETAG}  `, ETAG), true, 'surrounding whitespace must be ignored');
  });

  test('matches * for any current representation', () => {
    assert.equal(matchesEtag('*', ETAG), true);
    assert.equal(matchesEtag(' * ', ETAG), true);
  });

  test('does not match a different tag or a list of different tags', () => {
    assert.equal(matchesEtag('"tz-2024a-0000"', ETAG), false);
    assert.equal(matchesEtag('"old-1", W/"old-2"', ETAG), false);
  });

  test('compares tags case-sensitively and with their quotes', () => {
    assert.equal(matchesEtag(ETAG.toUpperCase(), ETAG), false, 'entity tags are case-sensitive');
    assert.equal(matchesEtag(ETAG.slice(1, -1), ETAG), false, 'an unquoted value is not the same tag');
  });

  test('does not match an empty header', () => {
    assert.equal(matchesEtag('', ETAG), false);
  });
});
