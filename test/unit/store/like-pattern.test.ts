// Protects the LIKE pattern the stores search usernames by: the text's own `_`, `%` and `\` match only themselves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { likePrefix } from '../../../src/store/like-pattern.ts';

test('a prefix becomes itself followed by %, its wildcards and the escape character escaped with \\', () => {
  assert.equal(likePrefix('ali'), 'ali%');
  assert.equal(likePrefix('a_'), 'a\\_%');
  assert.equal(likePrefix('100%'), '100\\%%');
  assert.equal(likePrefix('a\\b'), 'a\\\\b%');
  assert.equal(likePrefix('a.b-c'), 'a.b-c%', '. and - are not LIKE wildcards');
});
