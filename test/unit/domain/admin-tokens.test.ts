// Admin tokens follow the keys' format under their own prefix, one per environment: checksummed, told apart from API keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAdminTokenLabel, composeAdminToken, issueAdminToken, looksLikeAdminToken, parseAdminToken } from '../../../src/domain/admin-tokens.ts';
import { issueKey, keyMatches, parseKey, randomIdAndSecret } from '../../../src/domain/api-keys.ts';

test('an issued token has its own prefix, its id inside, and only its hash matches it', () => {
  const issued = issueAdminToken('live');
  assert.match(issued.token, /^aapi_admin_[0-9A-Za-z]{50}$/);
  assert.deepEqual(parseAdminToken(issued.token), { environment: 'live', tokenId: issued.tokenId });
  assert.equal(issued.displayPrefix, `aapi_admin_${issued.tokenId}`);
  assert.ok(keyMatches(issued.token, issued.hash));
  assert.notEqual(issueAdminToken('live').token, issued.token);
});

test('a sandbox token carries the sandbox marker, and each marker names its environment', () => {
  const sandbox = issueAdminToken('sandbox');
  assert.match(sandbox.token, /^aapi_admin_sandbox_[0-9A-Za-z]{50}$/);
  assert.deepEqual(parseAdminToken(sandbox.token), { environment: 'sandbox', tokenId: sandbox.tokenId });
  assert.equal(sandbox.displayPrefix, `aapi_admin_sandbox_${sandbox.tokenId}`);
  assert.ok(looksLikeAdminToken(sandbox.token), 'a sandbox admin token is not recognised as an admin token');
  assert.equal(parseKey(sandbox.token).ok, false);
  // The same id and secret under the other marker is another token: the checksum and the hash cover the marker.
  const { secret } = randomIdAndSecret();
  const live = composeAdminToken(sandbox.tokenId, secret, 'live');
  const relabelled = `aapi_admin_sandbox_${live.token.slice('aapi_admin_'.length)}`;
  assert.equal(parseAdminToken(relabelled), null, 'a live token relabelled as sandbox passed its checksum');
  assert.notDeepEqual(composeAdminToken(sandbox.tokenId, secret, 'sandbox').hash, live.hash);
});

test('a live token made before the sandbox marker is read as it always was', () => {
  // Made by the code before the markers (id 3kTqv9ZbW2aX, secret 32 A's): databases hold the hashes of tokens like it.
  const token = 'aapi_admin_3kTqv9ZbW2aXAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA3SNXuK';
  assert.deepEqual(parseAdminToken(token), { environment: 'live', tokenId: '3kTqv9ZbW2aX' });
  assert.equal(composeAdminToken('3kTqv9ZbW2aX', 'A'.repeat(32), 'live').token, token, 'a live token is no longer made as before');
});

test('a mistyped token fails its checksum; an API key is neither an admin token nor the reverse', () => {
  for (const environment of ['live', 'sandbox'] as const) {
    const { token } = issueAdminToken(environment);
    const at = token.length - 20;
    const typo = token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);
    assert.equal(parseAdminToken(typo), null);
    assert.equal(parseAdminToken(token.slice(0, -1)), null);
    assert.equal(parseKey(token).ok, false);
    assert.equal(looksLikeAdminToken(token), true);
  }
  for (const environment of ['live', 'sandbox'] as const) {
    const key = issueKey(environment).token;
    assert.equal(parseAdminToken(key), null);
    assert.equal(looksLikeAdminToken(key), false);
  }
});

test('a label is 1 to 100 printable characters, trimmed', () => {
  assert.equal(checkAdminTokenLabel(' billing '), 'billing');
  for (const bad of ['', '   ', 'x'.repeat(101), 'bell\u0007']) assert.equal(checkAdminTokenLabel(bad), null, JSON.stringify(bad));
});
