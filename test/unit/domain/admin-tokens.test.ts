// Admin tokens follow the keys' format under their own prefix: checksummed, told apart from API keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adminTokenId, checkAdminTokenLabel, issueAdminToken, looksLikeAdminToken } from '../../../src/domain/admin-tokens.ts';
import { issueKey, keyMatches, parseKey } from '../../../src/domain/api-keys.ts';

test('an issued token has its own prefix, its id inside, and only its hash matches it', () => {
  const issued = issueAdminToken();
  assert.match(issued.token, /^aapi_admin_[0-9A-Za-z]{50}$/);
  assert.equal(adminTokenId(issued.token), issued.tokenId);
  assert.equal(issued.displayPrefix, `aapi_admin_${issued.tokenId}`);
  assert.ok(keyMatches(issued.token, issued.hash));
  assert.notEqual(issueAdminToken().token, issued.token);
});

test('a mistyped token fails its checksum; an API key is neither an admin token nor the reverse', () => {
  const { token } = issueAdminToken();
  const typo = token.slice(0, 30) + (token[30] === 'a' ? 'b' : 'a') + token.slice(31);
  assert.equal(adminTokenId(typo), null);
  assert.equal(adminTokenId(token.slice(0, -1)), null);
  const key = issueKey('live').token;
  assert.equal(adminTokenId(key), null);
  assert.equal(looksLikeAdminToken(key), false);
  assert.equal(parseKey(token).ok, false);
  assert.equal(looksLikeAdminToken(token), true);
});

test('a label is 1 to 100 printable characters, trimmed', () => {
  assert.equal(checkAdminTokenLabel(' billing '), 'billing');
  for (const bad of ['', '   ', 'x'.repeat(101), 'bell\u0007']) assert.equal(checkAdminTokenLabel(bad), null, JSON.stringify(bad));
});
